"""EndTxn (key 26), versions 0-4 (v5 is not advertised).

Commits or aborts the open transaction: the coordinator journals PrepareCommit/PrepareAbort and answers;
the markers are written right after (see kemu.coordinators.txn), and until they are, the transactional
id answers CONCURRENT_TRANSACTIONS — Kafka's two-phase window. Retrying the same outcome once complete is
NONE, the other outcome INVALID_TXN_STATE, as is ending a transaction never begun; a retry while completing
is CONCURRENT_TRANSACTIONS; a stale epoch PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2); an unknown
id or producer id INVALID_PRODUCER_ID_MAPPING. v1 is v0; v3 is flexible; v4 may answer
TRANSACTION_ABORTABLE (never needed here).

Not implemented, hence not advertised: v5, KIP-890 part 2's transaction version 2 (an epoch bump on every
EndTxn, returned in the response, and partitions added implicitly by Produce v12). kemu runs transactions
with version 1 semantics, as a Kafka cluster whose `transaction.version` feature is 1.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import fenced_for_version
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 26
VERSIONS = NARROWED[KEY]
FIRST_FENCED_VERSION = 2


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body = request.body
    authz.require(ctx, authz.WRITE, authz.TRANSACTIONAL_ID, body["transactional_id"])
    not_here = ctx.txn.coordinator_error(body["transactional_id"], ctx.node_id)
    if not_here is not ErrorCode.NONE:
        return {"error_code": not_here}
    error = ctx.txn.coordinator.end_txn(body["transactional_id"], body["producer_id"], body["producer_epoch"],
                                               commit=body["committed"])
    return {"error_code": fenced_for_version(error, request.version, FIRST_FENCED_VERSION)}


error_response = error_responder(KEY)
