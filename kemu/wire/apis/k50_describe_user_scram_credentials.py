"""DescribeUserScramCredentials (key 50), version 0 only, flexible (KIP-554)."""

from kemu.wire.schema import F, api

API = api(
    50, "DescribeUserScramCredentials", "0", "0+",
    request=[
        F("users", "[]", nullable="0+", fields=[
            F("name", "string"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("results", "[]", fields=[
            F("user", "string"),
            F("error_code", "int16"),
            F("error_message", "string", nullable="0+", default=None),
            F("credential_infos", "[]", fields=[
                F("mechanism", "int8"),
                F("iterations", "int32"),
            ]),
        ]),
    ],
)
