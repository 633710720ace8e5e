"""AlterShareGroupOffsets (key 91), version 0 (KIP-932).

Sets share-partition start offsets, as KafkaApis.handleAlterShareGroupOffsetsRequest and
GroupMetadataManager.alterShareGroupOffsets do:
- READ on the group, else GROUP_AUTHORIZATION_FAILED for the whole request;
- per topic, READ on it (else TOPIC_AUTHORIZATION_FAILED) and the topic known (else
  UNKNOWN_TOPIC_OR_PARTITION), for each of its partitions, these answered first;
- the empty group id INVALID_GROUP_ID, a group this broker does not coordinate NOT_COORDINATOR;
- the group, made if it does not exist (an Empty share group), must have no members: NON_EMPTY_GROUP "The
  group is not empty." (a group of another kind GROUP_ID_NOT_FOUND "Group g is not a share group."), these
  answered alone with no topics;
- a partition beyond the topic's count UNKNOWN_TOPIC_OR_PARTITION; the others start afresh at the offset
  given, whatever it is (Kafka checks none: beyond the end, or negative), -1 leaving it to
  share.auto.offset.reset at the next fetch.
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
    from kemu.wire.messages.k91_alter_share_group_offsets import (
        AlterShareGroupOffsetsRequest,
        AlterShareGroupOffsetsRequestTopics,
        AlterShareGroupOffsetsResponse,
        AlterShareGroupOffsetsResponseResponses,
    )

KEY = 91
ZERO_UUID = uuid.UUID(int=0)


async def handle(ctx: RequestContext,
                 request: Incoming[AlterShareGroupOffsetsRequest]) -> AlterShareGroupOffsetsResponse:
    body = request.body
    group_id = body["group_id"]
    authz.require(ctx, authz.READ, authz.GROUP, group_id)
    readable = authz.allowed_names(ctx, authz.READ, authz.TOPIC, (t["topic_name"] for t in body["topics"]))
    refused: list[AlterShareGroupOffsetsResponseResponses] = []
    allowed: list[AlterShareGroupOffsetsRequestTopics] = []
    for topic in body["topics"]:
        name = topic["topic_name"]
        known = ctx.broker.topics.get(name)
        code = (ErrorCode.TOPIC_AUTHORIZATION_FAILED if name not in readable
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if known is None else ErrorCode.NONE)
        if code is ErrorCode.NONE:
            allowed.append(topic)
            continue
        refused.append({"topic_name": name, "topic_id": ZERO_UUID if known is None else known.topic_id,
                        "partitions": [{"partition_index": p["partition_index"], "error_code": code,
                                        "error_message": code.message} for p in topic["partitions"]]})
    error = _share_offsets.refused_group(ctx, group_id)
    if error is not ErrorCode.NONE:
        return cast("AlterShareGroupOffsetsResponse", error_response(request, error, None))
    service = ctx.groups
    altered = service.run(lambda coordinator: coordinator.alter_share_group_offsets(group_id, allowed))
    response = altered.response
    if response["error_code"] != ErrorCode.NONE:  # the coordinator's error alone
        return cast("AlterShareGroupOffsetsResponse",
                    error_response(request, ErrorCode(response["error_code"]), response["error_message"]))
    if altered.offsets:
        manager = ctx.coordinators.share
        for topic_id, index, offset in altered.offsets:
            manager.alter_start_offset(group_id, topic_id, index, offset)
    # The topics refused before the coordinator ran, then its own.
    return {**response, "responses": [*refused, *response["responses"]]}


error_response = _share_offsets.top_level_responder(KEY)
