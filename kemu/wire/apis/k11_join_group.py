"""JoinGroup (key 11), versions 0-9; flexible from v6.

- v1: rebalance_timeout_ms (absent, the session timeout stands in for it). v2: throttle_time_ms.
- v3: throttled responses sent before throttling.
- v4: a member joining with an empty member id is answered MEMBER_ID_REQUIRED with its new id and must
  join again with it (KIP-394).
- v5: group_instance_id for static membership (KIP-345). v6: flexible.
- v7: the response names protocol_type; protocol_name may be null (KIP-559).
- v8: reason (KIP-800). v9: skip_assignment in the response.
"""

from kemu.wire.schema import F, api

API = api(
    11, "JoinGroup", "0-9", "6+",
    request=[
        F("group_id", "string"),
        F("session_timeout_ms", "int32"),
        F("rebalance_timeout_ms", "int32", "1+", default=-1),
        F("member_id", "string"),
        F("group_instance_id", "string", "5+", nullable="5+", default=None),
        F("protocol_type", "string"),
        F("protocols", "[]", fields=[
            F("name", "string"),
            F("metadata", "bytes"),
        ]),
        F("reason", "string", "8+", nullable="8+", default=None),
    ],
    response=[
        F("throttle_time_ms", "int32", "2+"),
        F("error_code", "int16"),
        F("generation_id", "int32", default=-1),
        F("protocol_type", "string", "7+", nullable="7+", default=None),
        F("protocol_name", "string", nullable="7+"),
        F("leader", "string"),
        F("skip_assignment", "bool", "9+", default=False),
        F("member_id", "string"),
        F("members", "[]", fields=[
            F("member_id", "string"),
            F("group_instance_id", "string", "5+", nullable="5+", default=None),
            F("metadata", "bytes"),
        ]),
    ],
)
