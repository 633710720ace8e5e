"""GetTelemetrySubscriptions (key 71), version 0, as KafkaApis answers it through ClientMetricsManager
(kemu.broker.client_metrics): the zero instance id gets a new one; the subscription is every CLIENT_METRICS
resource matching the client (its id, the software it named in ApiVersions, its address and port); a request
before the push interval has passed is THROTTLING_QUOTA_EXCEEDED unless the client's last push failed on its
subscription id or compression type. Served whether or not the receiver (`kemu.client.telemetry.enable`) is
on, as Kafka serves it; ApiVersions lists it only with the receiver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kemu.broker.client_metrics import ACCEPTED_COMPRESSION_TYPES, ClientAttributes
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k71_get_telemetry_subscriptions import (
        GetTelemetrySubscriptionsRequest,
        GetTelemetrySubscriptionsResponse,
    )

KEY = 71


def client_attributes(ctx: RequestContext) -> ClientAttributes:
    client = ctx.client
    return ClientAttributes(ctx.client_id, client.software_name, client.software_version, client.host, client.port)


async def handle(ctx: RequestContext,
                 request: Incoming[GetTelemetrySubscriptionsRequest]) -> GetTelemetrySubscriptionsResponse:
    metrics = ctx.broker.client_metrics
    answer = metrics.get_subscriptions(request.body["client_instance_id"], client_attributes(ctx))
    instance = answer.instance
    if instance is None:
        return cast("GetTelemetrySubscriptionsResponse", error_response(request, answer.error, None))
    return {"error_code": 0, "client_instance_id": instance.instance_id, "subscription_id": instance.subscription_id,
            "accepted_compression_types": list(ACCEPTED_COMPRESSION_TYPES),
            "push_interval_ms": instance.push_interval_ms, "telemetry_max_bytes": metrics.max_bytes,
            "delta_temporality": True, "requested_metrics": list(instance.metrics)}


error_response = error_responder(KEY)
