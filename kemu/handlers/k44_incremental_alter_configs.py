"""IncrementalAlterConfigs (key 44), versions 0-1: per-key changes to a resource's configs.

Operations: SET (0), DELETE (1, back to the inherited value), APPEND (2) and SUBTRACT (3), the last two
only on LIST configs (INVALID_CONFIG otherwise). v1 is flexible. Resources: TOPIC, BROKER (this node's
id, or "" for the cluster-wide default; only configs Kafka can change at runtime) and BROKER_LOGGER (log
levels, never persisted). `validate_only` checks without changing anything. The checks and their order
are Kafka's — see kemu.cluster.config_admin. An operation id outside 0-3 is INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any

from kemu.cluster.config_admin import ConfigChange, ResourceChange, alter
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 44


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    body = request.body
    resources = [
        ResourceChange(r["resource_type"], r["resource_name"],
                       [ConfigChange(c["name"], c["config_operation"], c["value"]) for c in r["configs"]])
        for r in body["resources"]
    ]
    outcomes = alter(ctx.broker, resources, body["validate_only"], incremental=True)
    return {"throttle_time_ms": 0, "responses": [
        {"error_code": int(outcome.error), "error_message": outcome.message,
         "resource_type": resource.resource_type, "resource_name": resource.resource_name}
        for resource, outcome in zip(resources, outcomes)
    ]}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's IncrementalAlterConfigsRequest.getErrorResponse: the same error for every resource."""
    return {"throttle_time_ms": 0, "responses": [
        {"error_code": int(code), "error_message": message, "resource_type": r["resource_type"],
         "resource_name": r["resource_name"]}
        for r in request.body["resources"]
    ]}
