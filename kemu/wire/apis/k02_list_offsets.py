"""ListOffsets (key 2), versions 0-11; flexible from v6.

- v1: one offset per partition (max_num_offsets and old_style_offsets go); the response adds timestamp.
- v2: isolation_level; throttle_time_ms in the response. v3: throttled responses sent before throttling.
- v4: current_leader_epoch for fencing; the response adds leader_epoch. v5: OFFSET_NOT_AVAILABLE.
- v6: flexible. v7: timestamp -3 lists by max timestamp (KIP-734).
- v8: timestamp -4 lists the local log start offset (KIP-405). v9: -5 the last tiered offset (KIP-1005).
- v10: timeout_ms for remote-storage lookups (KIP-1075). v11: -6 the earliest offset pending upload to
  tiered storage (KIP-1023); the message is v10's.
"""

from kemu.wire.schema import F, api

API = api(
    2, "ListOffsets", "0-11", "6+",
    request=[
        F("replica_id", "int32"),
        F("isolation_level", "int8", "2+"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("current_leader_epoch", "int32", "4+", default=-1),
                F("timestamp", "int64"),
                F("max_num_offsets", "int32", "0", default=1),
            ]),
        ]),
        F("timeout_ms", "int32", "10+"),
    ],
    response=[
        F("throttle_time_ms", "int32", "2+"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("old_style_offsets", "[]int64", "0"),
                F("timestamp", "int64", "1+", default=-1),
                F("offset", "int64", "1+", default=-1),
                F("leader_epoch", "int32", "4+", default=-1),
            ]),
        ]),
    ],
)
