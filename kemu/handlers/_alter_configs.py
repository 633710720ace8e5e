"""What AlterConfigs (33) and IncrementalAlterConfigs (44) share: the two requests carry resources and
configs in the same shape and answer in the same shape. They differ in the operation of each config
(AlterConfigs always sets, replacing the whole override set) — which kemu.admin.configs applies.
"""

from __future__ import annotations

from typing import Any

from kemu.admin.configs import ConfigChange, OpType, ResourceChange, alter
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode


def answer_alter(ctx: RequestContext, request: Request, incremental: bool) -> dict[str, Any]:
    body = request.body
    resources = [
        ResourceChange(r["resource_type"], r["resource_name"],
                       [ConfigChange(c["name"], c["config_operation"] if incremental else OpType.SET,
                                     c["value"])
                        for c in r["configs"]])
        for r in body["resources"]
    ]
    outcomes = alter(ctx.broker, resources, body["validate_only"], incremental=incremental)
    return {"throttle_time_ms": 0, "responses": [
        {"error_code": int(outcome.error), "error_message": outcome.message,
         "resource_type": resource.resource_type, "resource_name": resource.resource_name}
        for resource, outcome in zip(resources, outcomes)
    ]}


def same_error_for_every_resource(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's (Incremental)AlterConfigsRequest.getErrorResponse."""
    return {"throttle_time_ms": 0, "responses": [
        {"error_code": int(code), "error_message": message, "resource_type": r["resource_type"],
         "resource_name": r["resource_name"]}
        for r in request.body["resources"]
    ]}
