"""IncrementalAlterConfigs (key 44), versions 0-1; flexible from v1.

Each config carries its operation (0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT); v1 only switches to the flexible
encoding.
"""

from kemu.wire.schema import F, api

API = api(
    44, "IncrementalAlterConfigs", "0-1", "1+",
    request=[
        F("resources", "[]", fields=[
            F("resource_type", "int8"),
            F("resource_name", "string"),
            F("configs", "[]", fields=[
                F("name", "string"),
                F("config_operation", "int8"),
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
