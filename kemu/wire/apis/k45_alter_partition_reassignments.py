"""AlterPartitionReassignments (key 45), versions 0-1; flexible.

v1 lets the request refuse a change of replication factor (KIP-860), and the response echoes the choice.
"""

from kemu.wire.schema import F, api

API = api(
    45, "AlterPartitionReassignments", "0-1", "0+",
    request=[
        F("timeout_ms", "int32", default=60000),
        F("allow_replication_factor_change", "bool", "1+", default=True),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("replicas", "[]int32", nullable="0+", default=None),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("allow_replication_factor_change", "bool", "1+", default=True),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("responses", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
            ]),
        ]),
    ],
)
