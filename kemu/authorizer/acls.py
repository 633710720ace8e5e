"""ACL bindings and binding filters, with Kafka's codes for resource types, pattern types, operations and
permissions (org.apache.kafka.common.acl / .resource), and the validation Kafka's controller applies to a
new ACL (AclControlManager.validateNewAcl).

A code the broker does not know reads as UNKNOWN (0), as Kafka's `fromCode` does.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

WILDCARD = "*"  # a resource name or host matching any
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the only name a CLUSTER resource has


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class PermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def resource_type(code: int) -> ResourceType:
    return ResourceType(code) if code in ResourceType._value2member_map_ else ResourceType.UNKNOWN


def pattern_type(code: int) -> PatternType:
    return PatternType(code) if code in PatternType._value2member_map_ else PatternType.UNKNOWN


def operation(code: int) -> AclOperation:
    return AclOperation(code) if code in AclOperation._value2member_map_ else AclOperation.UNKNOWN


def permission_type(code: int) -> PermissionType:
    return PermissionType(code) if code in PermissionType._value2member_map_ else PermissionType.UNKNOWN


# NamedTuples, not frozen dataclasses: a dataclass definition compiles its generated methods (~0.5 ms each on
# a slow machine), and Metadata's authorized-operations bitfields import this module into every start-up.
class AclBinding(NamedTuple):
    """One ACL: who (principal, host) may or may not (permission) do what (operation) to which resources
    (type, name, and whether the name is the resource's or a prefix of it)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: PermissionType


class AclFilter(NamedTuple):
    """An AclBindingFilter: None matches any name, principal or host; ANY any type, operation, permission;
    pattern MATCH finds the ACLs that would apply to the named resource (its literal, the wildcard, and
    the prefixes of its name)."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: PermissionType

    def is_unknown(self) -> bool:
        return (self.resource_type is ResourceType.UNKNOWN or self.pattern_type is PatternType.UNKNOWN
                or self.operation is AclOperation.UNKNOWN or self.permission is PermissionType.UNKNOWN)

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        # ResourcePatternFilter.matches
        if self.resource_type is not ResourceType.ANY and self.resource_type is not acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, acl.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, acl.pattern_type):
            return self.name == acl.name
        if acl.pattern_type is PatternType.LITERAL:
            return self.name == acl.name or acl.name == WILDCARD
        return self.name.startswith(acl.name)

    def _matches_entry(self, acl: AclBinding) -> bool:
        # AccessControlEntryFilter.matches
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation is not acl.operation:
            return False
        return self.permission is PermissionType.ANY or self.permission is acl.permission


def has_unknown_code(*codes: int) -> bool:
    """A CreateAcls creation or Describe/DeleteAcls filter Kafka's request cannot even parse: an element whose
    code is UNKNOWN's own, 0 (the request's validate() fails, which closes the connection). A code Kafka does
    not know (99) reads as UNKNOWN and is refused later, for that element only."""
    return 0 in codes


def constructor_error(acl: AclBinding) -> str | None:
    """What Kafka's ResourcePattern / AccessControlEntry constructors refuse (IllegalArgumentException,
    which fails the whole CreateAcls request with UNKNOWN_SERVER_ERROR): ANY, or a filter-only pattern."""
    if acl.resource_type is ResourceType.ANY:
        return "resourceType must not be ANY"
    if acl.pattern_type in (PatternType.MATCH, PatternType.ANY):
        return f"patternType must not be {acl.pattern_type.name}"
    if acl.operation is AclOperation.ANY:
        return "operation must not be ANY"
    if acl.permission is PermissionType.ANY:
        return "permissionType must not be ANY"
    return None


def broker_acl_error(acl: AclBinding) -> str | None:
    """Why the broker refuses to create this one ACL before the controller sees it (AclApis.handleCreateAcls:
    INVALID_REQUEST with this message), or None."""
    if acl.resource_type is ResourceType.CLUSTER and acl.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not acl.name:
        return "Invalid empty resource name"
    return None


def new_acl_error(acl: AclBinding) -> str | None:
    """Why Kafka refuses to create this one ACL (INVALID_REQUEST with this message), or None: first the
    broker's checks (`broker_acl_error`), then the controller's (AclControlManager.validateNewAcl)."""
    refused = broker_acl_error(acl)
    if refused is not None:
        return refused
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {acl.resource_type.name}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type.name}"
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {acl.operation.name}"
    if acl.permission not in (PermissionType.DENY, PermissionType.ALLOW):
        return f"Invalid permissionType {acl.permission.name}"
    if ":" not in acl.principal:
        return (f"Could not parse principal from `{acl.principal}` (no colon is present separating the principal "
                "type from the principal name)")
    return None


def filter_error(acl_filter: AclFilter) -> str | None:
    """Why Kafka's controller refuses a DeleteAcls filter (AclControlManager.validateFilter: INVALID_REQUEST
    for that filter), or None."""
    if acl_filter.resource_type is ResourceType.UNKNOWN or acl_filter.pattern_type is PatternType.UNKNOWN:
        return "Unknown patternFilter."
    if acl_filter.operation is AclOperation.UNKNOWN or acl_filter.permission is PermissionType.UNKNOWN:
        return "Unknown entryFilter."
    return None


def _bits(*operations: AclOperation) -> int:
    return sum(1 << op for op in operations)


# The operations each resource type has (Kafka's authorizedOperations asks about exactly these).
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
                         AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE,
                         AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE,
                           AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                           AclOperation.IDEMPOTENT_WRITE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.WRITE, AclOperation.DESCRIBE),
}

def all_operations(resource: ResourceType) -> int:
    """The bitfield of every operation the resource type has: what a broker without an authorizer grants.
    Bit n is the operation with code n."""
    return _bits(*SUPPORTED_OPERATIONS[resource])
