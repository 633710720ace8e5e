"""AlterConfigs (key 33), versions 0-2: replace every override of a resource with the request's set.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible. Deprecated by Kafka in
favour of IncrementalAlterConfigs: configs left out of the request are removed. TOPIC and BROKER
resources only (BROKER_LOGGER is "Unknown resource type 8", as in Kafka); `validate_only` checks without
changing anything. The checks and their order are Kafka's — see kemu.admin.configs.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers._alter_configs import answer_alter, same_error_for_every_resource
from kemu.handlers.context import RequestContext
from kemu.wire.codec import Request

KEY = 33

SUSPENDS = True  # a request of many resources yields to the event loop between slices


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    return await answer_alter(ctx, request, incremental=False)


# Kafka's AlterConfigsRequest.getErrorResponse: the same error for every resource.
error_response = same_error_for_every_resource(KEY)
