"""DescribeCluster (key 60), versions 0-2 (KIP-700), flexible throughout.

v1 adds the endpoint type (KIP-919): this is a broker endpoint, so asking it for controllers (2) is
MISMATCHED_ENDPOINT_TYPE, as on Kafka. v2 (KIP-1073) lists the fenced brokers too when asked, each broker
saying whether it is: a node of a many-broker kemu that was stopped stays registered and fenced, as a Kafka
broker that shut down does; otherwise only the live brokers are listed, by id as Kafka's metadata image
holds them. Cluster authorized operations, when asked for, are what the authorizer allows (0 without
DESCRIBE on the cluster; every operation without an authorizer).
"""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 60

BROKER_ENDPOINT = 1


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body, broker = request.body, ctx.broker
    if body["endpoint_type"] != BROKER_ENDPOINT:
        return error_response(request, ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                              "The request was sent to an endpoint of type BROKER")
    return {
        "error_code": 0,
        "error_message": None,
        "endpoint_type": BROKER_ENDPOINT,
        "cluster_id": broker.cluster_id,
        "controller_id": broker.controller_id,
        "brokers": sorted(_brokers(ctx, body["include_fenced_brokers"]), key=lambda b: b["broker_id"]),
        "cluster_authorized_operations": authz.cluster_operations(ctx, body["include_cluster_authorized_operations"]),
    }


def _brokers(ctx: RequestContext, include_fenced: bool) -> list[dict[str, Any]]:
    listener = ctx.client.listener_name
    listed = [(node, False) for node in ctx.broker.brokers(listener)]
    if include_fenced:
        listed += [(node, True) for node in ctx.broker.fenced_brokers(listener)]
    return [{"broker_id": n.node_id, "host": n.host, "port": n.port, "rack": n.rack, "is_fenced": fenced}
            for n, fenced in listed]


error_response = error_responder(KEY)
