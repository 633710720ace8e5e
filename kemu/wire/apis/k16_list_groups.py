"""ListGroups (key 16), versions 0-5; flexible from v3.

- v1: throttle_time_ms. v2: throttled responses sent before throttling. v3: flexible.
- v4: states_filter; group_state per group (KIP-518).
- v5: types_filter; group_type per group ("classic", "consumer", ...) (KIP-848).
"""

from kemu.wire.schema import F, api

API = api(
    16, "ListGroups", "0-5", "3+",
    request=[
        F("states_filter", "[]string", "4+"),
        F("types_filter", "[]string", "5+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16"),
        F("groups", "[]", fields=[
            F("group_id", "string"),
            F("protocol_type", "string"),
            F("group_state", "string", "4+"),
            F("group_type", "string", "5+"),
        ]),
    ],
)
