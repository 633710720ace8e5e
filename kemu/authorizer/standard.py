"""Kafka's StandardAuthorizer (KRaft; kafka.security.authorizer.AclAuthorizer decided the same way): who
may do what, from the ACLs, `super.users` and `allow.everyone.if.no.acl.found`.

The rules, in StandardAuthorizerData's order:
- a super user may do anything;
- the ACLs that apply to a resource are those of its type whose pattern is its literal name, the literal
  wildcard "*", or a prefix of its name (PREFIXED);
- of those, an ACL counts when its principal is the requester's or "User:*" and its host the requester's
  address or "*"; and its operation is the one asked, or ALL, or, for an ALLOW ACL only, one that implies
  it: READ, WRITE, DELETE and ALTER imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS;
- a counting DENY wins over any ALLOW; else a counting ALLOW allows; else, if no ACL at all applies to the
  resource (whoever it names), `allow.everyone.if.no.acl.found` decides; else denied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kemu.authorizer.acls import (
    SUPPORTED_OPERATIONS,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
    new_acl_error,
)
from kemu.authorizer.store import AclStore

_IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
                               AclOperation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


class TooManyRecords(Exception):
    """An ACL change would write more metadata records than the controller takes in one operation: Kafka's
    BoundedListTooLongException (AclControlManager builds them in a BoundedList of MAX_RECORDS_PER_USER_OP)."""


class StandardAuthorizer:
    def __init__(self, store: AclStore, super_users: Iterable[str] = (),
                 allow_everyone_if_no_acl_found: bool = False) -> None:
        self.store = store
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    # --- decisions

    def authorize(self, principal: str, host: str, op: AclOperation, resource: ResourceType, name: str) -> bool:
        if principal in self.super_users:
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        has_resource_acls = allowed = False
        for acl in self.store:
            if acl.resource_type is not resource or not _applies_to(acl, name):
                continue
            has_resource_acls = True
            result = _result(acl, principals, host, op)
            if result is PermissionType.DENY:
                return False
            allowed = allowed or result is PermissionType.ALLOW
        if allowed:
            return True
        return not has_resource_acls and self.allow_everyone_if_no_acl_found

    def authorized_operations(self, principal: str, host: str, resource: ResourceType, name: str) -> int:
        """Kafka's authorizedOperations: bit n set for each operation (code n) the resource type has that
        the requester may do on it."""
        return sum(1 << op for op in SUPPORTED_OPERATIONS[resource]
                   if self.authorize(principal, host, op, resource, name))

    def authorize_by_resource_type(self, principal: str, host: str, op: AclOperation,
                                   resource: ResourceType) -> bool:
        """Kafka's Authorizer.authorizeByResourceType: may the requester do `op` to at least one resource of
        the type? Yes if a resource no ACL names would be allowed (super users, the wildcard,
        allow.everyone.if.no.acl.found), or if an ALLOW ACL of the requester's for `op` (or ALL; no implied
        operations here) is not covered by a DENY: the same literal, a denied prefix of its name, or a
        denied wildcard."""
        if self.authorize(principal, host, op, resource, "hardcode"):
            return True
        denied: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allowed: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        for acl in self.store:
            if acl.resource_type is not resource or acl.host not in (host, WILDCARD):
                continue
            if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.operation not in (op, AclOperation.ALL):
                continue
            if acl.permission is PermissionType.DENY:
                if acl.pattern_type is PatternType.LITERAL and acl.name == WILDCARD:
                    return False
                denied[acl.pattern_type].add(acl.name)
            elif acl.pattern_type is PatternType.LITERAL and acl.name == WILDCARD:
                return True
            else:
                allowed[acl.pattern_type].add(acl.name)
        for kind, names in allowed.items():
            for name in names:
                if kind is PatternType.LITERAL and name in denied[PatternType.LITERAL]:
                    continue
                if not any(name[:end] in denied[PatternType.PREFIXED] for end in range(1, len(name) + 1)):
                    return True
        return False

    # --- the ACLs themselves (CreateAcls, DescribeAcls, DeleteAcls)

    def create(self, acls: Sequence[AclBinding], max_records: int | None = None) -> list[str | None]:
        """Each ACL's refusal message (INVALID_REQUEST), or None where it was created (or already was).
        TooManyRecords, and nothing created, when more than `max_records` of them are new: an ACL that
        exists, is named twice or is refused takes no record."""
        errors = [new_acl_error(acl) for acl in acls]
        store = self.store
        new = dict.fromkeys(acl for acl, error in zip(acls, errors, strict=True) if error is None and acl not in store)
        if max_records is not None and len(new) > max_records:
            raise TooManyRecords("Cannot add another element to the list because it would exceed the maximum "
                                 f"length of {max_records}")
        self.store.add(new)
        return errors

    def describe(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [acl for acl in self.store if acl_filter.matches(acl)]

    def delete(self, filters: Sequence[AclFilter], max_records: int | None = None) -> list[list[AclBinding]]:
        """The ACLs each filter matched, all of them deleted together (an ACL two filters match is listed
        under both). TooManyRecords, and nothing deleted, when a match is met with `max_records` ACLs
        already taken: AclControlManager.deleteAclsForFilter checks before each one, a repeated match too."""
        matched = [self.describe(acl_filter) for acl_filter in filters]
        if max_records is not None:
            taken: set[AclBinding] = set()
            for acl in (acl for acls in matched for acl in acls):
                if len(taken) >= max_records:
                    raise TooManyRecords(f"Cannot remove more than {max_records} acls in a single delete operation.")
                taken.add(acl)
        self.store.remove(acl for acls in matched for acl in acls)
        return matched


def _applies_to(acl: AclBinding, name: str) -> bool:
    if acl.pattern_type is PatternType.PREFIXED:
        return name.startswith(acl.name)
    return acl.name in (name, WILDCARD)


def _result(acl: AclBinding, principals: tuple[str, str], host: str, op: AclOperation) -> PermissionType | None:
    """StandardAuthorizerData.findResult: what `acl` says about `op`, or None if it does not count."""
    if acl.principal not in principals or acl.host not in (WILDCARD, host):
        return None
    if acl.operation is not AclOperation.ALL:
        if acl.permission is PermissionType.ALLOW and op is AclOperation.DESCRIBE:
            if acl.operation not in _IMPLIES_DESCRIBE:
                return None
        elif acl.permission is PermissionType.ALLOW and op is AclOperation.DESCRIBE_CONFIGS:
            if acl.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                return None
        elif acl.operation is not op:
            return None
    return acl.permission
