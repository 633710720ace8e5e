"""AlterClientQuotas (key 49), versions 0-1 (KIP-546); v1 is flexible."""

from kemu.wire.schema import F, api

API = api(
    49, "AlterClientQuotas", "0-1", "1+",
    request=[
        F("entries", "[]", fields=[
            F("entity", "[]", fields=[
                F("entity_type", "string"),
                F("entity_name", "string", nullable="0+"),
            ]),
            F("ops", "[]", fields=[
                F("key", "string"),
                F("value", "float64"),
                F("remove", "bool"),
            ]),
        ]),
        F("validate_only", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("entries", "[]", fields=[
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F("entity", "[]", fields=[
                F("entity_type", "string"),
                F("entity_name", "string", nullable="0+"),
            ]),
        ]),
    ],
)
