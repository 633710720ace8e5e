"""DescribeProducers (key 61), version 0 only, flexible (KIP-664).

Lists the active idempotent/transactional producers of each partition, as the partition leader sees them.
"""

from kemu.wire.schema import F, api

API = api(
    61, "DescribeProducers", "0", "0+",
    request=[
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partition_indexes", "[]int32"),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
                F("error_message", "string", nullable="0+", default=None),
                F("active_producers", "[]", fields=[
                    F("producer_id", "int64"),
                    # int32, not int16 as elsewhere: that is how the spec declares it.
                    F("producer_epoch", "int32"),
                    F("last_sequence", "int32", default=-1),
                    F("last_timestamp", "int64", default=-1),
                    F("coordinator_epoch", "int32"),
                    F("current_txn_start_offset", "int64", default=-1),
                ]),
            ]),
        ]),
    ],
)
