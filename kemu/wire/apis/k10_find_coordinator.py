"""FindCoordinator (key 10), versions 0-6; flexible from v3.

- v1: key_type (0 group, 1 transaction); the response adds throttle_time_ms and error_message.
- v2: throttled responses sent before throttling. v3: flexible.
- v4: batched lookups: coordinator_keys in, coordinators[] out, replacing the single key and the
  top-level node fields (KIP-699).
- v5: TRANSACTION_ABORTABLE may be returned (KIP-890). v6: key_type 2 finds share coordinators (KIP-932).
"""

from kemu.wire.schema import F, api

API = api(
    10, "FindCoordinator", "0-6", "3+",
    request=[
        F("key", "string", "0-3"),
        F("key_type", "int8", "1+", default=0),
        F("coordinator_keys", "[]string", "4+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "0-3"),
        F("error_message", "string", "1-3", nullable="1-3"),
        F("node_id", "int32", "0-3"),
        F("host", "string", "0-3"),
        F("port", "int32", "0-3"),
        F("coordinators", "[]", "4+", fields=[
            F("key", "string", "4+"),
            F("node_id", "int32", "4+"),
            F("host", "string", "4+"),
            F("port", "int32", "4+"),
            F("error_code", "int16", "4+"),
            F("error_message", "string", "4+", nullable="4+"),
        ]),
    ],
)
