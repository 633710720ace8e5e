"""CreatePartitions (key 37), versions 0-3.

v1 is v0 on the wire (the response may come before throttling); v2 is flexible; v3 may answer
THROTTLING_QUOTA_EXCEEDED (KIP-599; kemu never throttles). `count` is the topic's new total; null
`assignments` let the broker place the new partitions. The new partitions get their logs at once and show
in the next Metadata; `validate_only` checks without adding; `timeout_ms` is moot (creation completes
before the response). Checks and messages: kemu.admin.partitions (Kafka's KRaft controller).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from kemu.admin.partitions import NewPartitions, plan_partitions
from kemu.handlers import _authorize as authz
from kemu.handlers._creating import create
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k37_create_partitions import (
        CreatePartitionsRequest,
        CreatePartitionsResponse,
        CreatePartitionsResponseResults,
    )

KEY = 37
# Creations queue one after another and make their logs in steps (kemu.handlers._creating).
SUSPENDS = True


async def handle(ctx: RequestContext, request: Incoming[CreatePartitionsRequest]) -> CreatePartitionsResponse:
    body = request.body
    wanted = [
        NewPartitions(t["name"], t["count"],
                      None if t["assignments"] is None else [list(a["broker_ids"]) for a in t["assignments"]])
        for t in body["topics"]
    ]
    # ControllerApis.createPartitions: duplicate names answered first (in the order of their HashSet), then the
    # topics not alterable, then the controller's results; only the names given once are checked, and handed
    # to the controller in the order of the HashSet of the names.
    counts = Counter(t.name for t in wanted)
    duplicates = [name for name, seen in counts.items() if seen > 1]
    once = [name for name in java_hash_map_order(counts) if counts[name] == 1]
    alterable = authz.allowed_names(ctx, authz.ALTER, authz.TOPIC, once)
    entry = {t.name: t for t in wanted if counts[t.name] == 1}
    outcomes = await create(ctx.broker, lambda: plan_partitions(
        ctx.broker, [entry[name] for name in once if name in alterable], body["validate_only"]))
    results: list[CreatePartitionsResponseResults] = [
        {"name": name, "error_code": ErrorCode.INVALID_REQUEST, "error_message": "Duplicate topic name."}
        for name in java_hash_map_order(duplicates)]
    results += [{"name": name, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "error_message": None}
                for name in once if name not in alterable]
    results += [{"name": o.name, "error_code": int(o.error), "error_message": o.message} for o in outcomes]
    return {"results": results}


error_response = error_responder(KEY, results=each("topics", name="name"))
