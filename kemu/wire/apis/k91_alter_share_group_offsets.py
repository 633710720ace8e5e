"""AlterShareGroupOffsets (key 91), version 0; flexible (KIP-932, share groups).

Sets the share-partition start offset of a share group's partitions; Kafka allows it only while the group
has no members.
"""

from kemu.wire.schema import F, api

API = api(
    91, "AlterShareGroupOffsets", "0", "0+",
    request=[
        F("group_id", "string"),
        F("topics", "[]", fields=[
            F("topic_name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("start_offset", "int64"),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("responses", "[]", fields=[
            F("topic_name", "string"),
            F("topic_id", "uuid"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
            ]),
        ]),
    ],
)
