"""OffsetCommit (key 8), versions 2-10 (Kafka 4 dropped v0-1, KIP-896: a request for them closes the connection).

v1 adds the generation and member id (and, in v1 only, a per-partition commit timestamp); v2-4 carry
`retention_time_ms` (an explicit expiry for the offsets; -1 = offsets.retention.minutes); v3 throttle time;
v5 drops the retention time; v6 the committed leader epoch; v7 `group_instance_id` (KIP-345); v8 flexible;
v9 may come from a KIP-848 member, whose member epoch stands in the generation field (STALE_MEMBER_EPOCH,
GROUP_ID_NOT_FOUND); v10 names topics by id both ways (KIP-848).

As in Kafka's KafkaApis, a v10 topic id no topic has answers UNKNOWN_TOPIC_ID (before the authorization
check, which is by the name an id resolves to), partitions of topics this broker does not have answer
UNKNOWN_TOPIC_OR_PARTITION before the coordinator sees the request, and a request left with none is
answered without it. Every version's commit keeps the id of the topic committed to, as Kafka 4.3's does
(OffsetFetch v10 gives no offset of a topic deleted and made again under its name). A commit
with generation -1 from outside group management creates a "simple" group. NOT_COORDINATOR for every other
partition when this broker does not coordinate the group.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import RequestTopic, core_context, merge_topics, split_hosted, topic_errors
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k08_offset_commit import OffsetCommitRequest, OffsetCommitResponse

KEY = 8
VERSIONS = NARROWED[KEY]
FIRST_TOPIC_ID_VERSION = 10


async def handle(ctx: RequestContext, request: Incoming[OffsetCommitRequest]) -> OffsetCommitResponse:
    body, version = request.body, request.version
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    topics: Sequence[RequestTopic] = body["topics"]
    by_id = version >= FIRST_TOPIC_ID_VERSION
    if by_id:
        topics = [{**topic, "name": _name_of(ctx, topic["topic_id"])} for topic in body["topics"]]
    named = [topic for topic in topics if topic["name"] is not None]
    known, unknown = split_hosted(ctx.broker, topics, authz.denied_topics(ctx, authz.READ, named))
    key: Literal["name", "topic_id"] = "topic_id" if by_id else "name"
    if not known:
        return {"topics": merge_topics(unknown, [], key)}
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return {"topics": merge_topics(unknown, topic_errors(known, error), key)}
    context = core_context(version, ctx.client_id, ctx.client.host)
    response = service.run(lambda coordinator: coordinator.offset_commit({**body, "topics": known}, context))
    return {"topics": merge_topics(unknown, response["topics"], key)}


def _name_of(ctx: RequestContext, topic_id: uuid.UUID) -> str | None:
    found = ctx.broker.topics.by_id(topic_id)
    return None if found is None else found.name


error_response = error_responder(KEY, topics=each("topics", name="name", topic_id="topic_id", partitions=each(
    "partitions", partition_index="partition_index")))
