"""DescribeUserScramCredentials (key 50), version 0 (KIP-554).

Each user's SCRAM mechanisms and iteration counts (never salts or keys), as Kafka's ScramImage.describe
answers: no users (null or empty) lists every user with a credential; a user asked for twice is
DUPLICATE_RESOURCE, one without a credential RESOURCE_NOT_FOUND, each with Kafka's message; the users in
the order of the Java HashMap Kafka collects them in, messages of successes at their default, "".
Without DESCRIBE on the cluster it is CLUSTER_AUTHORIZATION_FAILED, for every user named; Kafka's error
response cannot be built for a request naming no users (null: a NullPointerException), which closes the
connection, and so does kemu.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.hashing import java_hash_map_order
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
    for name in java_hash_map_order(names):
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
        results.append({"user": name, "error_code": 0, "error_message": "", "credential_infos": infos})
    return {"error_code": 0, "error_message": "", "results": results}


_respond = error_responder(KEY)


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any] | None:
    return None if request.body["users"] is None else _respond(request, code, message)
