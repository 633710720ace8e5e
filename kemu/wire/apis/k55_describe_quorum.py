"""DescribeQuorum (key 55), versions 0-2; flexible in all versions.

v1 adds last_fetch_timestamp and last_caught_up_timestamp to each replica state (KIP-836); v2 adds the
error messages, each replica's directory id and the voters' controller listeners, `nodes` (KIP-853). The
request is the same in every version. The response has no throttle time.
"""

from kemu.wire.schema import F, api

_REPLICA_STATE = [
    F("replica_id", "int32"),
    F("replica_directory_id", "uuid", "2+"),
    F("log_end_offset", "int64"),
    F("last_fetch_timestamp", "int64", "1+", default=-1),
    F("last_caught_up_timestamp", "int64", "1+", default=-1),
]

API = api(
    55, "DescribeQuorum", "0-2", "0+",
    request=[
        F("topics", "[]", fields=[
            F("topic_name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
            ]),
        ]),
    ],
    response=[
        F("error_code", "int16"),
        F("error_message", "string", "2+", nullable="2+", default=""),
        F("topics", "[]", fields=[
            F("topic_name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("error_message", "string", "2+", nullable="2+", default=""),
                F("leader_id", "int32"),
                F("leader_epoch", "int32"),
                F("high_watermark", "int64"),
                F("current_voters", "[]", fields=_REPLICA_STATE),
                F("observers", "[]", fields=_REPLICA_STATE),
            ]),
        ]),
        F("nodes", "[]", "2+", fields=[
            F("node_id", "int32", "2+"),
            F("listeners", "[]", "2+", fields=[
                F("name", "string", "2+"),
                F("host", "string", "2+"),
                F("port", "uint16", "2+"),
            ]),
        ]),
    ],
)
