"""TxnOffsetCommit (key 28), versions 0-5.

Stages a transaction's consumer offsets in the group coordinator: they are written to the group's
`__consumer_offsets` partition as transactional records of the producer, invisible (and OffsetFetch with
`require_stable` answers UNSTABLE_OFFSET_COMMIT) until the transaction's COMMIT marker lands there — an
ABORT drops them.

As Kafka does it: partitions of unknown topics are UNKNOWN_TOPIC_OR_PARTITION (and only the others go on);
an empty group id is INVALID_GROUP_ID; then, with `transaction.partition.verification.enable` (KIP-890), the
coordinator must confirm that AddOffsetsToTxn put the group's partition in the producer's open transaction —
else INVALID_TXN_STATE (TRANSACTION_ABORTABLE from v4), and a stale epoch INVALID_PRODUCER_EPOCH,
INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS while completing — on every partition; then the group
coordinator's own checks (NOT_COORDINATOR, INVALID_PRODUCER_EPOCH against the partition's producer state,
and from v3 KIP-447's generation and member checks: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID), and OFFSET_METADATA_TOO_LARGE per partition. v1 is v0; v2 adds the committed leader
epoch; v3 is flexible.

v5 is v4 from a transactions-version-2 client (KIP-890 part 2), which sends no AddOffsetsToTxn: the coordinator
adds the group's partition to the transaction itself (ADD_PARTITION, whatever the verification setting),
answering as the verification does, and CONCURRENT_TRANSACTIONS while the previous transaction completes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.broker.topic_names import GROUP_METADATA_TOPIC
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context, merge_topics, split_hosted, topic_errors
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k28_txn_offset_commit import TxnOffsetCommitRequest, TxnOffsetCommitResponse

KEY = 28
FIRST_ABORTABLE_VERSION = 4
FIRST_TV2_VERSION = 5


async def handle(ctx: RequestContext, request: Incoming[TxnOffsetCommitRequest]) -> TxnOffsetCommitResponse:
    body, version, broker = request.body, request.version, ctx.broker
    authz.require(ctx, authz.WRITE, authz.TRANSACTIONAL_ID, body["transactional_id"])
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    known, unknown = split_hosted(broker, body["topics"], authz.denied_topics(ctx, authz.READ, body["topics"]))
    if not known:
        return {"topics": unknown}
    error = ErrorCode.NONE
    if not body["group_id"]:
        error = ErrorCode.INVALID_GROUP_ID
    elif version >= FIRST_TV2_VERSION or ctx.txn.settings.transaction_partition_verification_enable:
        error = _verify(ctx, body, version)
    if error is not ErrorCode.NONE:
        return {"topics": merge_topics(unknown, topic_errors(known, error))}
    context = core_context(version, ctx.client_id, ctx.client.host)
    response = ctx.groups.txn_offset_commit({**body, "topics": known}, context, ctx.node_id)
    return {"topics": merge_topics(unknown, response["topics"])}


def _verify(ctx: RequestContext, body: TxnOffsetCommitRequest, version: int) -> ErrorCode:
    """Is the group's offsets partition in the producer's open transaction (from v5: add it)? Kafka's answer,
    translated as AddPartitionsToTxnManager translates it for the group coordinator."""
    partition = (GROUP_METADATA_TOPIC, ctx.groups.partition_of(body["group_id"]))
    if version >= FIRST_TV2_VERSION:
        error = ctx.txn.add_implicitly(body["transactional_id"], body["producer_id"], body["producer_epoch"],
                                       partition)
        return ErrorCode.INVALID_PRODUCER_EPOCH if error is ErrorCode.PRODUCER_FENCED else error
    error = ctx.txn.verify_partitions(body["transactional_id"], body["producer_id"],
                                                         body["producer_epoch"], [partition])[partition]
    if error is ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if error is ErrorCode.TRANSACTION_ABORTABLE and version < FIRST_ABORTABLE_VERSION:
        return ErrorCode.INVALID_TXN_STATE
    return error


error_response = error_responder(KEY, topics=each("topics", name="name", partitions=each(
    "partitions", partition_index="partition_index")))
