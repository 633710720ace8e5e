"""SaslAuthenticate (key 36), versions 0-2; flexible from v2.

v1 adds the session lifetime to the response (KIP-368 re-authentication); v2 is flexible.
"""

from kemu.wire.schema import F, api

API = api(
    36, "SaslAuthenticate", "0-2", "2+",
    request=[
        F("auth_bytes", "bytes"),
    ],
    response=[
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+"),
        F("auth_bytes", "bytes"),
        F("session_lifetime_ms", "int64", "1+", default=0),
    ],
)
