"""AlterUserScramCredentials (key 51), version 0 only, flexible (KIP-554). The client sends the salted
password it computed, never the password."""

from kemu.wire.schema import F, api

API = api(
    51, "AlterUserScramCredentials", "0", "0+",
    request=[
        F("deletions", "[]", fields=[
            F("name", "string"),
            F("mechanism", "int8"),
        ]),
        F("upsertions", "[]", fields=[
            F("name", "string"),
            F("mechanism", "int8"),
            F("iterations", "int32"),
            F("salt", "bytes"),
            F("salted_password", "bytes"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("results", "[]", fields=[
            F("user", "string"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
        ]),
    ],
)
