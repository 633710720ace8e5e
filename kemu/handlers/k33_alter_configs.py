"""AlterConfigs (key 33), versions 0-2: replace every override of a resource with the request's set.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible. Deprecated by Kafka in
favour of IncrementalAlterConfigs: configs left out of the request are removed. TOPIC and BROKER
resources only (BROKER_LOGGER is "Unknown resource type 8", as in Kafka); `validate_only` checks without
changing anything. The checks and their order are Kafka's — see kemu.admin.configs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.admin.configs import ConfigChange, OpType, ResourceChange
from kemu.handlers._alter_configs import answer_alter, same_error_for_every_resource
from kemu.handlers.context import RequestContext

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k33_alter_configs import AlterConfigsRequest, AlterConfigsResponse

KEY = 33

SUSPENDS = True  # a request of many resources yields to the event loop between slices


async def handle(ctx: RequestContext, request: Incoming[AlterConfigsRequest]) -> AlterConfigsResponse:
    body = request.body
    resources = [ResourceChange(r["resource_type"], r["resource_name"],
                                [ConfigChange(c["name"], OpType.SET, c["value"]) for c in r["configs"]])
                 for r in body["resources"]]
    return await answer_alter(ctx, resources, body["validate_only"], incremental=False)


# Kafka's AlterConfigsRequest.getErrorResponse: the same error for every resource.
error_response = same_error_for_every_resource(KEY)
