"""Metadata (key 3), versions 0-13; flexible from v9.

v1 adds racks, the controller and is_internal; v2 the cluster id; v3 throttle time; v4 lets the client
refuse auto-creation; v5 offline replicas; v7 leader epochs; v8 authorized operations; v10 topic ids (which
v12 finally allows a request to look topics up by, with a null name); v13 a top-level error code (for
REBOOTSTRAP_REQUIRED, KIP-1102).
"""

from kemu.wire.schema import F, api

API = api(
    3, "Metadata", "0-13", "9+",
    request=[
        F("topics", "[]", nullable="1+", fields=[
            F("topic_id", "uuid", "10+"),
            F("name", "string", nullable="10+"),
        ]),
        F("allow_auto_topic_creation", "bool", "4+", default=True),
        F("include_cluster_authorized_operations", "bool", "8-10"),
        F("include_topic_authorized_operations", "bool", "8+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "3+"),
        F("brokers", "[]", fields=[
            F("node_id", "int32"),
            F("host", "string"),
            F("port", "int32"),
            F("rack", "string", "1+", nullable="1+", default=None),
        ]),
        F("cluster_id", "string", "2+", nullable="2+", default=None),
        F("controller_id", "int32", "1+", default=-1),
        F("topics", "[]", fields=[
            F("error_code", "int16"),
            F("name", "string", nullable="12+"),
            F("topic_id", "uuid", "10+"),
            F("is_internal", "bool", "1+", default=False),
            F("partitions", "[]", fields=[
                F("error_code", "int16"),
                F("partition_index", "int32"),
                F("leader_id", "int32"),
                F("leader_epoch", "int32", "7+", default=-1),
                F("replica_nodes", "[]int32"),
                F("isr_nodes", "[]int32"),
                F("offline_replicas", "[]int32", "5+"),
            ]),
            F("topic_authorized_operations", "int32", "8+", default=-2147483648),
        ]),
        F("cluster_authorized_operations", "int32", "8-10", default=-2147483648),
        F("error_code", "int16", "13+"),
    ],
)
