"""AlterReplicaLogDirs (key 34), versions 1-2; flexible from v2.

Moves replicas to another log directory of the broker that gets it (KIP-113). v1 is v0 on the wire (the
response may come before throttling; Kafka 4.0 removed v0, KIP-896); v2 is flexible. The response carries no
error message, only a code per partition.
"""

from kemu.wire.schema import F, api

API = api(
    34, "AlterReplicaLogDirs", "1-2", "2+",
    request=[
        F("dirs", "[]", fields=[
            F("path", "string"),
            F("topics", "[]", fields=[
                F("name", "string"),
                F("partitions", "[]int32"),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("results", "[]", fields=[
            F("topic_name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
            ]),
        ]),
    ],
)
