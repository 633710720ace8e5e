"""ConsumerGroupHeartbeat (key 68), versions 0-1 (KIP-848, the "consumer" rebalance protocol).

One request joins (member epoch 0), heartbeats, reconciles and leaves (epoch -1, or -2 for a static member
that will come back): the broker runs the server-side assignor ("uniform", the default, or "range"),
bumps the group epoch when subscriptions or the subscribed topics change, and hands each member its target
assignment only once other members have revoked the partitions it gets. v0 has the broker pick the member
id; v1 (KIP-1082) has the client send one and adds `subscribed_topic_regex` (RE2/J syntax, matched against
non-internal topics).

Errors are Kafka's: INVALID_REQUEST with a message for malformed requests, UNSUPPORTED_ASSIGNOR,
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, GROUP_ID_NOT_FOUND
for a classic group that is not empty, NOT_COORDINATOR where this broker does not coordinate the group;
GROUP_AUTHORIZATION_FAILED without READ on the group, then TOPIC_AUTHORIZATION_FAILED when a subscribed topic
name may not be described (KafkaApis.handleConsumerGroupHeartbeat).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.broker.errors import ApiError
from kemu.groups import GroupCoordinator
from kemu.handlers import _authorize as authz
from kemu.handlers._coordinated import answer_in_group
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k68_consumer_group_heartbeat import (
        ConsumerGroupHeartbeatRequest,
    )

KEY = 68


async def handle(ctx: RequestContext,
                 request: Incoming[ConsumerGroupHeartbeatRequest]) -> dict[str, Any]:
    # The response is the groups core's, which speaks dict[str, Any].
    authz.require(ctx, authz.READ, authz.GROUP, request.body["group_id"])
    subscribed = set(request.body["subscribed_topic_names"] or ())
    if subscribed - authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, subscribed):
        raise ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return answer_in_group(ctx, request, GroupCoordinator.consumer_group_heartbeat, error_response)


error_response = error_responder(KEY)
