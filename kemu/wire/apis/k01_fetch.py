"""Fetch (key 1), versions 0-18; flexible from v12.

- v1: throttle_time_ms in the response. v2: message format v1 may be returned. v3: request max_bytes;
  partitions are served in request order.
- v4: isolation_level; last_stable_offset and aborted_transactions in the response (transactions).
- v5: log_start_offset both ways. v6: may answer KAFKA_STORAGE_ERROR.
- v7: incremental fetch sessions (session_id, session_epoch, forgotten_topics_data; top-level error_code).
- v8: throttled responses are sent before throttling. v9: current_leader_epoch (KIP-320).
- v10: ZStandard data may be returned. v11: rack_id and preferred_read_replica (KIP-392).
- v12: flexible; last_fetched_epoch; tagged cluster_id, diverging_epoch, current_leader, snapshot_id.
- v13: topic ids replace topic names (KIP-516). v14: OFFSET_MOVED_TO_TIERED_STORAGE (KIP-405).
- v15: replica_id moves into the tagged replica_state (KIP-903). v16: tagged node_endpoints (KIP-951).
- v17: tagged replica_directory_id per partition (KIP-853).
- v18: tagged high_watermark per partition, the one the fetching replica knows (KIP-1166); the response
  is as v17's.
"""

from kemu.wire.schema import F, api

API = api(
    1, "Fetch", "0-18", "12+",
    request=[
        F("cluster_id", "string", "12+", nullable="12+", tag=0, tagged="12+", default=None),
        F("replica_id", "int32", "0-14", default=-1),
        F("replica_state", "{}", "15+", tag=1, tagged="15+", fields=[
            F("replica_id", "int32", "15+", default=-1),
            F("replica_epoch", "int64", "15+", default=-1),
        ]),
        F("max_wait_ms", "int32"),
        F("min_bytes", "int32"),
        F("max_bytes", "int32", "3+", default=0x7FFFFFFF),
        F("isolation_level", "int8", "4+", default=0),
        F("session_id", "int32", "7+", default=0),
        F("session_epoch", "int32", "7+", default=-1),
        F("topics", "[]", fields=[
            F("topic", "string", "0-12"),
            F("topic_id", "uuid", "13+"),
            F("partitions", "[]", fields=[
                F("partition", "int32"),
                F("current_leader_epoch", "int32", "9+", default=-1),
                F("fetch_offset", "int64"),
                F("last_fetched_epoch", "int32", "12+", default=-1),
                F("log_start_offset", "int64", "5+", default=-1),
                F("partition_max_bytes", "int32"),
                F("replica_directory_id", "uuid", "17+", tag=0, tagged="17+"),
                F("high_watermark", "int64", "18+", tag=1, tagged="18+", default=0x7FFFFFFFFFFFFFFF),
            ]),
        ]),
        F("forgotten_topics_data", "[]", "7+", fields=[
            F("topic", "string", "7-12"),
            F("topic_id", "uuid", "13+"),
            F("partitions", "[]int32", "7+"),
        ]),
        F("rack_id", "string", "11+", default=""),
    ],
    response=[
        F("throttle_time_ms", "int32", "1+"),
        F("error_code", "int16", "7+"),
        F("session_id", "int32", "7+", default=0),
        F("responses", "[]", fields=[
            F("topic", "string", "0-12"),
            F("topic_id", "uuid", "13+"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("high_watermark", "int64"),
                F("last_stable_offset", "int64", "4+", default=-1),
                F("log_start_offset", "int64", "5+", default=-1),
                F("diverging_epoch", "{}", "12+", tag=0, tagged="12+", fields=[
                    F("epoch", "int32", "12+", default=-1),
                    F("end_offset", "int64", "12+", default=-1),
                ]),
                F("current_leader", "{}", "12+", tag=1, tagged="12+", fields=[
                    F("leader_id", "int32", "12+", default=-1),
                    F("leader_epoch", "int32", "12+", default=-1),
                ]),
                F("snapshot_id", "{}", "12+", tag=2, tagged="12+", fields=[
                    F("end_offset", "int64", "0+", default=-1),
                    F("epoch", "int32", "0+", default=-1),
                ]),
                F("aborted_transactions", "[]", "4+", nullable="4+", fields=[
                    F("producer_id", "int64", "4+"),
                    F("first_offset", "int64", "4+"),
                ]),
                F("preferred_read_replica", "int32", "11+", default=-1),
                F("records", "records", nullable="0+"),
            ]),
        ]),
        F("node_endpoints", "[]", "16+", tag=0, tagged="16+", fields=[
            F("node_id", "int32", "16+"),
            F("host", "string", "16+"),
            F("port", "int32", "16+"),
            F("rack", "string", "16+", nullable="16+", default=None),
        ]),
    ],
)
