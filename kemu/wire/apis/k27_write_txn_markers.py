"""WriteTxnMarkers (key 27), versions 0-2; flexible from v1.

Sent by the transaction coordinator to partition leaders; v1 only switches to the flexible encoding; v2 gives
each marker its transaction version (KIP-1228), which decides how the leader checks the marker's epoch.
"""

from kemu.wire.schema import F, api

API = api(
    27, "WriteTxnMarkers", "0-2", "1+",
    request=[
        F("markers", "[]", fields=[
            F("producer_id", "int64"),
            F("producer_epoch", "int16"),
            F("transaction_result", "bool"),
            F("topics", "[]", fields=[
                F("name", "string"),
                F("partition_indexes", "[]int32"),
            ]),
            F("coordinator_epoch", "int32"),
            F("transaction_version", "int8", "2+"),
        ]),
    ],
    response=[
        F("markers", "[]", fields=[
            F("producer_id", "int64"),
            F("topics", "[]", fields=[
                F("name", "string"),
                F("partitions", "[]", fields=[
                    F("partition_index", "int32"),
                    F("error_code", "int16"),
                ]),
            ]),
        ]),
    ],
)
