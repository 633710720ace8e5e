"""ShareGroupDescribe (key 77), version 1; flexible (KIP-932, share groups).

Kafka 4.3 serves v1 only, the first stable version. Like ConsumerGroupDescribe without instance ids,
regexes, target assignments or member types: a share group's members have only their current assignment.
"""

from kemu.wire.schema import F, api

API = api(
    77, "ShareGroupDescribe", "1", "0+",
    request=[
        F("group_ids", "[]string"),
        F("include_authorized_operations", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("groups", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F("group_id", "string"),
            F("group_state", "string"),
            F("group_epoch", "int32"),
            F("assignment_epoch", "int32"),
            F("assignor_name", "string"),
            F("members", "[]", fields=[
                F("member_id", "string"),
                F("rack_id", "string", nullable="0+", default=None),
                F("member_epoch", "int32"),
                F("client_id", "string"),
                F("client_host", "string"),
                F("subscribed_topic_names", "[]string"),
                F("assignment", "{}", fields=[
                    F("topic_partitions", "[]", fields=[
                        F("topic_id", "uuid"),
                        F("topic_name", "string"),
                        F("partitions", "[]int32"),
                    ]),
                ]),
            ]),
            F("authorized_operations", "int32", default=-2147483648),
        ]),
    ],
)
