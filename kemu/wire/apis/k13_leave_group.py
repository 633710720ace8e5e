"""LeaveGroup (key 13), versions 0-5; flexible from v4.

- v1: throttle_time_ms. v2: throttled responses sent before throttling.
- v3: batched: members[] (member id + group instance id) replaces the single member_id, with a result per
  member in the response (KIP-345).
- v4: flexible. v5: a reason per member (KIP-800).
"""

from kemu.wire.schema import F, api

API = api(
    13, "LeaveGroup", "0-5", "4+",
    request=[
        F("group_id", "string"),
        F("member_id", "string", "0-2"),
        F("members", "[]", "3+", fields=[
            F("member_id", "string", "3+"),
            F("group_instance_id", "string", "3+", nullable="3+", default=None),
            F("reason", "string", "5+", nullable="5+", default=None),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16"),
        F("members", "[]", "3+", fields=[
            F("member_id", "string", "3+"),
            F("group_instance_id", "string", "3+", nullable="3+"),
            F("error_code", "int16", "3+"),
        ]),
    ],
)
