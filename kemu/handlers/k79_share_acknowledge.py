"""ShareAcknowledge (key 79), versions 1-2 (KIP-932; v2 adds renew acknowledgements, KIP-1222): a share-group
member acknowledges records it acquired, in its share session, without fetching more. Epoch 0 is INVALID_REQUEST
(a session is opened by ShareFetch); -1 closes the session after the acknowledgements, releasing what the member
still holds. Errors as ShareFetch's (kemu.handlers.k78_share_fetch), per partition in ErrorCode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.coordinators.share_fetch import FINAL_EPOCH, INITIAL_EPOCH
from kemu.handlers import _share
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.coordinators.share_fetch import TopicPartition
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k79_share_acknowledge import (
        ShareAcknowledgeRequest,
        ShareAcknowledgeResponse,
        ShareAcknowledgeResponseResponsesPartitions,
    )

KEY = 79


async def handle(ctx: RequestContext, request: Incoming[ShareAcknowledgeRequest]) -> ShareAcknowledgeResponse:
    body, version = request.body, request.version
    member = _share.requesting_member(ctx, body)
    if isinstance(member, ErrorCode):
        return _top_level(member, version)
    group_id, member_id = member
    epoch = body["share_session_epoch"]
    if epoch == INITIAL_EPOCH:
        return _top_level(ErrorCode.INVALID_SHARE_SESSION_EPOCH, version)
    manager = ctx.coordinators.share
    opened = manager.open_session(group_id, member_id, epoch, [], [])
    if opened.error is not ErrorCode.NONE or opened.session is None:
        return _top_level(opened.error, version)
    topics = body["topics"]
    names = _share.topic_names(ctx, {t["topic_id"] for t in topics})
    renew = version >= 2 and bool(body["is_renew_ack"])
    acks = _share.acknowledge_all(ctx, manager, group_id, member_id, topics, names, renew)
    if epoch == FINAL_EPOCH:
        manager.release(opened.session)
    partitions: dict[TopicPartition, ShareAcknowledgeResponseResponsesPartitions] = {
        tp: {"partition_index": tp[1], "error_code": int(code), "error_message": message,
             "current_leader": _share.current_leader()} for tp, (code, message) in acks.items()}
    answer: ShareAcknowledgeResponse = {
        "error_code": 0, "error_message": None,
        "responses": [{"topic_id": topic_id, "partitions": parts}
                      for topic_id, parts in _share.by_topic(partitions).items()],
        "node_endpoints": []}
    if version >= 2:
        answer["acquisition_lock_timeout_ms"] = manager.share_config(group_id).record_lock_duration_ms
    return answer


def _top_level(code: ErrorCode, version: int) -> ShareAcknowledgeResponse:
    # Kafka sends the session errors without a message, and (v2) no lock timeout.
    answer: ShareAcknowledgeResponse = {"error_code": int(code), "error_message": None, "responses": [],
                                        "node_endpoints": []}
    if version >= 2:
        answer["acquisition_lock_timeout_ms"] = 0
    return answer


error_response = error_responder(KEY)
