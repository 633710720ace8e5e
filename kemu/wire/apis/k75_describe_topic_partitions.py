"""DescribeTopicPartitions (key 75), version 0; flexible throughout (KIP-966).

Metadata's topic half, paged: at most `response_partition_limit` partitions per answer, the rest found
through the cursor. Partitions carry the eligible leader replicas and the last known ELR.
"""

from kemu.wire.schema import F, api

_CURSOR = [
    F("topic_name", "string"),
    F("partition_index", "int32"),
]

API = api(
    75, "DescribeTopicPartitions", "0", "0+",
    request=[
        F("topics", "[]", fields=[
            F("name", "string"),
        ]),
        F("response_partition_limit", "int32", default=2000),
        F("cursor", "{}", nullable="0+", default=None, fields=_CURSOR),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("topics", "[]", fields=[
            F("error_code", "int16"),
            F("name", "string", nullable="0+"),
            F("topic_id", "uuid"),
            F("is_internal", "bool", default=False),
            F("partitions", "[]", fields=[
                F("error_code", "int16"),
                F("partition_index", "int32"),
                F("leader_id", "int32"),
                F("leader_epoch", "int32", default=-1),
                F("replica_nodes", "[]int32"),
                F("isr_nodes", "[]int32"),
                F("eligible_leader_replicas", "[]int32", nullable="0+", default=None),
                F("last_known_elr", "[]int32", nullable="0+", default=None),
                F("offline_replicas", "[]int32"),
            ]),
            F("topic_authorized_operations", "int32", default=-2147483648),
        ]),
        F("next_cursor", "{}", nullable="0+", default=None, fields=_CURSOR),
    ],
)
