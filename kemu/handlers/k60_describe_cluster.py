"""DescribeCluster (key 60), versions 0-2 (KIP-700), flexible throughout.

v1 adds the endpoint type (KIP-919): this is a broker endpoint, so asking it for controllers (2) is
MISMATCHED_ENDPOINT_TYPE, and for a type Kafka does not know UNSUPPORTED_ENDPOINT_TYPE, as on Kafka. v2
(KIP-1073) lists the fenced brokers too when asked, each broker saying whether it is: a node of a
many-broker kemu that was stopped stays registered and fenced, as a Kafka broker that shut down does;
otherwise only the live brokers are listed, by id as Kafka's metadata image holds them. Cluster authorized
operations, when asked for, are what the authorizer allows (0 without DESCRIBE on the cluster; every
operation without an authorizer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k60_describe_cluster import (
        DescribeClusterRequest,
        DescribeClusterResponse,
        DescribeClusterResponseBrokers,
    )

KEY = 60

BROKER_ENDPOINT = 1
ENDPOINT_TYPES = {1: "BROKER", 2: "CONTROLLER"}  # EndpointType.fromId: any other id is UNKNOWN


async def handle(ctx: RequestContext, request: Incoming[DescribeClusterRequest]) -> DescribeClusterResponse:
    body, broker = request.body, ctx.broker
    if body["endpoint_type"] != BROKER_ENDPOINT:
        # AuthHelper.computeDescribeClusterResponse: v0 says INVALID_REQUEST for either refusal.
        kind = ENDPOINT_TYPES.get(body["endpoint_type"])
        if kind is None:
            code = ErrorCode.INVALID_REQUEST if request.version == 0 else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
            return cast("DescribeClusterResponse",
                        error_response(request, code, f"Unsupported endpoint type {body['endpoint_type']}"))
        code = ErrorCode.INVALID_REQUEST if request.version == 0 else ErrorCode.MISMATCHED_ENDPOINT_TYPE
        return cast("DescribeClusterResponse", error_response(
            request, code, f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
                           f"{kind}"))
    return {
        "error_code": 0,
        "error_message": None,
        "endpoint_type": BROKER_ENDPOINT,
        "cluster_id": broker.cluster_id,
        "controller_id": broker.controller_id,
        "brokers": sorted(_brokers(ctx, body["include_fenced_brokers"]), key=lambda b: b["broker_id"]),
        "cluster_authorized_operations": authz.cluster_operations(ctx, body["include_cluster_authorized_operations"]),
    }


def _brokers(ctx: RequestContext, include_fenced: bool) -> list[DescribeClusterResponseBrokers]:
    listener = ctx.client.listener_name
    listed = [(node, False) for node in ctx.broker.brokers(listener)]
    if include_fenced:
        listed += [(node, True) for node in ctx.broker.fenced_brokers(listener)]
    return [{"broker_id": n.node_id, "host": n.host, "port": n.port, "rack": n.rack, "is_fenced": fenced}
            for n, fenced in listed]


error_response = error_responder(KEY)
