"""ListPartitionReassignments (key 46), version 0; flexible."""

from kemu.wire.schema import F, api

API = api(
    46, "ListPartitionReassignments", "0", "0+",
    request=[
        F("timeout_ms", "int32", default=60000),
        F("topics", "[]", nullable="0+", default=None, fields=[
            F("name", "string"),
            F("partition_indexes", "[]int32"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("replicas", "[]int32"),
                F("adding_replicas", "[]int32"),
                F("removing_replicas", "[]int32"),
            ]),
        ]),
    ],
)
