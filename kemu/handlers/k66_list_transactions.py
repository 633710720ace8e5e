"""ListTransactions (key 66), versions 0-2 (KIP-664, KIP-994, KIP-1152).

Every transactional id the coordinator knows, with its producer id and state, filtered by state names and
producer ids; v1 adds a duration filter (only transactions started longer ago than that; as in Kafka, an
id that never started one passes it); v2 a regular expression the whole transactional id must match (null or
"": no filter; Kafka compiles it with RE2/J, and a pattern it refuses fails the request with
INVALID_REGULAR_EXPRESSION and nothing listed). State names that are no state come back in
`unknown_state_filters` and match nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kemu.groups.consumer_group import compile_regex
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.txn.state import TxnState
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k66_list_transactions import ListTransactionsRequest, ListTransactionsResponse

KEY = 66


async def handle(ctx: RequestContext, request: Incoming[ListTransactionsRequest]) -> ListTransactionsResponse:
    body = request.body
    states: list[str] = body["state_filters"]
    wanted: str | None = body["transactional_id_pattern"]
    pattern = compile_regex(wanted) if wanted else None
    if wanted and pattern is None:
        # TransactionStateManager throws InvalidRegularExpression; KafkaApis answers with getErrorResponse.
        return cast("ListTransactionsResponse", error_response(request, ErrorCode.INVALID_REGULAR_EXPRESSION, None))
    found = [txn for txn in ctx.txn.list_transactions(states, body["producer_id_filters"], body["duration_filter"])
             if (pattern is None or pattern.fullmatch(txn.transactional_id))
             and authz.allowed(ctx, authz.DESCRIBE, authz.TRANSACTIONAL_ID, txn.transactional_id)]
    return {
        "error_code": 0,
        "unknown_state_filters": [name for name in states if TxnState.from_kafka_name(name) is None],
        "transaction_states": [{"transactional_id": txn.transactional_id, "producer_id": txn.producer_id,
                                "transaction_state": txn.state.kafka_name} for txn in found],
    }


error_response = error_responder(KEY)
