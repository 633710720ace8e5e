"""OffsetFetch (key 9), versions 0-9.

v0 read ZooKeeper offsets on old brokers; a KRaft broker answers it from the coordinator like v1. v2 lets
`topics` be null (every committed offset of the group) and adds a top-level error; v3 throttle time; v5 the
committed leader epoch; v6 flexible; v7 `require_stable` (UNSTABLE_OFFSET_COMMIT for partitions with
offsets of a transaction still open); v8 many groups per request (`groups[]`, KIP-709); v9 a KIP-848
member's id and epoch (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).

Offsets of unknown topics are answered like any other (-1), as Kafka does. A group this broker does not
coordinate gets NOT_COORDINATOR: per group from v8, at the top in v2-7, on every requested partition in
v0-1 (which have no top-level error), as Kafka's OffsetFetchResponse places it.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 9
FIRST_MULTI_GROUP_VERSION = 8
FIRST_TOP_LEVEL_ERROR_VERSION = 2


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body, version = request.body, request.version
    service = ctx.groups
    context = core_context(version, ctx.client_id, ctx.client.host)
    if version >= FIRST_MULTI_GROUP_VERSION:
        groups = []
        for group in body["groups"]:
            error = service.coordinator_error(group["group_id"])
            if error is not ErrorCode.NONE:
                groups.append({"group_id": group["group_id"], "topics": [], "error_code": error})
                continue
            single = {"groups": [group], "require_stable": body["require_stable"]}
            groups.extend(service.run(lambda coordinator: coordinator.offset_fetch(single, context))["groups"])
        return {"throttle_time_ms": 0, "groups": groups}
    error = service.coordinator_error(body["group_id"])
    if error is not ErrorCode.NONE:
        return _single_group_error(request, error)
    response = service.run(lambda coordinator: coordinator.offset_fetch(body, context))
    if version < FIRST_TOP_LEVEL_ERROR_VERSION and response["error_code"] != ErrorCode.NONE:
        return _single_group_error(request, response["error_code"])
    return {"throttle_time_ms": 0, **response}


def _single_group_error(request: Request, code: ErrorCode) -> dict[str, Any]:
    if request.version >= FIRST_TOP_LEVEL_ERROR_VERSION:
        return {"throttle_time_ms": 0, "error_code": code, "topics": []}
    return {"throttle_time_ms": 0, "error_code": code, "topics": [
        {"name": t["name"], "partitions": [
            {"partition_index": p, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
             "error_code": code}
            for p in t["partition_indexes"]]}
        for t in request.body["topics"] or []]}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's OffsetFetchRequest.getErrorResponse: the error for every group (v8+) or the one group."""
    if request.version >= FIRST_MULTI_GROUP_VERSION:
        return {"throttle_time_ms": 0, "groups": [{"group_id": g["group_id"], "topics": [], "error_code": code}
                                                  for g in request.body["groups"]]}
    return _single_group_error(request, code)
