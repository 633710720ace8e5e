"""ExpireDelegationToken (key 40), versions 1-2 (Kafka 4 removed v0; v1 is the same); flexible from v2."""

from kemu.wire.schema import F, api

API = api(
    40, "ExpireDelegationToken", "1-2", "2+",
    request=[
        F("hmac", "bytes"),
        F("expiry_time_period_ms", "int64"),
    ],
    response=[
        F("error_code", "int16"),
        F("expiry_timestamp_ms", "int64"),
        F("throttle_time_ms", "int32"),
    ],
)
