"""What AlterConfigs (33) and IncrementalAlterConfigs (44) share: the two requests carry resources and
configs in the same shape and answer in the same shape. They differ in the operation of each config
(AlterConfigs always sets, replacing the whole override set) — which kemu.admin.configs applies.
"""

from __future__ import annotations

from typing import Any

import trio

from kemu.admin.configs import ConfigChange, OpType, Outcome, ResourceChange, altering
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ErrorResponder, each, error_responder
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode


async def answer_alter(ctx: RequestContext, request: Request, incremental: bool) -> dict[str, Any]:
    body = request.body
    resources = [
        ResourceChange(r["resource_type"], r["resource_name"],
                       [ConfigChange(c["name"], c["config_operation"] if incremental else OpType.SET,
                                     c["value"])
                        for c in r["configs"]])
        for r in body["resources"]
    ]
    denied = [authz.config_denied(ctx, authz.ALTER_CONFIGS, r.resource_type, r.resource_name) for r in resources]
    allowed = [r for r, code in zip(resources, denied, strict=True) if code is ErrorCode.NONE]
    altered: list[Outcome] = []
    with trio.CancelScope(shield=True):  # begun, it completes whatever the client does, as Kafka's would
        for _ in altering(ctx.broker, allowed, body["validate_only"], incremental, altered, node_id=ctx.node_id):
            await trio.lowlevel.checkpoint()  # other connections are served between slices of a big request
    outcomes = iter(altered)
    # A refusal is Kafka's ApiError without a message: the error's own ("Cluster authorization failed.").
    errors = [(code, code.message) if code is not ErrorCode.NONE else _error_of(next(outcomes)) for code in denied]
    return {"responses": [
        {"error_code": int(code), "error_message": message,
         "resource_type": resource.resource_type, "resource_name": resource.resource_name}
        for resource, (code, message) in zip(resources, errors, strict=True)
    ]}


def _error_of(outcome: Any) -> tuple[ErrorCode, str | None]:
    return outcome.error, outcome.message


def same_error_for_every_resource(api_key: int) -> ErrorResponder:
    """Kafka's (Incremental)AlterConfigsRequest.getErrorResponse."""
    return error_responder(api_key, responses=each("resources", resource_type="resource_type",
                                                   resource_name="resource_name"))
