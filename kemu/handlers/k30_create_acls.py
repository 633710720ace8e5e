"""CreateAcls (key 30), versions 1-3 (Kafka 4 dropped v0).

v1 adds the pattern type; v2 is flexible; v3 the USER resource type. As AclApis.handleCreateAcls and the
controller's AclControlManager: ALTER on the cluster or CLUSTER_AUTHORIZATION_FAILED for every creation;
with no authorizer SECURITY_DISABLED ("No Authorizer is configured.") for every creation. Each ACL is then
checked on its own (INVALID_REQUEST: a CLUSTER resource not named kafka-cluster, an empty name, then the
controller's checks: an element Kafka does not know, a principal without a type), the rest created; an ACL
that exists already is a success. ANY (or MATCH) in a creation fails Kafka's constructors, so the whole
request: UNKNOWN_SERVER_ERROR, with no message, for every creation. More than the controller's 10,000 new
ACLs (one record each: not one that exists, is named twice or is refused) overflow its list of records:
nothing is created, and every creation the broker passed on is answered POLICY_VIOLATION "Unable to perform
excessively large batch operation." (QuorumController's answer to BoundedListTooLongException), those the
broker refused itself keeping their own INVALID_REQUEST. A creation with an element coded 0
(UNKNOWN) is a request Kafka cannot parse: the connection is closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.authorizer.acls import (
    AclBinding,
    broker_acl_error,
    constructor_error,
    has_unknown_code,
    operation,
    pattern_type,
    permission_type,
    resource_type,
)
from kemu.authorizer.standard import TooManyRecords
from kemu.broker.errors import MAX_RECORDS_PER_USER_OP, TOO_MANY_RECORDS, ApiError
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k30_create_acls import CreateAclsRequest, CreateAclsResponse, CreateAclsResponseResults

KEY = 30
VERSIONS = NARROWED[KEY]


async def handle(ctx: RequestContext, request: Incoming[CreateAclsRequest]) -> CreateAclsResponse:
    acls = [AclBinding(resource_type(c["resource_type"]), c["resource_name"], pattern_type(c["resource_pattern_type"]),
                       c["principal"], c["host"], operation(c["operation"]), permission_type(c["permission_type"]))
            for c in request.body["creations"]]
    if any(has_unknown_code(c["resource_type"], c["resource_pattern_type"], c["operation"], c["permission_type"])
           for c in request.body["creations"]):
        raise ApiError(ErrorCode.INVALID_REQUEST, "CreatableAcls contain unknown elements")
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        raise ApiError(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    if any(constructor_error(acl) for acl in acls):
        # An IllegalArgumentException Kafka did not expect: ApiError.fromThrowable keeps no message.
        raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR)
    results: list[CreateAclsResponseResults] = []
    try:
        errors = authorizer.create(acls, MAX_RECORDS_PER_USER_OP)
    except TooManyRecords:
        for acl in acls:
            refused = broker_acl_error(acl)
            results.append({"error_code": ErrorCode.POLICY_VIOLATION if refused is None else ErrorCode.INVALID_REQUEST,
                            "error_message": TOO_MANY_RECORDS if refused is None else refused})
        return {"results": results}
    for error in errors:
        # A success leaves the message at its default, the empty string.
        results.append({"error_code": ErrorCode.INVALID_REQUEST if error else ErrorCode.NONE,
                        "error_message": error or ""})
    return {"results": results}


_respond = error_responder(KEY, results=each("creations"))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any] | None:
    return None if code is ErrorCode.INVALID_REQUEST else _respond(request, code, message)
