"""DeleteShareGroupOffsets (key 92), version 0 (KIP-932).

Deletes a share group's state of whole topics, as KafkaApis.handleDeleteShareGroupOffsetsRequest and
GroupCoordinatorShard.initiateDeleteShareGroupOffsets do:
- DELETE on the group, else GROUP_AUTHORIZATION_FAILED for the whole request;
- READ on each topic, else TOPIC_AUTHORIZATION_FAILED for it (topic id zero), these answered first;
- the empty group id INVALID_GROUP_ID, a group this broker does not coordinate NOT_COORDINATOR;
- an unknown group GROUP_ID_NOT_FOUND "Group g not found.", one of another kind "Group g is not a share
  group.", a group with members NON_EMPTY_GROUP "The group is not empty.", each alone with no topics;
- a topic whose state the group has is deleted (every share-partition of it: a later fetch finds nothing
  until a member is assigned it again, then starts at share.auto.offset.reset); a known topic without state
  UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete.", an unknown one
  UNKNOWN_TOPIC_OR_PARTITION; a group that never had any share-partition state answers no topics at all.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, cast

from kemu.handlers import _authorize as authz
from kemu.handlers import _share_offsets
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k92_delete_share_group_offsets import (
        DeleteShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsResponse,
        DeleteShareGroupOffsetsResponseResponses,
    )

KEY = 92
ZERO_UUID = uuid.UUID(int=0)


async def handle(ctx: RequestContext,
                 request: Incoming[DeleteShareGroupOffsetsRequest]) -> DeleteShareGroupOffsetsResponse:
    body = request.body
    group_id = body["group_id"]
    authz.require(ctx, authz.DELETE, authz.GROUP, group_id)
    readable = authz.allowed_names(ctx, authz.READ, authz.TOPIC, (t["topic_name"] for t in body["topics"]))
    refused: list[DeleteShareGroupOffsetsResponseResponses] = [
        {"topic_name": t["topic_name"], "topic_id": ZERO_UUID, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
         "error_message": ErrorCode.TOPIC_AUTHORIZATION_FAILED.message}
        for t in body["topics"] if t["topic_name"] not in readable]
    names = [t["topic_name"] for t in body["topics"] if t["topic_name"] in readable]
    error = _share_offsets.refused_group(ctx, group_id)
    if error is not ErrorCode.NONE:
        return cast("DeleteShareGroupOffsetsResponse", error_response(request, error, None))
    service = ctx.groups
    deleted = service.run(lambda coordinator: coordinator.delete_share_group_offsets(group_id, names))
    response = deleted.response
    if response["error_code"] != ErrorCode.NONE:  # the coordinator's error alone
        return cast("DeleteShareGroupOffsetsResponse",
                    error_response(request, ErrorCode(response["error_code"]), response["error_message"]))
    if deleted.partitions and ctx.coordinators.share_made:
        manager = ctx.coordinators.share
        for topic_id, index in deleted.partitions:
            manager.delete_state(group_id, topic_id, index)
    # The topics refused before the coordinator ran, then its own.
    return {**response, "responses": [*refused, *response["responses"]]}


error_response = _share_offsets.top_level_responder(KEY)
