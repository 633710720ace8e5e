"""The StandardAuthorizer's decision rules, the ACL filters and the store, driven directly."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.authorizer.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    PatternType,
    PermissionType,
    ResourceType,
    all_operations,
    new_acl_error,
)
from kemu.authorizer.config import build_authorizer
from kemu.authorizer.standard import StandardAuthorizer, TooManyRecords
from kemu.authorizer.store import AclStore

Op, Res, Pat, Perm = AclOperation, ResourceType, PatternType, PermissionType
ANON, ALICE, BOB = "User:ANONYMOUS", "User:alice", "User:bob"
HOST = "127.0.0.1"


def acl(op: AclOperation, name: str = "orders", *, principal: str = ALICE, host: str = "*",
        permission: PermissionType = Perm.ALLOW, pattern: PatternType = Pat.LITERAL,
        resource: ResourceType = Res.TOPIC) -> AclBinding:
    return AclBinding(resource, name, pattern, principal, host, op, permission)


def authorizer(tmp_path: Path, *acls: AclBinding, super_users: tuple[str, ...] = (),
               allow_everyone: bool = False) -> StandardAuthorizer:
    tmp_path.mkdir(parents=True, exist_ok=True)
    made = StandardAuthorizer(AclStore(tmp_path), super_users, allow_everyone)
    assert made.create(list(acls)) == [None] * len(acls)
    return made


def may(auth: StandardAuthorizer, op: AclOperation, name: str = "orders", principal: str = ALICE,
        host: str = HOST, resource: ResourceType = Res.TOPIC) -> bool:
    return auth.authorize(principal, host, op, resource, name)


def test_no_acl_on_a_resource_is_decided_by_allow_everyone_if_no_acl_found(tmp_path: Path) -> None:
    assert not may(authorizer(tmp_path / "closed"), Op.READ)
    assert may(authorizer(tmp_path / "open", allow_everyone=True), Op.READ)


def test_an_acl_for_someone_else_closes_the_resource_even_when_open_by_default(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.READ, principal=BOB), allow_everyone=True)
    assert may(auth, Op.READ, principal=BOB)
    assert not may(auth, Op.READ, principal=ALICE)
    assert may(auth, Op.READ, name="other-topic")  # no ACL names that one


def test_deny_wins_over_allow(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.ALL), acl(Op.WRITE, permission=Perm.DENY))
    assert may(auth, Op.READ)
    assert not may(auth, Op.WRITE)


def test_super_users_may_do_anything_even_when_denied(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.ALL, principal=ALICE, permission=Perm.DENY), super_users=(ALICE,))
    assert may(auth, Op.WRITE) and may(auth, Op.ALTER, resource=Res.CLUSTER, name="kafka-cluster")
    assert not may(auth, Op.WRITE, principal=BOB)


def test_wildcard_and_prefixed_patterns_apply_literal_prefixes_do_not(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.READ, "*"), acl(Op.WRITE, "ord", pattern=Pat.PREFIXED),
                      acl(Op.DELETE, "ord"))
    assert may(auth, Op.READ, "anything")
    assert may(auth, Op.WRITE, "orders") and may(auth, Op.WRITE, "ord")
    assert not may(auth, Op.WRITE, "payments")
    assert not may(auth, Op.DELETE, "orders")  # LITERAL "ord" names only "ord"
    assert may(auth, Op.DELETE, "ord")


def test_a_prefixed_deny_covers_every_name_under_it(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.READ, "*"), acl(Op.READ, "secret-", pattern=Pat.PREFIXED, permission=Perm.DENY))
    assert may(auth, Op.READ, "public")
    assert not may(auth, Op.READ, "secret-plans")


def test_the_wildcard_principal_matches_everyone(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.READ, principal="User:*"))
    assert may(auth, Op.READ, principal=ANON) and may(auth, Op.READ, principal=BOB)


def test_hosts_match_exactly_or_by_wildcard(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.READ, host="10.0.0.1"))
    assert may(auth, Op.READ, host="10.0.0.1")
    assert not may(auth, Op.READ, host=HOST)


def test_allow_read_write_delete_alter_imply_describe_but_deny_does_not(tmp_path: Path) -> None:
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        auth = authorizer(tmp_path / op.name, acl(op))
        assert may(auth, Op.DESCRIBE), op
        assert not may(auth, Op.DESCRIBE_CONFIGS), op
    auth = authorizer(tmp_path / "create", acl(Op.CREATE))
    assert not may(auth, Op.DESCRIBE)
    denied_read = authorizer(tmp_path / "deny", acl(Op.DESCRIBE), acl(Op.READ, permission=Perm.DENY))
    assert may(denied_read, Op.DESCRIBE) and not may(denied_read, Op.READ)


def test_alter_configs_implies_describe_configs(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.ALTER_CONFIGS))
    assert may(auth, Op.DESCRIBE_CONFIGS)
    assert not may(auth, Op.DESCRIBE)


def test_all_allows_and_denies_every_operation(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.ALL), acl(Op.ALL, principal=BOB, permission=Perm.DENY),
                      acl(Op.ALL, principal=BOB, permission=Perm.ALLOW))
    assert all(may(auth, op) for op in (Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS))
    assert not any(may(auth, op, principal=BOB) for op in (Op.READ, Op.DESCRIBE))


def test_authorized_operations_bitfield(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.READ), acl(Op.WRITE, principal=BOB, permission=Perm.DENY),
                      acl(Op.ALL, principal=BOB))
    # READ (3) and the DESCRIBE (8) it implies
    assert auth.authorized_operations(ALICE, HOST, Res.TOPIC, "orders") == (1 << 3) | (1 << 8)
    assert auth.authorized_operations(BOB, HOST, Res.TOPIC, "orders") == all_operations(Res.TOPIC) & ~(1 << 4)
    assert auth.authorized_operations(ANON, HOST, Res.TOPIC, "orders") == 0


def test_transactional_id_and_group_rules(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, acl(Op.WRITE, "tx-", resource=Res.TRANSACTIONAL_ID, pattern=Pat.PREFIXED),
                      acl(Op.READ, "readers", resource=Res.GROUP))
    assert may(auth, Op.WRITE, "tx-1", resource=Res.TRANSACTIONAL_ID)
    assert may(auth, Op.DESCRIBE, "tx-1", resource=Res.TRANSACTIONAL_ID)
    assert not may(auth, Op.WRITE, "other", resource=Res.TRANSACTIONAL_ID)
    assert may(auth, Op.READ, "readers", resource=Res.GROUP) and may(auth, Op.DESCRIBE, "readers", resource=Res.GROUP)
    assert not may(auth, Op.READ, "readers")  # a TOPIC named so is another resource


def test_authorize_by_resource_type(tmp_path: Path) -> None:
    def by_type(*acls: AclBinding, where: str, allow_everyone: bool = False) -> bool:
        auth = authorizer(tmp_path / where, *acls, allow_everyone=allow_everyone)
        return auth.authorize_by_resource_type(ALICE, HOST, Op.WRITE, Res.TOPIC)

    assert not by_type(where="none")
    assert by_type(where="open", allow_everyone=True)
    assert by_type(acl(Op.WRITE, "orders"), where="literal")
    assert not by_type(acl(Op.READ, "orders"), where="other-op")  # no implied operations here
    assert not by_type(acl(Op.WRITE, "orders"), acl(Op.WRITE, "orders", permission=Perm.DENY), where="denied")
    assert not by_type(acl(Op.WRITE, "orders", pattern=Pat.PREFIXED),
                       acl(Op.WRITE, "or", pattern=Pat.PREFIXED, permission=Perm.DENY), where="covered")
    assert by_type(acl(Op.WRITE, "orders", pattern=Pat.PREFIXED),
                   acl(Op.WRITE, "orders-eu", pattern=Pat.PREFIXED, permission=Perm.DENY), where="narrower")
    assert not by_type(acl(Op.WRITE, "orders"), acl(Op.WRITE, "*", permission=Perm.DENY), where="wildcard")
    assert by_type(acl(Op.WRITE, "*"), where="wildcard-allow")


def test_filters_match_as_kafka_s(tmp_path: Path) -> None:
    literal, wildcard, prefixed, other = (acl(Op.READ, "orders"), acl(Op.READ, "*"),
                                          acl(Op.WRITE, "ord", pattern=Pat.PREFIXED), acl(Op.READ, "payments"))
    auth = authorizer(tmp_path, literal, wildcard, prefixed, other)

    def found(name: str | None, pattern: PatternType, **entry: object) -> list[AclBinding]:
        return auth.describe(AclFilter(Res.TOPIC, name, pattern, entry.get("principal"),  # type: ignore[arg-type]
                                       entry.get("host"), entry.get("op", Op.ANY),  # type: ignore[arg-type]
                                       entry.get("permission", Perm.ANY)))  # type: ignore[arg-type]

    assert found("orders", Pat.MATCH) == [literal, wildcard, prefixed]
    assert found("orders", Pat.LITERAL) == [literal]
    assert found("orders", Pat.ANY) == [literal]
    assert found("ord", Pat.PREFIXED) == [prefixed]
    assert found(None, Pat.ANY) == [literal, wildcard, prefixed, other]
    assert found(None, Pat.PREFIXED) == [prefixed]
    assert found(None, Pat.ANY, op=Op.WRITE) == [prefixed]
    assert found(None, Pat.ANY, principal=BOB) == []
    assert found(None, Pat.ANY, host="10.0.0.1") == []
    assert auth.describe(AclFilter(Res.GROUP, None, Pat.ANY, None, None, Op.ANY, Perm.ANY)) == []


def test_delete_returns_what_each_filter_matched_and_removes_it_for_good(tmp_path: Path) -> None:
    keep, drop = acl(Op.READ, "keep"), acl(Op.WRITE, "drop")
    auth = authorizer(tmp_path, keep, drop)
    by_op = AclFilter(Res.ANY, None, Pat.ANY, None, None, Op.WRITE, Perm.ANY)
    by_name = AclFilter(Res.TOPIC, "drop", Pat.LITERAL, None, None, Op.ANY, Perm.ANY)
    assert auth.delete([by_op, by_name]) == [[drop], [drop]]
    assert list(AclStore(tmp_path)) == [keep]
    assert auth.delete([by_op]) == [[]]


def test_acls_survive_a_new_store_on_the_same_directory(tmp_path: Path) -> None:
    made = [acl(Op.READ), acl(Op.WRITE, "tx", resource=Res.TRANSACTIONAL_ID, permission=Perm.DENY, host="10.0.0.2")]
    authorizer(tmp_path, *made, made[0])
    assert list(AclStore(tmp_path)) == made


@pytest.mark.parametrize(("binding", "message"), [
    (acl(Op.ALTER, "my-cluster", resource=Res.CLUSTER),
     "The only valid name for the CLUSTER resource is kafka-cluster"),
    (acl(Op.READ, ""), "Invalid empty resource name"),
    (acl(Op.READ, principal="alice"), "Could not parse principal from `alice` (no colon is present separating "
                                      "the principal type from the principal name)"),
])
def test_new_acls_kafka_refuses(tmp_path: Path, binding: AclBinding, message: str) -> None:
    assert new_acl_error(binding) == message
    auth = StandardAuthorizer(AclStore(tmp_path))
    assert auth.create([binding, acl(Op.READ)]) == [message, None]
    assert list(auth.store) == [acl(Op.READ)]


def test_build_authorizer_reads_kafka_s_settings(tmp_path: Path) -> None:
    assert build_authorizer({}, tmp_path) is None
    assert build_authorizer({"authorizer.class.name": ""}, tmp_path) is None
    built = build_authorizer({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                              "super.users": "User:admin; User:ops", "allow.everyone.if.no.acl.found": "true"},
                             tmp_path)
    assert built is not None
    assert built.super_users == {"User:admin", "User:ops"} and built.allow_everyone_if_no_acl_found


def hosts(count: int, first: int = 0) -> list[AclBinding]:
    return [acl(Op.READ, host=f"10.0.0.{i}") for i in range(first, first + count)]


def test_create_counts_only_new_acls_against_the_records_bound(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, *hosts(2))
    refused = acl(Op.READ, name="")
    # Two that exist, one named twice, one refused on its own: two new records.
    assert auth.create([*hosts(2), *hosts(1, first=2), *hosts(1, first=2), refused, *hosts(1, first=3)],
                       max_records=2) == [None] * 4 + ["Invalid empty resource name", None]
    with pytest.raises(TooManyRecords):
        auth.create(hosts(3, first=4), max_records=2)
    assert sorted(a.host for a in auth.store) == [f"10.0.0.{i}" for i in range(4)]  # nothing of the refused three


def test_delete_refuses_a_match_past_the_records_bound_and_deletes_nothing(tmp_path: Path) -> None:
    auth = authorizer(tmp_path, *hosts(3))
    everything = AclFilter(Res.ANY, None, Pat.ANY, None, None, Op.ANY, Perm.ANY)
    one = AclFilter(Res.ANY, None, Pat.ANY, None, "10.0.0.0", Op.ANY, Perm.ANY)
    with pytest.raises(TooManyRecords, match="Cannot remove more than 2 acls in a single delete operation."):
        auth.delete([everything], max_records=2)
    # A match met with the bound already taken fails even when it is one taken before (Kafka checks first).
    with pytest.raises(TooManyRecords):
        auth.delete([one, one, one], max_records=1)
    assert len(auth.store) == 3
    assert auth.delete([one, one], max_records=2) == [[hosts(1)[0]], [hosts(1)[0]]]
    assert len(auth.store) == 2
