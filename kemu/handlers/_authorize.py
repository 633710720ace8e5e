"""The one place handlers ask the authorizer (Kafka's AuthHelper): with the connection's principal and
address, about one resource or a set of names. Without an authorizer everything is allowed, and the
authorized-operations bitfields list every operation of the resource type."""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kemu.authorizer.acls import (
    CLUSTER_NAME,
    AclFilter,
    AclOperation,
    ResourceType,
    all_operations,
    has_unknown_code,
    operation,
    pattern_type,
    permission_type,
    resource_type,
)
from kemu.broker.errors import ApiError
from kemu.handlers.context import RequestContext

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k29_describe_acls import DescribeAclsRequest
    from kemu.wire.messages.k31_delete_acls import DeleteAclsRequestFilters
from kemu.wire.errors import ErrorCode

# A response's topic entry, of any API's TypedDict (with `name`).
Topic = TypeVar("Topic", bound=Mapping[str, Any])

NOT_REQUESTED = -2147483648  # Integer.MIN_VALUE: the client did not ask for authorized operations

READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
                                                AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE)
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS = (AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                                                   AclOperation.ALTER_CONFIGS)
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER,
                                           ResourceType.TRANSACTIONAL_ID)

DENIED = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ResourceType.DELEGATION_TOKEN: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}


def allowed(ctx: RequestContext, op: AclOperation, resource: ResourceType, name: str = CLUSTER_NAME) -> bool:
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize(ctx.client.principal, ctx.client.host, op, resource, name)


def allowed_names(ctx: RequestContext, op: AclOperation, resource: ResourceType, names: Iterable[str]) -> set[str]:
    """AuthHelper.filterByAuthorized: the names `op` is allowed on."""
    if ctx.broker.authorizer is None:
        return set(names)
    return {name for name in set(names) if allowed(ctx, op, resource, name)}


def denied_code(ctx: RequestContext, op: AclOperation, resource: ResourceType,
                name: str = CLUSTER_NAME) -> ErrorCode:
    """NONE when allowed, else the resource type's *_AUTHORIZATION_FAILED."""
    return ErrorCode.NONE if allowed(ctx, op, resource, name) else DENIED[resource]


def require(ctx: RequestContext, op: AclOperation, resource: ResourceType, name: str = CLUSTER_NAME) -> None:
    """Refuse the whole request (the API's error response) unless `op` is allowed on the resource."""
    code = denied_code(ctx, op, resource, name)
    if code is not ErrorCode.NONE:
        raise ApiError(code)


def require_cluster(ctx: RequestContext, op: AclOperation) -> None:
    """AuthHelper.authorizeClusterOperation."""
    require(ctx, op, ResourceType.CLUSTER)


def authorize_cluster_operation(ctx: RequestContext, request: Incoming[Any], op: AclOperation) -> None:
    """AuthHelper.authorizeClusterOperation, as the controller's calls and DescribeAcls use it: refuse the
    whole request unless `op` is allowed on the cluster, with Kafka's message, which quotes the request."""
    if not allowed(ctx, op, CLUSTER):
        raise ApiError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                       f"Request {request_text(ctx, request)} needs {op.name} permission.")


def request_text(ctx: RequestContext, request: Incoming[Any]) -> str:
    """RequestChannel.Request.toString as a broker shows a request it authorizes itself: kemu forwards nothing
    to a controller, so where Kafka's controller quotes the forwarded request (its own connection, an
    envelope) kemu quotes the client's. Java prints the request's Session by its identity hash, new for every
    request: here a hash of the connection and the correlation id stands in for it."""
    client = ctx.client
    session = zlib.crc32(f"{client.connection_id}/{request.header.correlation_id}".encode()) & 0x7FFFFFFF
    return (f"Request(processor=0, connectionId={client.connection_id}, "
            f"session=org.apache.kafka.network.Session@{session:x}, listenerName=ListenerName({client.listener_name}), "
            f"securityProtocol={client.security_protocol}, buffer=null, envelope=None)")


def denied_topics(ctx: RequestContext, op: AclOperation, topics: Iterable[Mapping[str, Any]]) -> set[str]:
    """The names of a request's topics (entries with `name`: any API's TypedDict) `op` is not allowed on."""
    names = {topic["name"] for topic in topics}
    return names - allowed_names(ctx, op, TOPIC, names)


