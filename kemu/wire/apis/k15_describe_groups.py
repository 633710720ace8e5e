"""DescribeGroups (key 15), versions 0-6; flexible from v5.

- v1: throttle_time_ms. v2: throttled responses sent before throttling.
- v3: include_authorized_operations; authorized_operations per group (INT32_MIN when not asked for).
- v4: group_instance_id per member. v5: flexible.
- v6: error_message per group; an unknown group is GROUP_ID_NOT_FOUND instead of Dead with no error (KIP-1043).
"""

from kemu.wire.schema import F, api

API = api(
    15, "DescribeGroups", "0-6", "5+",
    request=[
        F("groups", "[]string"),
        F("include_authorized_operations", "bool", "3+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("groups", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", "6+", nullable="6+", default=None),
            F("group_id", "string"),
            F("group_state", "string"),
            F("protocol_type", "string"),
            F("protocol_data", "string"),
            F("members", "[]", fields=[
                F("member_id", "string"),
                F("group_instance_id", "string", "4+", nullable="4+", default=None),
                F("client_id", "string"),
                F("client_host", "string"),
                F("member_metadata", "bytes"),
                F("member_assignment", "bytes"),
            ]),
            F("authorized_operations", "int32", "3+", default=-2147483648),
        ]),
    ],
)
