"""EndTxn (key 26), versions 0-5; flexible from v3.

v1 is v0 on the wire; v2 allows PRODUCER_FENCED; v3 is flexible; v4 allows TRANSACTION_ABORTABLE; v5 bumps
the epoch on every transaction (KIP-890 part 2), so the response carries the producer id and epoch.
"""

from kemu.wire.schema import F, api

API = api(
    26, "EndTxn", "0-5", "3+",
    request=[
        F("transactional_id", "string"),
        F("producer_id", "int64"),
        F("producer_epoch", "int16"),
        F("committed", "bool"),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("producer_id", "int64", "5+", default=-1),
        F("producer_epoch", "int16", "5+", default=-1),
    ],
)
