"""What AlterConfigs (33) and IncrementalAlterConfigs (44) share: the two requests carry resources and
configs in the same shape and answer in the same shape. They differ in the operation of each config
(AlterConfigs always sets, replacing the whole override set) — which kemu.admin.configs applies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from kemu.admin.configs import Outcome, ResourceChange, altering
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ErrorResponder, each, error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    # IncrementalAlterConfigs' response has the same fields.
    from kemu.wire.messages.k33_alter_configs import AlterConfigsResponse


async def answer_alter(ctx: RequestContext, resources: list[ResourceChange], validate_only: bool,
                       incremental: bool) -> AlterConfigsResponse:
    """The request's resources, each with its changes (the handler reads them from its request), altered."""
    denied = [authz.config_denied(ctx, authz.ALTER_CONFIGS, r.resource_type, r.resource_name) for r in resources]
    allowed = [r for r, code in zip(resources, denied, strict=True) if code is ErrorCode.NONE]
    altered: list[Outcome] = []
    with trio.CancelScope(shield=True):  # begun, it completes whatever the client does, as Kafka's would
        for _ in altering(ctx.broker, allowed, validate_only, incremental, altered, node_id=ctx.node_id):
            await trio.lowlevel.checkpoint()  # other connections are served between slices of a big request
    outcomes = iter(altered)
    # A refusal is Kafka's ApiError without a message: the error's own ("Cluster authorization failed.").
    errors = [(code, code.message) if code is not ErrorCode.NONE else _error_of(next(outcomes)) for code in denied]
    return {"responses": [
        {"error_code": int(code), "error_message": message,
         "resource_type": resource.resource_type, "resource_name": resource.resource_name}
        for resource, (code, message) in zip(resources, errors, strict=True)
    ]}


def _error_of(outcome: Outcome) -> tuple[ErrorCode, str | None]:
    return outcome.error, outcome.message


def same_error_for_every_resource(api_key: int) -> ErrorResponder:
    """Kafka's (Incremental)AlterConfigsRequest.getErrorResponse."""
    return error_responder(api_key, responses=each("resources", resource_type="resource_type",
                                                   resource_name="resource_name"))
