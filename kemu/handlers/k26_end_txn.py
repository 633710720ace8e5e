"""EndTxn (key 26), versions 0-5.

Commits or aborts the open transaction: the coordinator journals PrepareCommit/PrepareAbort and answers;
the markers are written right after (see kemu.coordinators.txn_service), and until they are, the transactional
id answers CONCURRENT_TRANSACTIONS — Kafka's two-phase window. v1 is v0; v2 may answer PRODUCER_FENCED
(INVALID_PRODUCER_EPOCH before); v3 is flexible; v4 may answer TRANSACTION_ABORTABLE (never needed here).

v0-4 run transactions version 1: retrying the same outcome once complete is NONE, the other outcome
INVALID_TXN_STATE, as is ending a transaction never begun; a retry while completing is
CONCURRENT_TRANSACTIONS; a stale epoch PRODUCER_FENCED; an unknown id or producer id
INVALID_PRODUCER_ID_MAPPING.

v5 is transactions version 2 (KIP-890 part 2, TransactionVersion.transactionVersionForEndTxn): every EndTxn
bumps the producer epoch — the markers carry the bumped one — and the response carries the producer id and
epoch the producer goes on with: the next producer id at epoch 0 when the epoch would be exhausted. An
abort is taken with no transaction begun; a retry (the epoch before the bump) of an EndTxn whose answer was
lost is answered as it was. See TransactionCoordinator._end_v2 for the whole table. An error answers
producer id and epoch -1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import fenced_for_version
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.txn.state import TV_0, TV_2
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k26_end_txn import EndTxnRequest, EndTxnResponse

KEY = 26
FIRST_FENCED_VERSION = 2
FIRST_TV2_VERSION = 5


async def handle(ctx: RequestContext, request: Incoming[EndTxnRequest]) -> EndTxnResponse:
    body = request.body
    authz.require(ctx, authz.WRITE, authz.TRANSACTIONAL_ID, body["transactional_id"])
    not_here = ctx.txn.coordinator_error(body["transactional_id"], ctx.node_id)
    if not_here is not ErrorCode.NONE:
        return {"error_code": not_here}
    result = ctx.txn.end_transaction(
        body["transactional_id"], body["producer_id"], body["producer_epoch"], commit=body["committed"],
        client_version=TV_2 if request.version >= FIRST_TV2_VERSION else TV_0)
    return {"error_code": fenced_for_version(result.error, request.version, FIRST_FENCED_VERSION),
            "producer_id": result.producer_id, "producer_epoch": result.producer_epoch}


error_response = error_responder(KEY)
