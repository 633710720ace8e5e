"""ShareGroupHeartbeat (key 76), version 1; flexible (KIP-932, share groups).

Kafka 4.3 serves v1 only, the first stable version (v0 was the early-access one, dropped). A share member
joins with epoch 0 and leaves with -1; rack and subscription are null when unchanged since its last
heartbeat. The assignment names topics by id. Unlike ConsumerGroupHeartbeat there is no instance id,
rebalance timeout, assignor or regex.
"""

from kemu.wire.schema import F, api

_TOPIC_PARTITIONS = [
    F("topic_id", "uuid"),
    F("partitions", "[]int32"),
]

API = api(
    76, "ShareGroupHeartbeat", "1", "0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("rack_id", "string", nullable="0+", default=None),
        F("subscribed_topic_names", "[]string", nullable="0+", default=None),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("member_id", "string", nullable="0+", default=None),
        F("member_epoch", "int32"),
        F("heartbeat_interval_ms", "int32"),
        F("assignment", "{}", nullable="0+", default=None, fields=[
            F("topic_partitions", "[]", fields=_TOPIC_PARTITIONS),
        ]),
    ],
)
