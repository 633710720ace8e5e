"""DescribeClientQuotas (key 48), versions 0-1 (KIP-546); v1 is flexible."""

from kemu.wire.schema import F, api

API = api(
    48, "DescribeClientQuotas", "0-1", "1+",
    request=[
        F("components", "[]", fields=[
            F("entity_type", "string"),
            F("match_type", "int8"),
            F("match", "string", nullable="0+"),
        ]),
        F("strict", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("entries", "[]", nullable="0+", fields=[
            F("entity", "[]", fields=[
                F("entity_type", "string"),
                F("entity_name", "string", nullable="0+"),
            ]),
            F("values", "[]", fields=[
                F("key", "string"),
                F("value", "float64"),
            ]),
        ]),
    ],
)
