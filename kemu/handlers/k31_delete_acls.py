"""DeleteAcls (key 31), versions 1-3 (Kafka 4 dropped v0).

v1 adds the pattern type filter; v2 is flexible; v3 the USER resource type. As AclApis.handleDeleteAcls
and the controller's AclControlManager: ALTER on the cluster or CLUSTER_AUTHORIZATION_FAILED for every
filter; with no authorizer SECURITY_DISABLED ("No Authorizer is configured.") for every filter; else each
filter lists the ACLs it matched, and all of them are deleted at once; a filter with an element Kafka does not
know (read as UNKNOWN) is refused on its own, INVALID_REQUEST (AclControlManager.validateFilter). A filter
with an element coded 0 (UNKNOWN) is a request Kafka cannot parse: the connection is closed. Filters that
match more than the controller's 10,000 ACLs between them (one record each) fail the whole request: nothing
is deleted, every filter INVALID_REQUEST "Cannot remove more than 10000 acls in a single delete operation."
(AclControlManager keeps no partial result, which a big answer would hide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.authorizer.acls import filter_error
from kemu.authorizer.standard import TooManyRecords
from kemu.broker.errors import MAX_RECORDS_PER_USER_OP, ApiError
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k31_delete_acls import (
        DeleteAclsRequest,
        DeleteAclsResponse,
        DeleteAclsResponseFilterResults,
    )

KEY = 31
VERSIONS = NARROWED[KEY]


async def handle(ctx: RequestContext, request: Incoming[DeleteAclsRequest]) -> DeleteAclsResponse:
    filters = [authz.acl_filter(entry) for entry in request.body["filters"]]
    authz.authorize_cluster_operation(ctx, request, authz.ALTER)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        raise ApiError(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    refusals = [filter_error(acl_filter) for acl_filter in filters]
    try:
        deleted = iter(authorizer.delete([f for f, refused in zip(filters, refusals, strict=True) if refused is None],
                                         MAX_RECORDS_PER_USER_OP))
    except TooManyRecords as overflow:
        return {"filter_results": [{"error_code": ErrorCode.INVALID_REQUEST, "error_message": str(overflow),
                                    "matching_acls": []} for _ in filters]}
    results: list[DeleteAclsResponseFilterResults] = []
    for refused in refusals:
        if refused is not None:
            results.append({"error_code": ErrorCode.INVALID_REQUEST, "error_message": refused, "matching_acls": []})
            continue
        # Successes leave every message at its default, null (unlike CreateAcls' and DescribeAcls' "").
        results.append({"error_code": ErrorCode.NONE, "error_message": None, "matching_acls": [
            {"error_code": ErrorCode.NONE, "error_message": None, "resource_type": acl.resource_type,
             "resource_name": acl.name, "pattern_type": acl.pattern_type, "principal": acl.principal,
             "host": acl.host, "operation": acl.operation, "permission_type": acl.permission}
            for acl in next(deleted)]})
    return {"filter_results": results}


_respond = error_responder(KEY, filter_results=each("filters"))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any] | None:
    return None if code is ErrorCode.INVALID_REQUEST else _respond(request, code, message)
