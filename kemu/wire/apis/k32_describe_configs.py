"""DescribeConfigs (key 32), versions 0-4; flexible from v4.

v1 adds IncludeSynonyms to the request, and each config's source and synonyms to the response (v0's
`is_default` goes away); v2 is v1 on the wire (the response may come before throttling); v3 adds
IncludeDocumentation, and each config's type and documentation; v4 is flexible.
"""

from kemu.wire.schema import F, api

API = api(
    32, "DescribeConfigs", "0-4", "4+",
    request=[
        F("resources", "[]", fields=[
            F("resource_type", "int8"),
            F("resource_name", "string"),
            F("configuration_keys", "[]string", nullable="0+"),
        ]),
        F("include_synonyms", "bool", "1+", default=False),
        F("include_documentation", "bool", "3+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("results", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+"),
            F("resource_type", "int8"),
            F("resource_name", "string"),
            F("configs", "[]", fields=[
                F("name", "string"),
                F("value", "string", nullable="0+"),
                F("read_only", "bool"),
                F("is_default", "bool", "0"),
                # -1 is a placeholder: what v0 callers should see depends on the resource described.
                F("config_source", "int8", "1+", default=-1),
                F("is_sensitive", "bool"),
                F("synonyms", "[]", "1+", fields=[
                    F("name", "string", "1+"),
                    F("value", "string", "1+", nullable="0+"),
                    F("source", "int8", "1+"),
                ]),
                F("config_type", "int8", "3+", default=0),
                F("documentation", "string", "3+", nullable="0+"),
            ]),
        ]),
    ],
)
