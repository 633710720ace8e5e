"""AlterConfigs (key 33), versions 0-2: replace every override of a resource with the request's set.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible. Deprecated by Kafka in
favour of IncrementalAlterConfigs: configs left out of the request are removed. TOPIC and BROKER
resources only (BROKER_LOGGER is "Unknown resource type 8", as in Kafka); `validate_only` checks without
changing anything. The checks and their order are Kafka's — see kemu.cluster.config_admin.
"""

from __future__ import annotations

from typing import Any

from kemu.cluster.config_admin import ConfigChange, OpType, ResourceChange, alter
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 33


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body = request.body
    resources = [
        ResourceChange(r["resource_type"], r["resource_name"],
                       [ConfigChange(c["name"], OpType.SET, c["value"]) for c in r["configs"]])
        for r in body["resources"]
    ]
    outcomes = alter(ctx.broker, resources, body["validate_only"], incremental=False)
    return {"throttle_time_ms": 0, "responses": [
        {"error_code": int(outcome.error), "error_message": outcome.message,
         "resource_type": resource.resource_type, "resource_name": resource.resource_name}
        for resource, outcome in zip(resources, outcomes)
    ]}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's AlterConfigsRequest.getErrorResponse: the same error for every resource."""
    return {"throttle_time_ms": 0, "responses": [
        {"error_code": int(code), "error_message": message, "resource_type": r["resource_type"],
         "resource_name": r["resource_name"]}
        for r in request.body["resources"]
    ]}
