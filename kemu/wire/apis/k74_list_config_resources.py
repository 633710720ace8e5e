"""ListConfigResources (key 74), versions 0-1; flexible in all versions.

v0 was ListClientMetricsResources: it lists the client metrics resources only. v1 adds the resource types
asked for (KIP-1142; none asked: every type v1 supports, TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS and
GROUP) and each resource's type.
"""

from kemu.wire.schema import F, api

API = api(
    74, "ListConfigResources", "0-1", "0+",
    request=[
        F("resource_types", "[]int8", "1+"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("config_resources", "[]", fields=[
            F("resource_name", "string"),
            F("resource_type", "int8", "1+", default=16),
        ]),
    ],
)
