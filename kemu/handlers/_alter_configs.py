"""What AlterConfigs (33) and IncrementalAlterConfigs (44) share: the two requests carry resources and
configs in the same shape and answer in the same shape. They differ in the operation of each config
(AlterConfigs always sets, replacing the whole override set) — which kemu.admin.configs applies.
"""

from __future__ import annotations

from typing import Any

from kemu.admin.configs import ConfigChange, OpType, ResourceChange, alter
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ErrorResponder, each, error_responder
from kemu.wire.codec import Request


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
    return {"responses": [
        {"error_code": int(outcome.error), "error_message": outcome.message,
         "resource_type": resource.resource_type, "resource_name": resource.resource_name}
        for resource, outcome in zip(resources, outcomes, strict=True)
    ]}


def same_error_for_every_resource(api_key: int) -> ErrorResponder:
    """Kafka's (Incremental)AlterConfigsRequest.getErrorResponse."""
    return error_responder(api_key, responses=each("resources", resource_type="resource_type",
                                                   resource_name="resource_name"))
