"""DeleteGroups (key 42), versions 0-2; flexible from v2.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible.
"""

from kemu.wire.schema import F, api

API = api(
    42, "DeleteGroups", "0-2", "2+",
    request=[
        F("groups_names", "[]string"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("results", "[]", fields=[
            F("group_id", "string"),
            F("error_code", "int16"),
        ]),
    ],
)
