"""DescribeTransactions (key 65), version 0 only, flexible (KIP-664).

Asks the transaction coordinator for the state of each transactional id it owns.
"""

from kemu.wire.schema import F, api

API = api(
    65, "DescribeTransactions", "0", "0+",
    request=[
        F("transactional_ids", "[]string"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("transaction_states", "[]", fields=[
            F("error_code", "int16"),
            F("transactional_id", "string"),
            F("transaction_state", "string"),
            F("transaction_timeout_ms", "int32"),
            F("transaction_start_time_ms", "int64"),
            F("producer_id", "int64"),
            F("producer_epoch", "int16"),
            F("topics", "[]", fields=[
                F("topic", "string"),
                F("partitions", "[]int32"),
            ]),
        ]),
    ],
)
