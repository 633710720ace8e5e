"""DeleteAcls (key 31), versions 0-3; flexible from v2.

v1 adds the pattern type; v2 is flexible; v3 allows the USER resource type.
"""

from kemu.wire.schema import F, api

API = api(
    31, "DeleteAcls", "0-3", "2+",
    request=[
        F("filters", "[]", fields=[
            F("resource_type_filter", "int8"),
            F("resource_name_filter", "string", nullable="0+"),
            F("pattern_type_filter", "int8", "1+", default=3),
            F("principal_filter", "string", nullable="0+"),
            F("host_filter", "string", nullable="0+"),
            F("operation", "int8"),
            F("permission_type", "int8"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("filter_results", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F("matching_acls", "[]", fields=[
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
                F("resource_type", "int8"),
                F("resource_name", "string"),
                F("pattern_type", "int8", "1+", default=3),
                F("principal", "string"),
                F("host", "string"),
                F("operation", "int8"),
                F("permission_type", "int8"),
            ]),
        ]),
    ],
)
