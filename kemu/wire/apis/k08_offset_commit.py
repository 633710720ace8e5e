"""OffsetCommit (key 8), versions 0-10; flexible from v8.

- v1: generation and member id; a per-partition commit_timestamp (v1 only).
- v2: retention_time_ms replaces the commit timestamp. v3: throttle_time_ms in the response.
- v4: throttled responses sent before throttling. v5: retention_time_ms removed (broker config only).
- v6: committed_leader_epoch. v7: group_instance_id for static members (KIP-345); FENCED_INSTANCE_ID.
- v8: flexible. v9: usable with the KIP-848 consumer protocol (generation_id_or_member_epoch is then the
  member epoch); may answer STALE_MEMBER_EPOCH and GROUP_ID_NOT_FOUND.
- v10: topics by id instead of by name, both ways (KIP-848); may answer UNKNOWN_TOPIC_ID.
"""

from kemu.wire.schema import F, api

API = api(
    8, "OffsetCommit", "0-10", "8+",
    request=[
        F("group_id", "string"),
        F("generation_id_or_member_epoch", "int32", "1+", default=-1),
        F("member_id", "string", "1+"),
        F("group_instance_id", "string", "7+", nullable="7+", default=None),
        F("retention_time_ms", "int64", "2-4", default=-1),
        F("topics", "[]", fields=[
            F("name", "string", "0-9"),
            F("topic_id", "uuid", "10+"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("committed_offset", "int64"),
                F("committed_leader_epoch", "int32", "6+", default=-1),
                F("commit_timestamp", "int64", "1", default=-1),
                F("committed_metadata", "string", nullable="0+"),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32", "3+"),
        F("topics", "[]", fields=[
            F("name", "string", "0-9"),
            F("topic_id", "uuid", "10+"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
            ]),
        ]),
    ],
)
