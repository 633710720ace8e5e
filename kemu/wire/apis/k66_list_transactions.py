"""ListTransactions (key 66), versions 0-1; flexible from v0 (KIP-664).

v1 adds a duration filter to the request, to list only transactions running longer than it (KIP-994); the
v1 response is the v0 response.
"""

from kemu.wire.schema import F, api

API = api(
    66, "ListTransactions", "0-1", "0+",
    request=[
        F("state_filters", "[]string"),
        F("producer_id_filters", "[]int64"),
        F("duration_filter", "int64", "1+", default=-1),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("unknown_state_filters", "[]string"),
        F("transaction_states", "[]", fields=[
            F("transactional_id", "string"),
            F("producer_id", "int64"),
            F("transaction_state", "string"),
        ]),
    ],
)
