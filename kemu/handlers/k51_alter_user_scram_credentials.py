"""AlterUserScramCredentials (key 51), version 0 (KIP-554).

Upserts and deletes users' SCRAM credentials in the broker's store (persisted in the data directory);
the client sends the salt and salted password it computed, from which the stored and server keys are
derived. One result per user named, as Kafka's ScramControlManager answers: a user whose alterations
include one it refuses has none of them applied — an unknown mechanism is UNSUPPORTED_SASL_MECHANISM,
iterations outside 4096-16384 UNACCEPTABLE_CREDENTIAL, an empty name UNACCEPTABLE_CREDENTIAL, the same
user and mechanism twice DUPLICATE_RESOURCE, deleting a credential that does not exist RESOURCE_NOT_FOUND.
"""

from __future__ import annotations

from typing import Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.security.scram import (
    MAX_ITERATIONS,
    MECHANISMS_BY_ID,
    MIN_ITERATIONS,
    ScramCredential,
    credential_from_salted_password,
)
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

KEY = 51

Change = tuple[str, ScramCredential | None]  # (mechanism, credential to store, or None to delete)


async def handle(ctx: RequestContext, request: Request) -> dict[str, Any]:
    authz.require_cluster(ctx, authz.ALTER)
    store = ctx.broker.scram_credentials
    order: list[str] = []
    errors: dict[str, tuple[ErrorCode, str]] = {}
    changes: dict[str, list[Change]] = {}
    seen: set[tuple[str, int]] = set()

    def refuse(user: str, code: ErrorCode, message: str) -> None:
        errors.setdefault(user, (code, message))

    def note(user: str, mechanism_id: int) -> str | None:
        if user not in order:
            order.append(user)
        if (user, mechanism_id) in seen:
            refuse(user, ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")
        seen.add((user, mechanism_id))
        if not user:
            refuse(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        mechanism = MECHANISMS_BY_ID.get(mechanism_id)
        if mechanism is None:
            refuse(user, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        return mechanism

    for deletion in request.body["deletions"]:
        user = deletion["name"]
        mechanism = note(user, deletion["mechanism"])
        if mechanism is not None:
            if store.get(user, mechanism) is None:
                refuse(user, ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
            changes.setdefault(user, []).append((mechanism, None))
    for upsertion in request.body["upsertions"]:
        user = upsertion["name"]
        mechanism = note(user, upsertion["mechanism"])
        iterations = upsertion["iterations"]
        if iterations < MIN_ITERATIONS:
            refuse(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        elif iterations > MAX_ITERATIONS:
            refuse(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        if mechanism is not None:
            credential = credential_from_salted_password(mechanism, bytes(upsertion["salt"]),
                                                         bytes(upsertion["salted_password"]), iterations)
            changes.setdefault(user, []).append((mechanism, credential))
    results = []
    for user in order:
        if user in errors:
            code, message = errors[user]
            results.append({"user": user, "error_code": code, "error_message": message})
            continue
        for mechanism, stored in changes.get(user, []):
            if stored is None:
                store.delete(user, mechanism)
            else:
                store.put(user, mechanism, stored)
        results.append({"user": user, "error_code": 0, "error_message": None})
    return {"results": results}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's: every user named gets the error."""
    users = dict.fromkeys(e["name"] for e in (*request.body["deletions"], *request.body["upsertions"]))
    return {"results": [{"user": user, "error_code": code, "error_message": message} for user in users]}
