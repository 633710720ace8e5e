"""DescribeUserScramCredentials (key 50), version 0 (KIP-554).

Each user's SCRAM mechanisms and iteration counts (never salts or keys), as Kafka's ScramImage.describe
answers: no users (null or empty) lists every user with a credential; a user asked for twice is
DUPLICATE_RESOURCE, one without a credential RESOURCE_NOT_FOUND, each with Kafka's message.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.security.scram import MECHANISM_IDS
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 50


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    authz.require_cluster(ctx, authz.DESCRIBE)
    store = ctx.broker.scram_credentials
    asked = request.body["users"]
    names = store.users() if not asked else [entry["name"] for entry in asked]
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if names.count(name) > 1:
            results.append({"user": name, "error_code": ErrorCode.DUPLICATE_RESOURCE, "credential_infos": [],
                            "error_message": f"Cannot describe SCRAM credentials for the same user twice in a "
                                             f"single request: {name}"})
            continue
        credentials = store.of_user(name)
        if not credentials:
            results.append({"user": name, "error_code": ErrorCode.RESOURCE_NOT_FOUND, "credential_infos": [],
                            "error_message": f"Attempt to describe a user credential that does not exist: {name}"})
            continue
        infos = [{"mechanism": MECHANISM_IDS[mechanism], "iterations": credential.iterations}
                 for mechanism, credential in sorted(credentials.items())]
        results.append({"user": name, "error_code": 0, "error_message": None, "credential_infos": infos})
    return {"error_code": 0, "error_message": None, "results": results}


error_response = error_responder(KEY)
