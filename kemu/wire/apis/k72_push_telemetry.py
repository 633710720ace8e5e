"""PushTelemetry (key 72), version 0; flexible (KIP-714).

The client pushes its metrics, an OTLP MetricsData protobuf compressed with one of the accepted types, under
the subscription id it was given; its last push before closing says it is terminating.
"""

from kemu.wire.schema import F, api

API = api(
    72, "PushTelemetry", "0", "0+",
    request=[
        F("client_instance_id", "uuid"),
        F("subscription_id", "int32"),
        F("terminating", "bool"),
        F("compression_type", "int8"),
        F("metrics", "bytes"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
    ],
)
