"""ListTransactions (key 66), versions 0-2; flexible from v0 (KIP-664).

v1 adds a duration filter to the request, to list only transactions running longer than it (KIP-994); v2 a
regular expression the transactional ids must match (KIP-1152), which may answer INVALID_REGULAR_EXPRESSION.
The v1 and v2 responses are the v0 response.
"""

from kemu.wire.schema import F, api

API = api(
    66, "ListTransactions", "0-2", "0+",
    request=[
        F("state_filters", "[]string"),
        F("producer_id_filters", "[]int64"),
        F("duration_filter", "int64", "1+", default=-1),
        F("transactional_id_pattern", "string", "2+", nullable="2+", default=None),
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
