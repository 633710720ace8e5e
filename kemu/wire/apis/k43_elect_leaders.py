"""ElectLeaders (key 43), versions 0-2; flexible from v2.

v1 adds the election type (0 preferred, 1 unclean) and a top-level error code; v0 elects the preferred
replica only.
"""

from kemu.wire.schema import F, api

API = api(
    43, "ElectLeaders", "0-2", "2+",
    request=[
        F("election_type", "int8", "1+", default=0),
        F("topic_partitions", "[]", nullable="0+", fields=[
            F("topic", "string"),
            F("partitions", "[]int32"),
        ]),
        F("timeout_ms", "int32", default=60000),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16", "1+", default=0),
        F("replica_election_results", "[]", fields=[
            F("topic", "string"),
            F("partition_result", "[]", fields=[
                F("partition_id", "int32"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
            ]),
        ]),
    ],
)
