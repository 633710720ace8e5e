"""DescribeDelegationToken (key 41), versions 1-3 (Kafka 4 removed v0; v1 is the same); flexible from v2.

Owners null: every token the requester may see; an empty list: none. v3 adds each token's requester.
"""

from kemu.wire.schema import F, api

API = api(
    41, "DescribeDelegationToken", "1-3", "2+",
    request=[
        F("owners", "[]", nullable="0+", fields=[
            F("principal_type", "string"),
            F("principal_name", "string"),
        ]),
    ],
    response=[
        F("error_code", "int16"),
        F("tokens", "[]", fields=[
            F("principal_type", "string"),
            F("principal_name", "string"),
            F("token_requester_principal_type", "string", "3+"),
            F("token_requester_principal_name", "string", "3+"),
            F("issue_timestamp", "int64"),
            F("expiry_timestamp", "int64"),
            F("max_timestamp", "int64"),
            F("token_id", "string"),
            F("hmac", "bytes"),
            F("renewers", "[]", fields=[
                F("principal_type", "string"),
                F("principal_name", "string"),
            ]),
        ]),
        F("throttle_time_ms", "int32"),
    ],
)
