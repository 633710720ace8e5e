"""WriteTxnMarkers (key 27), versions 0-1; flexible from v1.

Sent by the transaction coordinator to partition leaders; v1 only switches to the flexible encoding.
"""

from kemu.wire.schema import F, api

API = api(
    27, "WriteTxnMarkers", "0-1", "1+",
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
