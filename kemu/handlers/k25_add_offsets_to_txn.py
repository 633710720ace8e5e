"""AddOffsetsToTxn (key 25), versions 0-4.

Adds the group's `__consumer_offsets` partition to the transaction, so that its COMMIT/ABORT marker decides
the offsets a TxnOffsetCommit stages there. The answer is the coordinator's, as for AddPartitionsToTxn:
PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2), INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS
while the previous transaction completes, INVALID_REQUEST for an empty transactional id. v1 is v0; v3 is
flexible; v4 may answer TRANSACTION_ABORTABLE (never needed here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.topic_names import GROUP_METADATA_TOPIC
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import fenced_for_version
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k25_add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse

KEY = 25
FIRST_FENCED_VERSION = 2


async def handle(ctx: RequestContext, request: Incoming[AddOffsetsToTxnRequest]) -> AddOffsetsToTxnResponse:
    body = request.body
    authz.require(ctx, authz.WRITE, authz.TRANSACTIONAL_ID, body["transactional_id"])
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    not_here = ctx.txn.coordinator_error(body["transactional_id"], ctx.node_id)
    if not_here is not ErrorCode.NONE:
        return {"error_code": not_here}
    offsets_partition = (GROUP_METADATA_TOPIC, ctx.groups.partition_of(body["group_id"]))
    error = ctx.txn.add_partitions(body["transactional_id"], body["producer_id"],
                                                      body["producer_epoch"], [offsets_partition])
    return {"error_code": fenced_for_version(error, request.version, FIRST_FENCED_VERSION)}


error_response = error_responder(KEY)
