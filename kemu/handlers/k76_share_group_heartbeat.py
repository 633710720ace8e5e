"""ShareGroupHeartbeat (key 76), version 1 (KIP-932, share groups).

One request joins (member epoch 0, with the member id the client made), heartbeats and leaves (epoch -1):
the broker runs the share SimpleAssignor, which gives a partition to several members when the group has more
members than partitions, over the partitions whose share state is initialized (a joining member's first
answer is an empty assignment; its partitions come with its next heartbeat, as on Kafka).

Checks in KafkaApis.handleShareGroupHeartbeat's order: GROUP_AUTHORIZATION_FAILED without READ on the group;
INVALID_REQUEST (with no message, as Kafka sends it) for a member id empty or over 36 characters;
TOPIC_AUTHORIZATION_FAILED when a subscribed topic may not be described; NOT_COORDINATOR where this broker does
not coordinate the group; then the coordinator's INVALID_REQUEST messages, UNKNOWN_MEMBER_ID,
FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED and GROUP_ID_NOT_FOUND (a group of another kind).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.broker.errors import ApiError
from kemu.groups import GroupCoordinator
from kemu.handlers import _authorize as authz
from kemu.handlers._coordinated import answer_in_group
from kemu.handlers._share import MAX_MEMBER_ID_LENGTH
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k76_share_group_heartbeat import ShareGroupHeartbeatRequest

KEY = 76


async def handle(ctx: RequestContext, request: Incoming[ShareGroupHeartbeatRequest]) -> dict[str, Any]:
    # The response is the groups core's, which speaks dict[str, Any].
    body = request.body
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    member_id = body["member_id"]
    if not member_id or len(member_id) > MAX_MEMBER_ID_LENGTH:
        raise ApiError(ErrorCode.INVALID_REQUEST)  # Kafka's "Invalid member id in the request.", not sent
    subscribed = set(body["subscribed_topic_names"] or ())
    if subscribed - authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, subscribed):
        raise ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return answer_in_group(ctx, request, GroupCoordinator.share_group_heartbeat, error_response)


error_response = error_responder(KEY)
