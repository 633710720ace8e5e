"""OffsetFetch (key 9), versions 1-10 (Kafka 4 dropped v0, KIP-896: a request for it closes the connection).

v1 reads the offsets of __consumer_offsets (v0, gone, read ZooKeeper's). v2 lets `topics` be null (every
committed offset of the group) and adds a top-level error; v3 throttle time; v5 the committed leader epoch;
v6 flexible; v7 `require_stable` (UNSTABLE_OFFSET_COMMIT for partitions with offsets of a transaction still
open); v8 many groups per request (`groups[]`, KIP-709); v9 a KIP-848 member's id and epoch
(STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID); v10 topics by id both ways (KIP-848): an id no topic has is
UNKNOWN_TOPIC_ID, an offset committed to another topic of the same name (deleted and made again) is none,
and a whole group's topics are named by the ids they have now, those gone left out.

Offsets of unknown topics are answered like any other (-1), as Kafka does. A group this broker does not
coordinate gets NOT_COORDINATOR: per group from v8, at the top in v2-7, on every requested partition in
v1 (which has no top-level error), as Kafka's OffsetFetchResponse places it; so does
GROUP_AUTHORIZATION_FAILED for a group the client may not DESCRIBE. Topics it may not DESCRIBE are left out
of a whole-group answer and answered TOPIC_AUTHORIZATION_FAILED when named, after the coordinator's answer
for the others, as KafkaApis orders them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, Fixed, each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k09_offset_fetch import (
        OffsetFetchRequest,
        OffsetFetchResponse,
        OffsetFetchResponseGroups,
        OffsetFetchResponseGroupsTopics,
    )

KEY = 9
VERSIONS = NARROWED[KEY]
FIRST_MULTI_GROUP_VERSION = 8
FIRST_TOP_LEVEL_ERROR_VERSION = 2
FIRST_TOPIC_ID_VERSION = 10
ZERO_UUID = uuid.UUID(int=0)


async def handle(ctx: RequestContext, request: Incoming[OffsetFetchRequest]) -> OffsetFetchResponse:
    body, version = request.body, request.version
    service = ctx.groups
    if version >= FIRST_MULTI_GROUP_VERSION:
        groups: list[OffsetFetchResponseGroups] = []
        for group in body["groups"]:
            error = authz.denied_code(ctx, authz.DESCRIBE, authz.GROUP, group["group_id"])
            error = service.coordinator_error(group["group_id"], ctx.node_id) if error is ErrorCode.NONE else error
            if error is not ErrorCode.NONE:
                groups.append({"group_id": group["group_id"], "topics": [], "error_code": error})
                continue
            groups.append(_fetch_group(ctx, request, group, body["require_stable"]))
        return {"groups": groups}
    authz.require(ctx, authz.DESCRIBE, authz.GROUP, body["group_id"])
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return cast("OffsetFetchResponse", error_response(request, error, None))
    # The one group of v1-7 in a v8+ group's shape (its topics have no ids).
    only = {"group_id": body["group_id"], "member_id": None, "member_epoch": -1, "topics": body["topics"]}
    fetched = _fetch_group(ctx, request, only, body["require_stable"])
    if version < FIRST_TOP_LEVEL_ERROR_VERSION and fetched["error_code"] != ErrorCode.NONE:
        return cast("OffsetFetchResponse", error_response(request, ErrorCode(fetched["error_code"]), None))
    return {"topics": fetched["topics"], "error_code": fetched["error_code"]}


def _fetch_group(ctx: RequestContext, request: Incoming[OffsetFetchRequest], group: Mapping[str, Any],
                 require_stable: bool) -> OffsetFetchResponseGroups:
    """One group's answer in the v8+ shape (`group` a v8+ group of the request, OffsetFetchRequestGroups, or
    v1-7's one group in its shape), as KafkaApis.fetchOffsetsForGroup and fetchAllOffsetsForGroup build it
    around the coordinator's: topics named by an unknown id (v10) or that the client may not DESCRIBE
    are not asked of the coordinator, and follow its answer in request order (UNKNOWN_TOPIC_ID,
    TOPIC_AUTHORIZATION_FAILED) unless the group itself failed; a whole-group answer leaves out the topics the
    client may not DESCRIBE and, in v10, those that no longer exist, and names the rest by their ids."""
    version = request.version
    by_id = version >= FIRST_TOPIC_ID_VERSION
    topics: Sequence[Mapping[str, Any]] | None = group["topics"]
    refused: list[OffsetFetchResponseGroupsTopics] = []
    asked: list[Mapping[str, Any]] | None = None
    if topics is not None:
        resolved = [{**topic, "name": _name_of(ctx, topic["topic_id"]) if by_id else topic["name"]}
                    for topic in topics]
        describable = authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC,
                                          (topic["name"] for topic in resolved if topic["name"] is not None))
        asked = []
        for topic in resolved:
            if topic["name"] is None:
                refused.append(_refused({**topic, "name": ""}, ErrorCode.UNKNOWN_TOPIC_ID))
            elif topic["name"] not in describable:
                refused.append(_refused(topic, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                asked.append(topic)
    if version >= FIRST_MULTI_GROUP_VERSION:
        single: dict[str, Any] = {"groups": [{**group, "topics": asked}], "require_stable": require_stable}
    else:
        single = {"group_id": group["group_id"], "topics": asked, "require_stable": require_stable}
    context = core_context(version, ctx.client_id, ctx.client.host)
    answer = ctx.groups.run(lambda coordinator: coordinator.offset_fetch(single, context))
    # The groups core's answer (a dict: kemu.groups speaks dict[str, Any]) in the v8+ group's shape.
    fetched: OffsetFetchResponseGroups = answer["groups"][0] if version >= FIRST_MULTI_GROUP_VERSION else {
        "group_id": group["group_id"], "topics": answer["topics"], "error_code": answer["error_code"]}
    if fetched["error_code"] != ErrorCode.NONE:
        return fetched
    if topics is not None:
        fetched["topics"] = [*fetched["topics"], *refused]
        return fetched
    shown = authz.hide_topics(ctx, fetched["topics"])
    if by_id:
        # The coordinator names no ids for a whole group: the metadata's, and a topic gone has none to be
        # written with, so it is left out (fetchAllOffsetsForGroup).
        shown = [{**topic, "topic_id": found.topic_id} for topic in shown
                 if (found := ctx.broker.topics.get(topic["name"])) is not None]
    fetched["topics"] = shown
    return fetched


def _refused(topic: Mapping[str, Any], code: ErrorCode) -> OffsetFetchResponseGroupsTopics:
    return {"name": topic["name"], "topic_id": topic.get("topic_id", ZERO_UUID),
            "partitions": [{"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                            "metadata": "", "error_code": code} for index in topic["partition_indexes"]]}


def _name_of(ctx: RequestContext, topic_id: uuid.UUID) -> str | None:
    found = ctx.broker.topics.by_id(topic_id) if topic_id != ZERO_UUID else None
    return None if found is None else found.name


# Kafka's OffsetFetchRequest.getErrorResponse: the error for every group (v8+) or for the one group, which
# before v2 has no top-level error code and so carries it on every partition asked for.
error_response = error_responder(
    KEY, groups=each("groups", group_id="group_id"),
    topics=each("topics", versions=f"0-{FIRST_TOP_LEVEL_ERROR_VERSION - 1}", name="name", partitions=each(
        "partition_indexes", partition_index=ITEM, committed_offset=Fixed(-1))))
