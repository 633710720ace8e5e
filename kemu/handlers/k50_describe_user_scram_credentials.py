"""DescribeUserScramCredentials (key 50), version 0 (KIP-554).

Each user's SCRAM mechanisms and iteration counts (never salts or keys), as Kafka's ScramImage.describe
answers: no users (null or empty) lists every user with a credential; a user asked for twice is
DUPLICATE_RESOURCE, one without a credential RESOURCE_NOT_FOUND, each with Kafka's message; the users in
the order of the Java HashMap Kafka collects them in, messages of successes at their default, "".
Without DESCRIBE on the cluster it is CLUSTER_AUTHORIZATION_FAILED, with one result per user named (each
with that error and the user name unset, ""); Kafka's error
response cannot be built for a request naming no users (null: a NullPointerException), which closes the
connection, and so does kemu.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.hashing import java_hash_map_order
from kemu.security.scram import MECHANISM_IDS
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k50_describe_user_scram_credentials import (
        DescribeUserScramCredentialsRequest,
        DescribeUserScramCredentialsResponse,
        DescribeUserScramCredentialsResponseResults,
        DescribeUserScramCredentialsResponseResultsCredentialInfos,
    )

KEY = 50


async def handle(ctx: RequestContext,
                 request: Incoming[DescribeUserScramCredentialsRequest]) -> DescribeUserScramCredentialsResponse:
    authz.require_cluster(ctx, authz.DESCRIBE)
    store = ctx.broker.scram_credentials
    asked = request.body["users"]
    names = store.users() if not asked else [entry["name"] for entry in asked]
    results: list[DescribeUserScramCredentialsResponseResults] = []
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
        infos: list[DescribeUserScramCredentialsResponseResultsCredentialInfos] = [
            {"mechanism": MECHANISM_IDS[mechanism], "iterations": credential.iterations}
            for mechanism, credential in sorted(credentials.items())]
        results.append({"user": name, "error_code": 0, "error_message": "", "credential_infos": infos})
    return {"error_code": 0, "error_message": "", "results": results}


# Kafka's DescribeUserScramCredentialsRequest.getErrorResponse: one result per user asked, its error, and
# its user left unset ("").
_respond = error_responder(KEY, results=each("users"))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any] | None:
    return None if request.body["users"] is None else _respond(request, code, message)
