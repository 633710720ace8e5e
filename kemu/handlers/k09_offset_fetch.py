"""OffsetFetch (key 9), versions 1-9 (Kafka 4 dropped v0, KIP-896: a request for it closes the connection).

v1 reads the offsets of __consumer_offsets (v0, gone, read ZooKeeper's). v2 lets `topics` be null (every
committed offset of the group) and adds a top-level error; v3 throttle time; v5 the committed leader epoch;
v6 flexible; v7 `require_stable` (UNSTABLE_OFFSET_COMMIT for partitions with offsets of a transaction still
open); v8 many groups per request (`groups[]`, KIP-709); v9 a KIP-848 member's id and epoch
(STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).

Offsets of unknown topics are answered like any other (-1), as Kafka does. A group this broker does not
coordinate gets NOT_COORDINATOR: per group from v8, at the top in v2-7, on every requested partition in
v1 (which has no top-level error), as Kafka's OffsetFetchResponse places it; so does
GROUP_AUTHORIZATION_FAILED for a group the client may not DESCRIBE. Topics it may not DESCRIBE are left out
of a whole-group answer and answered TOPIC_AUTHORIZATION_FAILED when named.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, Fixed, each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 9
VERSIONS = NARROWED[KEY]
FIRST_MULTI_GROUP_VERSION = 8
FIRST_TOP_LEVEL_ERROR_VERSION = 2


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body, version = request.body, request.version
    service = ctx.groups
    context = core_context(version, ctx.client_id, ctx.client.host)
    if version >= FIRST_MULTI_GROUP_VERSION:
        groups = []
        for group in body["groups"]:
            error = authz.denied_code(ctx, authz.DESCRIBE, authz.GROUP, group["group_id"])
            error = service.coordinator_error(group["group_id"], ctx.node_id) if error is ErrorCode.NONE else error
            if error is not ErrorCode.NONE:
                groups.append({"group_id": group["group_id"], "topics": [], "error_code": error})
                continue
            single = {"groups": [group], "require_stable": body["require_stable"]}
            # run() calls the lambda at once, while `single` is still this group's.
            fetched = service.run(lambda coordinator: coordinator.offset_fetch(single, context))  # noqa: B023
            for answer in fetched["groups"]:
                answer["topics"] = authz.hide_topics(ctx, answer["topics"], group["topics"] is None)
            groups.extend(fetched["groups"])
        return {"groups": groups}
    authz.require(ctx, authz.DESCRIBE, authz.GROUP, body["group_id"])
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        return error_response(request, error, None)
    response = service.run(lambda coordinator: coordinator.offset_fetch(body, context))
    response["topics"] = authz.hide_topics(ctx, response["topics"], body["topics"] is None)
    if version < FIRST_TOP_LEVEL_ERROR_VERSION and response["error_code"] != ErrorCode.NONE:
        return error_response(request, response["error_code"], None)
    return response


# Kafka's OffsetFetchRequest.getErrorResponse: the error for every group (v8+) or for the one group, which
# before v2 has no top-level error code and so carries it on every partition asked for.
error_response = error_responder(
    KEY, groups=each("groups", group_id="group_id"),
    topics=each("topics", versions=f"0-{FIRST_TOP_LEVEL_ERROR_VERSION - 1}", name="name", partitions=each(
        "partition_indexes", partition_index=ITEM, committed_offset=Fixed(-1))))
