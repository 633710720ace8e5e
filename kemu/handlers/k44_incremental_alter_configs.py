"""IncrementalAlterConfigs (key 44), versions 0-1: per-key changes to a resource's configs.

Operations: SET (0), DELETE (1, back to the inherited value), APPEND (2) and SUBTRACT (3), the last two
only on LIST configs (INVALID_CONFIG otherwise). v1 is flexible. Resources: TOPIC, BROKER (this node's
id, or "" for the cluster-wide default; only configs Kafka can change at runtime) and BROKER_LOGGER (log
levels, never persisted). `validate_only` checks without changing anything. The checks and their order
are Kafka's — see kemu.admin.configs. An operation id outside 0-3 is INVALID_REQUEST.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.admin.configs import ConfigChange, ResourceChange
from kemu.handlers._alter_configs import answer_alter, same_error_for_every_resource
from kemu.handlers.context import RequestContext

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k44_incremental_alter_configs import (
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResponse,
    )

KEY = 44

SUSPENDS = True  # a request of many resources yields to the event loop between slices


async def handle(ctx: RequestContext,
                 request: Incoming[IncrementalAlterConfigsRequest]) -> IncrementalAlterConfigsResponse:
    body = request.body
    resources = [ResourceChange(r["resource_type"], r["resource_name"],
                                [ConfigChange(c["name"], c["config_operation"], c["value"]) for c in r["configs"]])
                 for r in body["resources"]]
    return await answer_alter(ctx, resources, body["validate_only"], incremental=True)


# Kafka's IncrementalAlterConfigsRequest.getErrorResponse: the same error for every resource.
error_response = same_error_for_every_resource(KEY)
