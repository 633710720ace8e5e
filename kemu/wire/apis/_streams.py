"""The structs StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89) both declare (KIP-1071): Kafka's two
message specs repeat them as common structs of the same fields."""

from kemu.wire.schema import F

KEY_VALUE = [
    F("key", "string"),
    F("value", "string"),
]
TOPIC_INFO = [
    F("name", "string"),
    F("partitions", "int32"),
    F("replication_factor", "int16"),
    F("topic_configs", "[]", fields=KEY_VALUE),
]
ENDPOINT = [
    F("host", "string"),
    F("port", "uint16"),
]
TASK_OFFSET = [
    F("subtopology_id", "string"),
    F("partition", "int32"),
    F("offset", "int64"),
]
TASK_IDS = [
    F("subtopology_id", "string"),
    F("partitions", "[]int32"),
]