def require_producer_id(ctx: RequestContext, transactional_id: str | None) -> None:
    """InitProducerId: WRITE on the transactional id; an idempotent producer needs IDEMPOTENT_WRITE on the
    cluster or WRITE on some topic (KIP-679)."""
    if transactional_id is not None:
        require(ctx, WRITE, TRANSACTIONAL_ID, transactional_id)
    elif not allowed(ctx, AclOperation.IDEMPOTENT_WRITE, CLUSTER) and not by_resource_type(ctx, WRITE, TOPIC):
        raise ApiError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)


def hide_topics(ctx: RequestContext, topics: Sequence[Topic]) -> list[Topic]:
    """An OffsetFetch of every topic of a group, without the topics the client may not DESCRIBE."""
    describable = allowed_names(ctx, DESCRIBE, TOPIC, (topic["name"] for topic in topics))
    return [topic for topic in topics if topic["name"] in describable]


ZERO_UUID = uuid.UUID(int=0)


def topic_denied(ctx: RequestContext, op: AclOperation, name: str | None, topic_id: uuid.UUID = ZERO_UUID) -> bool:
    """A topic named, or found by id, that `op` is not allowed on (an unknown id is left to the caller)."""
    if name is None and topic_id != ZERO_UUID:
        found = ctx.broker.topics.by_id(topic_id)
        name = found.name if found is not None else None
    return name is not None and not allowed(ctx, op, TOPIC, name)


# Config resource types (DescribeConfigs / AlterConfigs) and the ACL resource that guards each.
_CONFIG_RESOURCES = {2: ResourceType.TOPIC, 4: ResourceType.CLUSTER, 8: ResourceType.CLUSTER,
                     16: ResourceType.CLUSTER, 32: ResourceType.GROUP}


def config_denied(ctx: RequestContext, op: AclOperation, config_resource_type: int, name: str) -> ErrorCode:
    """DescribeConfigs / AlterConfigs: DESCRIBE_CONFIGS or ALTER_CONFIGS on the topic or group; on the cluster
    for brokers, broker loggers and client metrics."""
    resource = _CONFIG_RESOURCES.get(config_resource_type)
    if resource is None:
        return ErrorCode.NONE
    return denied_code(ctx, op, resource, CLUSTER_NAME if resource is ResourceType.CLUSTER else name)


def may_create_topic(ctx: RequestContext, name: str) -> bool:
    """CREATE on the cluster, or on the topic itself."""
    return allowed(ctx, CREATE, CLUSTER) or allowed(ctx, CREATE, TOPIC, name)


def by_resource_type(ctx: RequestContext, op: AclOperation, resource: ResourceType) -> bool:
    """Authorizer.authorizeByResourceType: `op` allowed on at least one resource of the type."""
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize_by_resource_type(ctx.client.principal, ctx.client.host, op, resource)


def operations(ctx: RequestContext, resource: ResourceType, name: str, requested: bool = True) -> int:
    """AuthHelper.authorizedOperations as the bitfield a response carries (NOT_REQUESTED when not asked)."""
    if not requested:
        return NOT_REQUESTED
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return all_operations(resource)
    return authorizer.authorized_operations(ctx.client.principal, ctx.client.host, resource, name)


def cluster_operations(ctx: RequestContext, requested: bool) -> int:
    """Metadata's and DescribeCluster's cluster_authorized_operations: 0 unless the cluster is describable."""
    if not requested:
        return NOT_REQUESTED
    if not allowed(ctx, DESCRIBE, CLUSTER):
        return 0
    return operations(ctx, CLUSTER, CLUSTER_NAME)


def acl_filter(entry: DescribeAclsRequest | DeleteAclsRequestFilters) -> AclFilter:
    """A DescribeAcls request or DeleteAcls filter as an AclBindingFilter. One Kafka cannot parse (an element
    coded 0, UNKNOWN) fails the request, which closes the connection (INVALID_REQUEST has no error response
    here); a code it does not know reads as UNKNOWN, which matches no ACL."""
    codes = (entry["resource_type_filter"], entry["pattern_type_filter"], entry["operation"], entry["permission_type"])
    found = AclFilter(resource_type(entry["resource_type_filter"]), entry["resource_name_filter"],
                      pattern_type(entry["pattern_type_filter"]), entry["principal_filter"], entry["host_filter"],
                      operation(entry["operation"]), permission_type(entry["permission_type"]))
    if has_unknown_code(*codes):
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Filter contains UNKNOWN elements: {found}")
    return found
