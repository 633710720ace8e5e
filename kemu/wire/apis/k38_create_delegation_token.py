"""CreateDelegationToken (key 38), versions 1-3 (Kafka 4 removed v0; v1 is the same); flexible from v2.

v3 adds the owner the token is created for (owner_principal_type/name, null: the requester) and, in the
response, the requester (KIP-373).
"""

from kemu.wire.schema import F, api

API = api(
    38, "CreateDelegationToken", "1-3", "2+",
    request=[
        F("owner_principal_type", "string", "3+", nullable="3+"),
        F("owner_principal_name", "string", "3+", nullable="3+"),
        F("renewers", "[]", fields=[
            F("principal_type", "string"),
            F("principal_name", "string"),
        ]),
        F("max_lifetime_ms", "int64"),
    ],
    response=[
        F("error_code", "int16"),
        F("principal_type", "string"),
        F("principal_name", "string"),
        F("token_requester_principal_type", "string", "3+"),
        F("token_requester_principal_name", "string", "3+"),
        F("issue_timestamp_ms", "int64"),
        F("expiry_timestamp_ms", "int64"),
        F("max_timestamp_ms", "int64"),
        F("token_id", "string"),
        F("hmac", "bytes"),
        F("throttle_time_ms", "int32"),
    ],
)
