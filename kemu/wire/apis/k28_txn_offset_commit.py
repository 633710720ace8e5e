"""TxnOffsetCommit (key 28), versions 0-5; flexible from v3.

v1 is v0 on the wire; v2 adds the committed leader epoch; v3 adds the member id, group instance id and
generation id (and is flexible), with ILLEGAL_GENERATION / FENCED_INSTANCE_ID / UNKNOWN_MEMBER_ID errors;
v4 allows TRANSACTION_ABORTABLE (KIP-890); v5 is v4 on the wire, from a transactions-version-2 client, whose
group the broker adds to the transaction itself (no AddOffsetsToTxn; KIP-890 part 2).
"""

from kemu.wire.schema import F, api

API = api(
    28, "TxnOffsetCommit", "0-5", "3+",
    request=[
        F("transactional_id", "string"),
        F("group_id", "string"),
        F("producer_id", "int64"),
        F("producer_epoch", "int16"),
        F("generation_id", "int32", "3+", default=-1),
        F("member_id", "string", "3+", default=""),
        F("group_instance_id", "string", "3+", nullable="3+", default=None),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("committed_offset", "int64"),
                F("committed_leader_epoch", "int32", "2+", default=-1),
                F("committed_metadata", "string", nullable="0+"),
            ]),
        ]),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("topics", "[]", fields=[
            F("name", "string"),
            F("partitions", "[]", fields=[
                F("partition_index", "int32"),
                F("error_code", "int16"),
            ]),
        ]),
    ],
)
