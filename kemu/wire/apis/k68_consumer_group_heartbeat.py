"""ConsumerGroupHeartbeat (key 68), versions 0-1; flexible from v0 (KIP-848, the new consumer protocol).

v1 adds the subscribed topic regex to the request, and INVALID_SUBSCRIPTION_REGEX; Kafka marks v1 unstable.
Most request fields are null when unchanged since the member's last heartbeat.
"""

from kemu.wire.schema import F, api

_TOPIC_PARTITIONS = [
    F("topic_id", "uuid"),
    F("partitions", "[]int32"),
]

API = api(
    68, "ConsumerGroupHeartbeat", "0-1", "0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("member_epoch", "int32"),
        F("instance_id", "string", nullable="0+", default=None),
        F("rack_id", "string", nullable="0+", default=None),
        F("rebalance_timeout_ms", "int32", default=-1),
        F("subscribed_topic_names", "[]string", nullable="0+", default=None),
        F("subscribed_topic_regex", "string", "1+", nullable="1+", default=None),
        F("server_assignor", "string", nullable="0+", default=None),
        F("topic_partitions", "[]", nullable="0+", default=None, fields=_TOPIC_PARTITIONS),
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
