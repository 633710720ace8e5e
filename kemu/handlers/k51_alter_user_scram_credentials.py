"""AlterUserScramCredentials (key 51), version 0 (KIP-554).

Upserts and deletes users' SCRAM credentials in the broker's store (persisted in the data directory);
the client sends the salt and salted password it computed, from which the stored and server keys are
derived. As Kafka's ScramControlManager.alterCredentials: a user may be named once per request (a second
deletion or upsertion of the same user, whatever the mechanism, is DUPLICATE_RESOURCE and cancels the
first); an empty name is UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM,
iterations outside 4096-16384 UNACCEPTABLE_CREDENTIAL, deleting a credential that does not exist
RESOURCE_NOT_FOUND, an empty salted password (which Kafka's HMAC refuses) UNKNOWN_SERVER_ERROR without a
message. The rest is applied together; the results list the deletions, the upsertions, then the refusals,
each group in its Java HashMap's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.hashing import java_hash_map_order
from kemu.security.scram import MAX_ITERATIONS, MECHANISMS_BY_ID, MIN_ITERATIONS, credential_from_salted_password
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k51_alter_user_scram_credentials import (
        AlterUserScramCredentialsRequest,
        AlterUserScramCredentialsRequestDeletions,
        AlterUserScramCredentialsRequestUpsertions,
        AlterUserScramCredentialsResponse,
        AlterUserScramCredentialsResponseResults,
    )

KEY = 51
_TWICE = "A user credential cannot be altered twice in the same request"


def _name_and_mechanism_error(name: str, mechanism: str | None) -> tuple[ErrorCode, str] | None:
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


async def handle(ctx: RequestContext,
                 request: Incoming[AlterUserScramCredentialsRequest]) -> AlterUserScramCredentialsResponse:
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    store = ctx.broker.scram_credentials
    deletions: dict[str, AlterUserScramCredentialsRequestDeletions] = {}
    upsertions: dict[str, AlterUserScramCredentialsRequestUpsertions] = {}
    errors: dict[str, tuple[ErrorCode, str | None]] = {}
    for deletion in request.body["deletions"]:
        name, mechanism = deletion["name"], MECHANISMS_BY_ID.get(deletion["mechanism"])
        if name in errors:
            continue
        if deletions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
        elif refused := _name_and_mechanism_error(name, mechanism):
            errors[name] = refused
        elif mechanism is not None and store.get(name, mechanism) is None:
            errors[name] = (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
        else:
            deletions[name] = deletion
    for upsertion in request.body["upsertions"]:
        name, mechanism = upsertion["name"], MECHANISMS_BY_ID.get(upsertion["mechanism"])
        if name in errors:
            continue
        if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, _TWICE)
        elif refused := _name_and_mechanism_error(name, mechanism):
            errors[name] = refused
        elif upsertion["iterations"] < MIN_ITERATIONS:
            errors[name] = (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
        elif upsertion["iterations"] > MAX_ITERATIONS:
            errors[name] = (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
        else:
            upsertions[name] = upsertion
    results: list[AlterUserScramCredentialsResponseResults] = []
    for name in java_hash_map_order(deletions):
        mechanism = MECHANISMS_BY_ID[deletions[name]["mechanism"]]
        store.delete(name, mechanism)
        results.append({"user": name, "error_code": ErrorCode.NONE, "error_message": None})
    for name in java_hash_map_order(upsertions):
        upsertion = upsertions[name]
        if not upsertion["salted_password"]:
            errors[name] = (ErrorCode.UNKNOWN_SERVER_ERROR, None)  # Java's HMAC: "Empty key"
            continue
        mechanism = MECHANISMS_BY_ID[upsertion["mechanism"]]
        store.put(name, mechanism, credential_from_salted_password(
            mechanism, bytes(upsertion["salt"]), bytes(upsertion["salted_password"]), upsertion["iterations"]))
        results.append({"user": name, "error_code": ErrorCode.NONE, "error_message": None})
    for name in java_hash_map_order(errors):
        code, message = errors[name]
        results.append({"user": name, "error_code": code, "error_message": message})
    return {"results": results}


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's: every user named gets the error."""
    users = dict.fromkeys(e["name"] for e in (*request.body["deletions"], *request.body["upsertions"]))
    return {"results": [{"user": user, "error_code": code, "error_message": message} for user in users]}
