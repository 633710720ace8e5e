"""PushTelemetry (key 72), version 0, as KafkaApis answers it through ClientMetricsManager
(kemu.broker.client_metrics), in its order: a reserved instance id (zero, one) is INVALID_REQUEST; a push after
the client's terminating one INVALID_REQUEST; before the push interval THROTTLING_QUOTA_EXCEEDED (but the
first after a GetTelemetrySubscriptions, and a terminating one); another subscription id
UNKNOWN_SUBSCRIPTION_ID; a compression type Kafka does not know UNSUPPORTED_COMPRESSION_TYPE; more than
telemetry.max.bytes TELEMETRY_TOO_LARGE; metrics that do not decompress within telemetry.max.bytes
INVALID_RECORD (Kafka's export fails). With the receiver on (`kemu.client.telemetry.enable`) the decompressed
metrics are kept for inspect(); off, they are dropped as by a Kafka without a receiver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.handlers.k71_get_telemetry_subscriptions import client_attributes

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k72_push_telemetry import PushTelemetryRequest, PushTelemetryResponse

KEY = 72


async def handle(ctx: RequestContext, request: Incoming[PushTelemetryRequest]) -> PushTelemetryResponse:
    body = request.body
    error = ctx.broker.client_metrics.push(body["client_instance_id"], body["subscription_id"], body["terminating"],
                                           body["compression_type"], bytes(body["metrics"] or b""),
                                           client_attributes(ctx))
    return {"error_code": int(error)}


error_response = error_responder(KEY)
