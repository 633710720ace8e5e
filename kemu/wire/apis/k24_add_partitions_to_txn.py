"""AddPartitionsToTxn (key 24), versions 0-5; flexible from v3.

Two shapes share this key. v0-3 are the client form: one transaction (the `v3_and_below_*` fields) and its
topics, answered per topic. v4+ is the broker-side batched form (KIP-890): `transactions`, each with its own
producer and a `verify_only` flag, answered per transaction with a top-level error code. Clients use v0-3 only.
v2 allows PRODUCER_FENCED; v3 is flexible; v5 allows TRANSACTION_ABORTABLE.
"""

from kemu.wire.schema import F, api

_TOPIC = [
    F("name", "string"),
    F("partitions", "[]int32"),
]

_PARTITION_RESULT = [
    F("partition_index", "int32"),
    F("partition_error_code", "int16"),
]

_TOPIC_RESULT = [
    F("name", "string"),
    F("results_by_partition", "[]", fields=_PARTITION_RESULT),
]

API = api(
    24, "AddPartitionsToTxn", "0-5", "3+",
    request=[
        F("transactions", "[]", "4+", fields=[
            F("transactional_id", "string", "4+"),
            F("producer_id", "int64", "4+"),
            F("producer_epoch", "int16", "4+"),
            F("verify_only", "bool", "4+", default=False),
            F("topics", "[]", "4+", fields=_TOPIC),
        ]),
        F("v3_and_below_transactional_id", "string", "0-3"),
        F("v3_and_below_producer_id", "int64", "0-3"),
        F("v3_and_below_producer_epoch", "int16", "0-3"),
        F("v3_and_below_topics", "[]", "0-3", fields=_TOPIC),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16", "4+"),
        F("results_by_transaction", "[]", "4+", fields=[
            F("transactional_id", "string", "4+"),
            F("topic_results", "[]", "4+", fields=_TOPIC_RESULT),
        ]),
        F("results_by_topic_v3_and_below", "[]", "0-3", fields=_TOPIC_RESULT),
    ],
)
