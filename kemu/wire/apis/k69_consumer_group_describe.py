"""ConsumerGroupDescribe (key 69), versions 0-1, flexible (KIP-848).

Describes groups of the new consumer protocol: epochs, assignor, and each member's current and target
assignment. v1 adds each member's type (KIP-1099): 0 a member of the classic protocol, 1 of the consumer
protocol, -1 unknown; the request is v0's.
"""

from kemu.wire.schema import F, api

_ASSIGNMENT = [
    F("topic_partitions", "[]", fields=[
        F("topic_id", "uuid"),
        F("topic_name", "string"),
        F("partitions", "[]int32"),
    ]),
]

API = api(
    69, "ConsumerGroupDescribe", "0-1", "0+",
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
                F("instance_id", "string", nullable="0+", default=None),
                F("rack_id", "string", nullable="0+", default=None),
                F("member_epoch", "int32"),
                F("client_id", "string"),
                F("client_host", "string"),
                F("subscribed_topic_names", "[]string"),
                F("subscribed_topic_regex", "string", nullable="0+", default=None),
                F("assignment", "{}", fields=_ASSIGNMENT),
                F("target_assignment", "{}", fields=_ASSIGNMENT),
                F("member_type", "int8", "1+", default=-1),
            ]),
            F("authorized_operations", "int32", default=-2147483648),
        ]),
    ],
)
