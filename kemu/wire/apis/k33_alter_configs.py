"""AlterConfigs (key 33), versions 0-2; flexible from v2.

The legacy, whole-resource replacement (IncrementalAlterConfigs, key 44, is the incremental one). v1 is v0 on
the wire (the response may come before throttling); v2 is flexible.
"""

from kemu.wire.schema import F, api

API = api(
    33, "AlterConfigs", "0-2", "2+",
    request=[
        F("resources", "[]", fields=[
            F("resource_type", "int8"),
            F("resource_name", "string"),
            F("configs", "[]", fields=[
                F("name", "string"),
                F("value", "string", nullable="0+"),
            ]),
        ]),
        F("validate_only", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("responses", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+"),
            F("resource_type", "int8"),
            F("resource_name", "string"),
        ]),
    ],
)
