"""OffsetFetch (key 9), versions 0-10; flexible from v6.

- v0 read offsets from ZooKeeper; from v1 they come from __consumer_offsets (a broker serves both alike).
- v2: topics may be null (all topics of the group); a top-level error_code in the response.
- v3: throttle_time_ms. v4: throttled responses sent before throttling. v5: committed_leader_epoch.
- v6: flexible. v7: require_stable; UNSTABLE_OFFSET_COMMIT per partition while a transaction is pending.
- v8: many groups per request: the request's groups[] and the response's groups[] replace the
  single-group fields (KIP-709).
- v9: member_id and member_epoch for the KIP-848 consumer protocol; may answer STALE_MEMBER_EPOCH and
  UNKNOWN_MEMBER_ID.
- v10: topics by id instead of by name, both ways (KIP-848); may answer UNKNOWN_TOPIC_ID.
"""

from kemu.wire.schema import F, api

API = api(
    9, "OffsetFetch", "0-10", "6+",
    request=[
        F("group_id", "string", "0-7"),
        F("topics", "[]", "0-7", nullable="2-7", fields=[
            F("name", "string", "0-7"),
            F("partition_indexes", "[]int32", "0-7"),
        ]),
        F("groups", "[]", "8+", fields=[
            F("group_id", "string", "8+"),
            F("member_id", "string", "9+", nullable="9+", default=None),
            F("member_epoch", "int32", "9+", default=-1),
            F("topics", "[]", "8+", nullable="8+", fields=[
                F("name", "string", "8-9"),
                F("topic_id", "uuid", "10+"),
                F("partition_indexes", "[]int32", "8+"),
            ]),
        ]),
        F("require_stable", "bool", "7+", default=False),
    ],
    response=[
        F("throttle_time_ms", "int32", "3+"),
        F("topics", "[]", "0-7", fields=[
            F("name", "string", "0-7"),
            F("partitions", "[]", "0-7", fields=[
                F("partition_index", "int32", "0-7"),
                F("committed_offset", "int64", "0-7"),
                F("committed_leader_epoch", "int32", "5-7", default=-1),
                F("metadata", "string", "0-7", nullable="0-7"),
                F("error_code", "int16", "0-7"),
            ]),
        ]),
        F("error_code", "int16", "2-7", default=0),
        F("groups", "[]", "8+", fields=[
            F("group_id", "string", "8+"),
            F("topics", "[]", "8+", fields=[
                F("name", "string", "8-9"),
                F("topic_id", "uuid", "10+"),
                F("partitions", "[]", "8+", fields=[
                    F("partition_index", "int32", "8+"),
                    F("committed_offset", "int64", "8+"),
                    F("committed_leader_epoch", "int32", "8+", default=-1),
                    F("metadata", "string", "8+", nullable="8+"),
                    F("error_code", "int16", "8+"),
                ]),
            ]),
            F("error_code", "int16", "8+", default=0),
        ]),
    ],
)
