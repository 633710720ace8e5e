"""ShareFetch (key 78), versions 1-2 (KIP-932; v2 adds the acquire mode and renew acknowledgements, KIP-1206
and KIP-1222): a share-group member's read, in its share session (kemu.coordinators.share_fetch).

The request first applies its acknowledgements (each partition's AcknowledgeErrorCode), then acquires for the
member from every partition of the session: the records handed back are the batches that hold what was
acquired, with the acquired ranges and their delivery counts; the client delivers only those. Nothing to
acquire anywhere and `max_wait_ms` above 0: the answer waits for a write to one of the session's partitions or
the deadline, then tries once more. Epoch 0 opens the session (acknowledgements in it are INVALID_REQUEST, as
Kafka refuses them), -1 closes it (no fetching then; the member's acquired records are released once its
acknowledgements are applied). Top-level errors: INVALID_REQUEST for a null group id or a member id that is
empty or over 36 characters (and v2's renewing request asking for records), READ on the group
(GROUP_AUTHORIZATION_FAILED), SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH; per partition
UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED, INVALID_RECORD_STATE (acknowledgements).
`share_acquire_mode` 1 (record limit) is answered as batch-optimized (mode 0).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import trio

from kemu.coordinators.share_fetch import FINAL_EPOCH, INITIAL_EPOCH, ShareFetchManager, TopicPartition
from kemu.groups import ShareGroup
from kemu.handlers import _share
from kemu.handlers._waiting import LogWatch
from kemu.handlers.context import Continuation, RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.broker.partition import Partition
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k78_share_fetch import ShareFetchRequest, ShareFetchResponse
    from kemu.wire.messages.k78_share_fetch import ShareFetchResponseResponsesPartitions as PartitionData

KEY = 78
FETCH_MAX_BYTES = 55 * 1024 * 1024  # fetch.max.bytes: a broker caps a request's max_bytes with it


async def handle(ctx: RequestContext,
                 request: Incoming[ShareFetchRequest]) -> ShareFetchResponse | Continuation[ShareFetchResponse]:
    body, version = request.body, request.version
    member = _share.requesting_member(ctx, body)
    if isinstance(member, ErrorCode):
        return _top_level(member)
    group_id, member_id = member
    epoch = body["share_session_epoch"]
    topics = body["topics"]
    acknowledging = any(p["acknowledgement_batches"] for t in topics for p in t["partitions"])
    if epoch == INITIAL_EPOCH and acknowledging:
        return _top_level(ErrorCode.INVALID_REQUEST)
    wanted = [(t["topic_id"], p["partition_index"]) for t in topics for p in t["partitions"]]
    forgotten = [(t["topic_id"], index) for t in body["forgotten_topics_data"] for index in t["partitions"]]
    if version >= 2 and body["is_renew_ack"]:
        # KIP-1222: a renewing request fetches nothing, and must say so.
        wrong = [f"{name} must be set to 0, " for name, value in (("maxBytes", body["max_bytes"]),
                                                                   ("minBytes", body["min_bytes"]),
                                                                   ("maxRecords", body["max_records"]),
                                                                   ("maxWaitMs", body["max_wait_ms"])) if value != 0]
        if wrong:  # logged by Kafka as "... if isRenewAck is true."; the answer has the code only
            return _top_level(ErrorCode.INVALID_REQUEST)
    manager = ctx.coordinators.share
    _learn_initialised(ctx, manager, group_id)
    opened = manager.open_session(group_id, member_id, epoch, wanted, forgotten)
    if opened.error is not ErrorCode.NONE or opened.session is None:
        return _top_level(opened.error)
    session = opened.session
    names = _share.topic_names(ctx, {tp[0] for tp in [*session.partitions, *wanted]})
    renew = version >= 2 and bool(body["is_renew_ack"])
    acks = _share.acknowledge_all(ctx, manager, group_id, member_id, topics, names, renew)
    lock_ms = manager.share_config(group_id).record_lock_duration_ms
    if epoch == FINAL_EPOCH or renew:
        # A final request fetches nothing (Kafka's FinalContext) and then releases the session; a renewing one
        # fetches nothing either (KIP-1222: the fetch could outlast the renewed locks).
        if epoch == FINAL_EPOCH:
            manager.release(session)
        return _respond({tp: _partition(ctx, tp, acks.get(tp)) for tp in acks}, lock_ms)

    def read() -> tuple[dict[TopicPartition, PartitionData], bool]:
        return _acquire_all(ctx, manager, session.partitions, names, acks, body, group_id, member_id)

    partitions, got = read()
    max_wait_ms = body["max_wait_ms"]
    if got or max_wait_ms <= 0 or not session.partitions:
        return _respond(partitions, lock_ms)
    deadline = trio.current_time() + max_wait_ms / 1000
    watched = [p for tp in session.partitions if (p := _open_partition(ctx, tp)) is not None]

    async def finish() -> ShareFetchResponse:
        with LogWatch(watched) as watch:
            while await watch.wait_until(deadline):
                found, any_acquired = read()
                if any_acquired:
                    return _respond(found, lock_ms)
        return _respond(read()[0], lock_ms)

    return Continuation(finish)


def _learn_initialised(ctx: RequestContext, manager: ShareFetchManager, group_id: str) -> None:
    """The share-partitions the group coordinator has initialised for the group (by assigning them): those a
    fetch may acquire from."""
    if not group_id:
        return
    group = ctx.coordinators.groups.coordinator.group(group_id)
    if isinstance(group, ShareGroup):
        manager.initialise(group_id, [(topic_id, index) for topic_id, topic in group.initialized.items()
                                      for index in topic.partitions])


def _open_partition(ctx: RequestContext, tp: TopicPartition) -> Partition | None:
    topic = ctx.broker.topics.by_id(tp[0])
    if topic is None or not 0 <= tp[1] < len(topic.partitions):
        return None
    partition = topic.partitions[tp[1]]
    return partition if partition.is_open else None


def _acquire_all(ctx: RequestContext, manager: ShareFetchManager, session_partitions: dict[TopicPartition, None],
                 names: dict[uuid.UUID, str | None], acks: dict[TopicPartition, tuple[ErrorCode, str | None]],
                 body: ShareFetchRequest, group_id: str, member_id: str
                 ) -> tuple[dict[TopicPartition, PartitionData], bool]:
    max_bytes = min(body["max_bytes"], FETCH_MAX_BYTES)
    remaining_records = body["max_records"]
    partitions: dict[TopicPartition, PartitionData] = {}
    got = False
    for tp in session_partitions:
        names.setdefault(tp[0], None)
        if tp[0] not in names or names[tp[0]] is None:
            names.update(_share.topic_names(ctx, [tp[0]]))
        refused = _share.refusal(ctx, names, tp)
        data = _partition(ctx, tp, acks.get(tp))
        if refused is not ErrorCode.NONE:
            data["error_code"] = int(refused)
            partitions[tp] = data
            continue
        if remaining_records > 0 and max_bytes > 0:
            acquired = manager.acquire(group_id, member_id, tp[0], tp[1], max_records=remaining_records,
                                       batch_size=body["batch_size"], max_bytes=max_bytes)
            data["error_code"], data["error_message"] = int(acquired.error), acquired.message
            if acquired.acquired:
                got = True
                data["records"] = acquired.records
                data["acquired_records"] = [{"first_offset": r.first_offset, "last_offset": r.last_offset,
                                             "delivery_count": r.delivery_count} for r in acquired.acquired]
                remaining_records -= sum(r.last_offset - r.first_offset + 1 for r in acquired.acquired)
                max_bytes -= len(acquired.records)
        if data["acquired_records"] or tp in acks or data["error_code"]:
            partitions[tp] = data  # Kafka leaves out a partition with nothing to say
    return partitions, got


def _partition(ctx: RequestContext, tp: TopicPartition, ack: tuple[ErrorCode, str | None] | None) -> PartitionData:
    code, message = ack if ack is not None else (ErrorCode.NONE, None)
    return {"partition_index": tp[1], "error_code": 0, "error_message": None,
            "acknowledge_error_code": int(code), "acknowledge_error_message": message,
            "current_leader": _share.current_leader(), "records": b"", "acquired_records": []}


def _respond(partitions: dict[TopicPartition, PartitionData], lock_ms: int) -> ShareFetchResponse:
    return {"error_code": 0, "error_message": None, "acquisition_lock_timeout_ms": lock_ms,
            "responses": [{"topic_id": topic_id, "partitions": parts}
                          for topic_id, parts in _share.by_topic(partitions).items()],
            "node_endpoints": []}


def _top_level(code: ErrorCode) -> ShareFetchResponse:
    # Kafka sends the session and request errors without a message, and no lock timeout.
    return {"error_code": int(code), "error_message": None, "acquisition_lock_timeout_ms": 0,
            "responses": [], "node_endpoints": []}


error_response = error_responder(KEY)
