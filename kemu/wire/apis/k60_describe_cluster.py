"""DescribeCluster (key 60), versions 0-2; flexible in all versions.

v1 adds the endpoint type (KIP-919: 1 = brokers, 2 = controllers) to both request and response. v2 lets the
request ask for fenced brokers too, and says of each broker whether it is fenced (KIP-1073).
"""

from kemu.wire.schema import F, api

API = api(
    60, "DescribeCluster", "0-2", "0+",
    request=[
        F("include_cluster_authorized_operations", "bool"),
        F("endpoint_type", "int8", "1+", default=1),
        F("include_fenced_brokers", "bool", "2+"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("endpoint_type", "int8", "1+", default=1),
        F("cluster_id", "string"),
        F("controller_id", "int32", default=-1),
        F("brokers", "[]", fields=[
            F("broker_id", "int32"),
            F("host", "string"),
            F("port", "int32"),
            F("rack", "string", nullable="0+", default=None),
            F("is_fenced", "bool", "2+"),
        ]),
        F("cluster_authorized_operations", "int32", default=-2147483648),
    ],
)
