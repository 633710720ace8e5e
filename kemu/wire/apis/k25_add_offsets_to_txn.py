"""AddOffsetsToTxn (key 25), versions 0-4; flexible from v3.

The fields never changed: v1 is v0 on the wire; v2 allows PRODUCER_FENCED; v3 is flexible; v4 allows
TRANSACTION_ABORTABLE (KIP-890).
"""

from kemu.wire.schema import F, api

API = api(
    25, "AddOffsetsToTxn", "0-4", "3+",
    request=[
        F("transactional_id", "string"),
        F("producer_id", "int64"),
        F("producer_epoch", "int16"),
        F("group_id", "string"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
    ],
)
