"""GetTelemetrySubscriptions (key 71), version 0; flexible (KIP-714).

The client asks with its instance id (the zero id on its first request, for the broker to assign one) and is
told its subscription: the id to push with, the metric name prefixes asked for, the push interval, the
compression types and the most bytes the broker accepts, and that counters are to be sent as deltas.
"""

from kemu.wire.schema import F, api

API = api(
    71, "GetTelemetrySubscriptions", "0", "0+",
    request=[
        F("client_instance_id", "uuid"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("client_instance_id", "uuid"),
        F("subscription_id", "int32"),
        F("accepted_compression_types", "[]int8"),
        F("push_interval_ms", "int32"),
        F("telemetry_max_bytes", "int32"),
        F("delta_temporality", "bool"),
        F("requested_metrics", "[]string"),
    ],
)
