"""SaslHandshake (key 17), versions 0-1; never flexible.

- v0: after the handshake the SASL tokens follow as raw size-prefixed frames, outside the Kafka protocol.
- v1: the tokens travel in SaslAuthenticate (key 36) requests instead. Kafka never bumped this API again:
  clients up to 2.4 negotiate its version wrongly (KAFKA-9577).
"""

from kemu.wire.schema import F, api

API = api(
    17, "SaslHandshake", "0-1", "none",
    request=[
        F("mechanism", "string"),
    ],
    response=[
        F("error_code", "int16"),
        F("mechanisms", "[]string"),
    ],
)
