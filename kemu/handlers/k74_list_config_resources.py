"""ListConfigResources (key 74), versions 0-1, flexible throughout (KIP-1142; v0 was
ListClientMetricsResources), as KafkaApis.handleListConfigResources answers it.

DESCRIBE_CONFIGS on the cluster is required (else CLUSTER_AUTHORIZATION_FAILED). v0 lists the client metrics
resources; v1 the types asked for, or with none asked every type v1 supports (TOPIC, BROKER, BROKER_LOGGER,
CLIENT_METRICS, GROUP); a type outside those is UNSUPPORTED_VERSION with nothing listed. They come type by
type in Kafka's order, whatever the request's: GROUP, CLIENT_METRICS, BROKER_LOGGER and BROKER (each live
broker by id), TOPIC (every topic, internal ones too). GROUP lists the groups that have configs
(kemu.broker.group_configs), CLIENT_METRICS the client metrics subscriptions (kemu.broker.client_metrics).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k74_list_config_resources import (
        ListConfigResourcesRequest,
        ListConfigResourcesResponse,
        ListConfigResourcesResponseConfigResources,
    )

KEY = 74

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
_SUPPORTED = {0: frozenset({CLIENT_METRICS}), 1: frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})}


async def handle(ctx: RequestContext, request: Incoming[ListConfigResourcesRequest]) -> ListConfigResourcesResponse:
    authz.require_cluster(ctx, authz.DESCRIBE_CONFIGS)
    supported = _SUPPORTED[request.version]
    asked = set(request.body.get("resource_types") or ()) or supported
    if not asked <= supported:
        return {"error_code": int(ErrorCode.UNSUPPORTED_VERSION), "config_resources": []}
    broker = ctx.broker
    listed: list[ListConfigResourcesResponseConfigResources] = []
    if GROUP in asked:
        listed += [{"resource_name": group, "resource_type": GROUP} for group in broker.group_configs.groups()]
    if CLIENT_METRICS in asked:
        listed += [{"resource_name": name, "resource_type": CLIENT_METRICS} for name in broker.client_metrics.names()]
    for kind in (BROKER_LOGGER, BROKER):
        if kind in asked:
            listed += [{"resource_name": str(node_id), "resource_type": kind} for node_id in broker.live_broker_ids()]
    if TOPIC in asked:
        listed += [{"resource_name": topic.name, "resource_type": TOPIC} for topic in broker.topics]
    return {"error_code": 0, "config_resources": listed}


error_response = error_responder(KEY)
