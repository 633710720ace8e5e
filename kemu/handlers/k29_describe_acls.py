"""DescribeAcls (key 29), versions 1-3 (Kafka 4 dropped v0).

v1 adds the pattern type filter (ANY, MATCH, LITERAL, PREFIXED); v2 is flexible; v3 the USER resource type.
As AclApis.handleDescribeAcls: DESCRIBE on the cluster or CLUSTER_AUTHORIZATION_FAILED; with no authorizer
SECURITY_DISABLED ("No Authorizer is configured on the broker"); else the ACLs the filter matches, grouped
by resource pattern. A filter with an UNKNOWN element is a request Kafka cannot parse: the connection is
closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k29_describe_acls import (
        DescribeAclsRequest,
        DescribeAclsResponse,
        DescribeAclsResponseResourcesAcls,
    )

KEY = 29
VERSIONS = NARROWED[KEY]


async def handle(ctx: RequestContext, request: Incoming[DescribeAclsRequest]) -> DescribeAclsResponse:
    acl_filter = authz.acl_filter(request.body)
    authz.authorize_cluster_operation(ctx, request, authz.DESCRIBE)
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return {"error_code": ErrorCode.SECURITY_DISABLED, "error_message": "No Authorizer is configured on the broker",
                "resources": []}
    resources: dict[tuple[int, str, int], list[DescribeAclsResponseResourcesAcls]] = {}
    for acl in authorizer.describe(acl_filter):
        resources.setdefault((acl.resource_type, acl.name, acl.pattern_type), []).append(
            {"principal": acl.principal, "host": acl.host, "operation": acl.operation,
             "permission_type": acl.permission})
    # A success leaves the message at its default, the empty string.
    return {"error_code": ErrorCode.NONE, "error_message": "", "resources": [
        {"resource_type": kind, "resource_name": name, "pattern_type": pattern, "acls": acls}
        for (kind, name, pattern), acls in resources.items()]}


_respond = error_responder(KEY)


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any] | None:
    return None if code is ErrorCode.INVALID_REQUEST else _respond(request, code, message)
