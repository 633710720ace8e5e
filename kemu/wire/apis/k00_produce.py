"""Produce (key 0), versions 0-13; flexible from v9.

- v1-v2: same request; the response gains throttle_time_ms (v1) and log_append_time_ms (v2).
- v3: transactional_id; the first version carrying message format v2 (record batches).
- v4: may answer KAFKA_STORAGE_ERROR. v5: the response carries log_start_offset. v6: same as v5.
- v7: ZStandard-compressed batches allowed (KIP-110).
- v8: per-record errors (record_errors) and error_message in the response (KIP-467).
- v9: flexible. v10: tagged current_leader per partition and node_endpoints for NOT_LEADER_OR_FOLLOWER
  answers (KIP-951). v11: TRANSACTION_ABORTABLE may be returned (KIP-890).
- v12: v11 on the wire; a transactional Produce of v12+ comes from a transactions-version-2 client, whose
  partitions the broker adds to the transaction itself (KIP-890 part 2). v13: topic ids replace topic names
  both ways (KIP-516); UNKNOWN_TOPIC_ID.
"""

from kemu.wire.schema import F, api

API = api(
    0, "Produce", "0-13", "9+",
    request=[
        F("transactional_id", "string", "3+", nullable="3+", default=None),
        F("acks", "int16"),
        F("timeout_ms", "int32"),
        F("topic_data", "[]", fields=[
            F("name", "string", "0-12"),
            F("topic_id", "uuid", "13+"),
            F("partition_data", "[]", fields=[
                F("index", "int32"),
                F("records", "records", nullable="0+"),
            ]),
        ]),
    ],
    response=[
        F("responses", "[]", fields=[
            F("name", "string", "0-12"),
            F("topic_id", "uuid", "13+"),
            F("partition_responses", "[]", fields=[
                F("index", "int32"),
                F("error_code", "int16"),
                F("base_offset", "int64"),
                F("log_append_time_ms", "int64", "2+", default=-1),
                F("log_start_offset", "int64", "5+", default=-1),
                F("record_errors", "[]", "8+", fields=[
                    F("batch_index", "int32", "8+"),
                    F("batch_index_error_message", "string", "8+", nullable="8+", default=None),
                ]),
                F("error_message", "string", "8+", nullable="8+", default=None),
                F("current_leader", "{}", "10+", tag=0, tagged="10+", fields=[
                    F("leader_id", "int32", "10+", default=-1),
                    F("leader_epoch", "int32", "10+", default=-1),
                ]),
            ]),
        ]),
        F("throttle_time_ms", "int32", "1+", default=0),
        F("node_endpoints", "[]", "10+", tag=0, tagged="10+", fields=[
            F("node_id", "int32", "10+"),
            F("host", "string", "10+"),
            F("port", "int32", "10+"),
            F("rack", "string", "10+", nullable="10+", default=None),
        ]),
    ],
)
