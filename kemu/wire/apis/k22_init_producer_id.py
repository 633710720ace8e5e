"""InitProducerId (key 22), versions 0-5; flexible from v2.

v1 is v0 on the wire; v2 is the first flexible version; v3 adds the producer id and epoch a producer sends to
resume after INVALID_PRODUCER_EPOCH; v4 allows PRODUCER_FENCED; v5 allows TRANSACTION_ABORTABLE (KIP-890).
"""

from kemu.wire.schema import F, api

API = api(
    22, "InitProducerId", "0-5", "2+",
    request=[
        F("transactional_id", "string", nullable="0+"),
        F("transaction_timeout_ms", "int32"),
        F("producer_id", "int64", "3+", default=-1),
        F("producer_epoch", "int16", "3+", default=-1),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("producer_id", "int64", default=-1),
        F("producer_epoch", "int16"),
    ],
)
