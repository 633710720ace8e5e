"""DescribeShareGroupOffsets (key 90), versions 0-1; flexible (KIP-932, share groups).

- v0: each group's share-partition start offsets (SPSO) and leader epochs, for the topics named or, with
  topics null, for every share-partition of the group.
- v1: the lag of each share-partition (KIP-1226), -1 where it is not known.
"""

from kemu.wire.schema import F, api

API = api(
    90, "DescribeShareGroupOffsets", "0-1", "0+",
    request=[
        F("groups", "[]", fields=[
            F("group_id", "string"),
            F("topics", "[]", nullable="0+", fields=[
                F("topic_name", "string"),
                F("partitions", "[]int32"),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("groups", "[]", fields=[
            F("group_id", "string"),
            F("topics", "[]", fields=[
                F("topic_name", "string"),
                F("topic_id", "uuid"),
                F("partitions", "[]", fields=[
                    F("partition_index", "int32"),
                    F("start_offset", "int64"),
                    F("leader_epoch", "int32"),
                    F("lag", "int64", "1+", default=-1),
                    F("error_code", "int16"),
                    F("error_message", "string", nullable="0+", default=None),
                ]),
            ]),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
        ]),
    ],
)
