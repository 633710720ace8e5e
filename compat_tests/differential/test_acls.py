"""CreateAcls, DescribeAcls and DeleteAcls, Kafka (StandardAuthorizer) against kemu, by raw requests on the
secured pair: every kind of invalid input with its code and message (or the closed connection of a request
Kafka cannot parse), what a creation made, and which ACLs literal, prefixed, wildcard, MATCH and ANY filters
find and delete.

Each test names its own principal (`User:<scenario>`), so its ACLs are its own; answers list resources and
ACLs in no defined order, so the observations sort them.
"""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.security_acls import (
    ALL,
    ANY,
    CLUSTER,
    CREATE_ACLS,
    DELEGATION_TOKEN,
    DELETE_ACLS,
    DENY,
    DESCRIBE,
    DESCRIBE_ACLS,
    GROUP,
    LITERAL,
    MATCH,
    PREFIXED,
    TOPIC,
    TRANSACTIONAL_ID,
    USER,
    WRITE,
    creation,
    settle,
)
from compat_tests.differential.security_brokers import (  # noqa: F401 (secured_pair_fixture: the fixture)
    Secured,
    SecuredPair,
    secured_pair_fixture,
)
from compat_tests.differential.security_sasl import answer


def acl_filter(principal: str | None, **changes: Any) -> dict[str, Any]:
    return {"resource_type_filter": ANY, "resource_name_filter": None, "pattern_type_filter": ANY,
            "principal_filter": None if principal is None else f"User:{principal}", "host_filter": None,
            "operation": ANY, "permission_type": ANY} | changes


def sorted_acls(acls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(acls, key=lambda acl: sorted((k, str(v)) for k, v in acl.items()))


def tidy(body: dict[str, Any] | str) -> dict[str, Any] | str:
    """An ACL answer with its resources and ACLs in a fixed order."""
    if not isinstance(body, dict):
        return body
    found = dict(body)
    if "resources" in found:
        found["resources"] = sorted(({**r, "acls": sorted_acls(r["acls"])} for r in found["resources"]),
                                    key=lambda r: (r["resource_type"], r["resource_name"], r["pattern_type"]))
    if "filter_results" in found:
        found["filter_results"] = [{**r, "matching_acls": sorted_acls(r["matching_acls"])}
                                   for r in found["filter_results"]]
    return found


def request(secured: Secured, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any] | str:
    with secured.connect() as connection:
        return tidy(answer(connection, api_key, version, body))


def describe(secured: Secured, principal: str, version: int = 3) -> dict[str, Any] | str:
    return request(secured, DESCRIBE_ACLS, version, acl_filter(principal))


def create_then_describe(creations: list[dict[str, Any]], principal: str, version: int) -> Any:
    def run(secured: Secured) -> dict[str, Any]:
        created = request(secured, CREATE_ACLS, version, {"creations": creations})
        settle(secured)
        return {"created": created, "now": describe(secured, principal)}

    return run


INVALID_CREATIONS: dict[str, dict[str, Any]] = {
    "resource_unknown": {"resource_type": 0}, "resource_any": {"resource_type": ANY},
    "resource_code_99": {"resource_type": 99},
    "pattern_unknown": {"resource_pattern_type": 0}, "pattern_any": {"resource_pattern_type": ANY},
    "pattern_match": {"resource_pattern_type": MATCH}, "pattern_code_99": {"resource_pattern_type": 99},
    "operation_unknown": {"operation": 0}, "operation_any": {"operation": ANY}, "operation_code_99": {"operation": 99},
    "permission_unknown": {"permission_type": 0}, "permission_any": {"permission_type": ANY},
    "permission_code_99": {"permission_type": 99},
    "principal_without_type": {"principal": "alice"}, "principal_empty": {"principal": ""},
    "principal_empty_name": {"principal": "User:"}, "principal_other_type": {"principal": "Group:team"},
    "principal_wildcard": {"principal": "User:*"},
    "name_empty": {"resource_name": ""}, "name_wildcard_prefixed": {"resource_name": "*",
                                                                    "resource_pattern_type": PREFIXED},
    "host_empty": {"host": ""}, "host_address": {"host": "10.0.0.1"},
    "cluster_other_name": {"resource_type": CLUSTER, "resource_name": "other"},
    "cluster_prefixed": {"resource_type": CLUSTER, "resource_name": "kafka-cluster",
                         "resource_pattern_type": PREFIXED},
    "cluster_read": {"resource_type": CLUSTER, "resource_name": "kafka-cluster"},
    "group_write": {"resource_type": GROUP, "operation": WRITE},
    "transactional_id_read": {"resource_type": TRANSACTIONAL_ID},
    "delegation_token": {"resource_type": DELEGATION_TOKEN, "operation": DESCRIBE},
    "user_resource": {"resource_type": USER, "operation": 13},
    "operation_all_deny": {"operation": ALL, "permission_type": DENY},
}


@pytest.mark.parametrize("case", list(INVALID_CREATIONS))
@pytest.mark.parametrize("version", [1, 3])
def test_create_acls_inputs(secured_pair: SecuredPair, case: str, version: int) -> None:
    principal = f"create-{case}-v{version}".replace("_", "-")
    creations = [creation(principal, **INVALID_CREATIONS[case])]
    if "principal" in INVALID_CREATIONS[case]:
        principal = INVALID_CREATIONS[case]["principal"].removeprefix("User:") or "none"
    kafka, kemu = secured_pair.both(create_then_describe(creations, principal, version))
    check(f"security.acls.create.{case}.v{version}", kafka, kemu)


def test_create_acls_one_bad_among_good(secured_pair: SecuredPair) -> None:
    principal = "create-mixed"
    creations = [creation(principal), creation(principal, resource_name=""),
                 creation(principal, resource_type=GROUP, resource_name="g-mixed"),
                 creation(principal, principal="mixed")]
    kafka, kemu = secured_pair.both(create_then_describe(creations, principal, 3))
    check("security.acls.create.mixed", kafka, kemu)


def test_create_acls_one_any_among_good(secured_pair: SecuredPair) -> None:
    principal = "create-mixed-any"
    creations = [creation(principal), creation(principal, operation=ANY)]
    kafka, kemu = secured_pair.both(create_then_describe(creations, principal, 3))
    check("security.acls.create.mixed_any", kafka, kemu)


def test_create_acls_twice(secured_pair: SecuredPair) -> None:
    principal = "create-twice"
    creations = [creation(principal), creation(principal)]

    def run(secured: Secured) -> dict[str, Any]:
        first = create_then_describe(creations, principal, 3)(secured)
        return {"first": first, "again": create_then_describe(creations[:1], principal, 3)(secured)}

    kafka, kemu = secured_pair.both(run)
    check("security.acls.create.twice", kafka, kemu)


# A principal's ACLs for the filter tests: literal, prefixed and wildcard topics, a group, the cluster, a
# transactional id; ALLOW and DENY; two hosts.
def filter_fixture(principal: str) -> list[dict[str, Any]]:
    return [
        creation(principal, resource_name="orders"),
        creation(principal, resource_name="orders", operation=WRITE, permission_type=DENY, host="10.0.0.1"),
        creation(principal, resource_name="ord", resource_pattern_type=PREFIXED),
        creation(principal, resource_name="orders-eu", resource_pattern_type=PREFIXED, operation=DESCRIBE),
        creation(principal, resource_name="*"),
        creation(principal, resource_name="payments"),
        creation(principal, resource_type=GROUP, resource_name="orders"),
        creation(principal, resource_type=GROUP, resource_name="*", operation=DESCRIBE),
        creation(principal, resource_type=CLUSTER, resource_name="kafka-cluster", operation=DESCRIBE),
        creation(principal, resource_type=TRANSACTIONAL_ID, resource_name="orders", operation=WRITE),
    ]


FILTERS: dict[str, dict[str, Any]] = {
    "everything": {},
    "topics": {"resource_type_filter": TOPIC},
    "literal_orders": {"resource_type_filter": TOPIC, "resource_name_filter": "orders", "pattern_type_filter": LITERAL},
    "literal_any_type": {"resource_name_filter": "orders", "pattern_type_filter": LITERAL},
    "prefixed_ord": {"resource_type_filter": TOPIC, "resource_name_filter": "ord", "pattern_type_filter": PREFIXED},
    "prefixed_no_name": {"pattern_type_filter": PREFIXED},
    "any_pattern_orders": {"resource_type_filter": TOPIC, "resource_name_filter": "orders"},
    "match_orders": {"resource_type_filter": TOPIC, "resource_name_filter": "orders", "pattern_type_filter": MATCH},
    "match_orders_eu_1": {"resource_type_filter": TOPIC, "resource_name_filter": "orders-eu-1",
                          "pattern_type_filter": MATCH},
    "match_any_type": {"resource_name_filter": "orders", "pattern_type_filter": MATCH},
    "match_no_name": {"pattern_type_filter": MATCH},
    "match_wildcard": {"resource_type_filter": TOPIC, "resource_name_filter": "*", "pattern_type_filter": MATCH},
    "literal_wildcard": {"resource_type_filter": TOPIC, "resource_name_filter": "*", "pattern_type_filter": LITERAL},
    "match_unlisted": {"resource_type_filter": TOPIC, "resource_name_filter": "refunds", "pattern_type_filter": MATCH},
    "deny": {"permission_type": DENY},
    "write": {"operation": WRITE},
    "host": {"host_filter": "10.0.0.1"},
    "host_wildcard": {"host_filter": "*"},
    "cluster": {"resource_type_filter": CLUSTER},
    "group_wildcard": {"resource_type_filter": GROUP, "resource_name_filter": "*"},
}


@pytest.fixture
def filtered_principal(secured_pair: SecuredPair) -> str:
    """A principal with `filter_fixture`'s ACLs on both brokers (made once a session)."""
    principal = "filters"
    for secured in (secured_pair.kafka, secured_pair.kemu):
        made = request(secured, CREATE_ACLS, 3, {"creations": filter_fixture(principal)})
        assert isinstance(made, dict) and not any(r["error_code"] for r in made["results"]), made
        settle(secured)
    return principal


@pytest.mark.parametrize("case", list(FILTERS))
def test_describe_acls_filters(secured_pair: SecuredPair, filtered_principal: str, case: str) -> None:
    body = acl_filter(filtered_principal, **FILTERS[case])
    kafka, kemu = secured_pair.both(lambda secured: request(secured, DESCRIBE_ACLS, 3, body))
    check(f"security.acls.describe.{case}", kafka, kemu)


INVALID_FILTERS: dict[str, dict[str, Any]] = {
    "resource_unknown": {"resource_type_filter": 0}, "resource_code_99": {"resource_type_filter": 99},
    "pattern_unknown": {"pattern_type_filter": 0}, "pattern_code_99": {"pattern_type_filter": 99},
    "operation_unknown": {"operation": 0}, "permission_unknown": {"permission_type": 0},
    "principal_malformed": {"principal_filter": "alice"},
    "name_empty": {"resource_name_filter": ""},
}


@pytest.mark.parametrize("case", list(INVALID_FILTERS))
@pytest.mark.parametrize("version", [1, 3])
def test_describe_acls_invalid_filters(secured_pair: SecuredPair, case: str, version: int) -> None:
    body = acl_filter("nobody", **INVALID_FILTERS[case])
    kafka, kemu = secured_pair.both(lambda secured: request(secured, DESCRIBE_ACLS, version, body))
    check(f"security.acls.describe_invalid.{case}.v{version}", kafka, kemu)


@pytest.mark.parametrize("case", list(INVALID_FILTERS))
def test_delete_acls_invalid_filters(secured_pair: SecuredPair, case: str) -> None:
    principal = f"delete-invalid-{case}".replace("_", "-")
    body = {"filters": [acl_filter(principal, **INVALID_FILTERS[case]), acl_filter(principal)]}

    def run(secured: Secured) -> dict[str, Any]:
        request(secured, CREATE_ACLS, 3, {"creations": [creation(principal)]})
        settle(secured)
        deleted = request(secured, DELETE_ACLS, 3, body)
        settle(secured)
        return {"deleted": deleted, "left": describe(secured, principal)}

    kafka, kemu = secured_pair.both(run)
    check(f"security.acls.delete_invalid.{case}", kafka, kemu)


DELETIONS: dict[str, list[dict[str, Any]]] = {
    "literal": [{"resource_type_filter": TOPIC, "resource_name_filter": "orders", "pattern_type_filter": LITERAL}],
    "match": [{"resource_type_filter": TOPIC, "resource_name_filter": "orders", "pattern_type_filter": MATCH}],
    "prefixed_and_deny": [{"pattern_type_filter": PREFIXED}, {"permission_type": DENY}],
    "overlapping": [{"resource_type_filter": TOPIC}, {"resource_name_filter": "orders"}],
    "nothing": [{"resource_name_filter": "refunds"}],
    "none": [],
}


@pytest.mark.parametrize("case", list(DELETIONS))
def test_delete_acls(secured_pair: SecuredPair, case: str) -> None:
    principal = f"delete-{case}".replace("_", "-")
    body = {"filters": [acl_filter(principal, **changes) for changes in DELETIONS[case]]}

    def run(secured: Secured) -> dict[str, Any]:
        request(secured, CREATE_ACLS, 3, {"creations": filter_fixture(principal)})
        settle(secured)
        deleted = request(secured, DELETE_ACLS, 3, body)
        settle(secured)
        return {"deleted": deleted, "left": describe(secured, principal)}

    kafka, kemu = secured_pair.both(run)
    check(f"security.acls.delete.{case}", kafka, kemu)


@pytest.mark.parametrize("api", ["describe", "create", "delete"])
def test_acl_apis_need_the_cluster(secured_pair: SecuredPair, api: str) -> None:
    """alice has no ACL: DESCRIBE (DescribeAcls) or ALTER (CreateAcls, DeleteAcls) on the cluster is denied."""
    key, body = {"describe": (DESCRIBE_ACLS, acl_filter("alice")),
                 "create": (CREATE_ACLS, {"creations": [creation("alice-denied")]}),
                 "delete": (DELETE_ACLS, {"filters": [acl_filter("alice-denied")]})}[api]

    def run(secured: Secured) -> Any:
        with secured.as_user("alice") as connection:
            got = tidy(answer(connection, key, 3, body))
        settle(secured)
        return {"answer": got, "now": describe(secured, "alice-denied")}

    kafka, kemu = secured_pair.both(run)
    check(f"security.acls.denied.{api}", kafka, kemu)



# The controller builds the records of one ACL operation in a BoundedList of MAX_RECORDS_PER_USER_OP (10,000):
# a CreateAcls of more new ACLs, or a DeleteAcls whose filters match more, overflows it. The ACLs of these tests
# differ by host (one principal each, as every test here): 10.0.0.0 upwards.
MAX_RECORDS = 10_000


def many(principal: str, count: int, first: int = 0) -> list[dict[str, Any]]:
    return [creation(principal, host=f"10.0.{i // 256}.{i % 256}") for i in range(first, first + count)]


def summary(body: dict[str, Any] | str) -> dict[str, Any] | str:
    """An ACL answer of thousands of entries, as the distinct results it holds and how many of each (the
    entries themselves are the test's own creations, compared through `left`)."""
    if not isinstance(body, dict):
        return body
    if "results" in body:
        counts: dict[str, int] = {}
        for result in body["results"]:
            key = f"{result['error_code']}:{result['error_message']}"
            counts[key] = counts.get(key, 0) + 1
        return {"results": counts}
    if "filter_results" in body:
        return {"filter_results": [{**r, "matching_acls": len(r["matching_acls"])} for r in body["filter_results"]]}
    return body


BIG_REQUEST_TIMEOUT_S = 120.0  # a cold Kafka takes more than a connection's usual 10 s over 10,000 ACLs


def slow_request(secured: Secured, api_key: int, body: dict[str, Any]) -> dict[str, Any] | str:
    """`request` at v3, waiting as long as a request over thousands of ACLs can take."""
    with secured.connect() as connection:
        connection.sock.settimeout(BIG_REQUEST_TIMEOUT_S)
        return tidy(answer(connection, api_key, 3, body))


def big(secured: Secured, api_key: int, body: dict[str, Any]) -> dict[str, Any] | str:
    return summary(slow_request(secured, api_key, body))


def hosts_left(secured: Secured, principal: str) -> list[str] | str:
    found = slow_request(secured, DESCRIBE_ACLS, acl_filter(principal))
    if not isinstance(found, dict):
        return found
    return sorted(acl["host"] for resource in found["resources"] for acl in resource["acls"])


def test_create_acls_past_the_controller_limit(secured_pair: SecuredPair) -> None:
    principal = "limit-create"

    def run(secured: Secured) -> dict[str, Any]:
        # A creation refused on its own takes no record, but the overflow refuses all of them.
        refused = creation(principal, resource_name="")
        over = big(secured, CREATE_ACLS, {"creations": [refused, *many(principal, MAX_RECORDS + 1)]})
        settle(secured)
        after_over = hosts_left(secured, principal)
        at = big(secured, CREATE_ACLS, {"creations": [*many(principal, MAX_RECORDS), refused]})
        settle(secured)
        # Only new ACLs take a record: the 10,000 made and one more is one record.
        again = big(secured, CREATE_ACLS, {"creations": many(principal, MAX_RECORDS + 1)})
        settle(secured)
        return {"over": over, "after_over": after_over, "at": at, "again": again,
                "left": len(hosts_left(secured, principal))}

    kafka, kemu = secured_pair.both(run)
    check("security.acls.limit.create", kafka, kemu)


def test_delete_acls_past_the_controller_limit(secured_pair: SecuredPair) -> None:
    principal = "limit-delete"
    everything = acl_filter(principal)

    def run(secured: Secured) -> dict[str, Any]:
        for made in (many(principal, MAX_RECORDS), many(principal, 2, first=MAX_RECORDS)):
            created = big(secured, CREATE_ACLS, {"creations": made})
            assert created == {"results": {"0:": len(made)}}, created
            settle(secured)
        over = big(secured, DELETE_ACLS, {"filters": [
            acl_filter(principal, host_filter="10.0.0.5"), everything, acl_filter("nobody-limit")]})
        settle(secured)
        after_over = len(hosts_left(secured, principal))
        # One host's ACL named by two filters is one record.
        twice = big(secured, DELETE_ACLS, {"filters": [
            acl_filter(principal, host_filter="10.0.39.17"), acl_filter(principal, host_filter="10.0.39.17")]})
        settle(secured)
        one = big(secured, DELETE_ACLS, {"filters": [acl_filter(principal, host_filter="10.0.39.16")]})
        settle(secured)
        at = big(secured, DELETE_ACLS, {"filters": [everything]})
        settle(secured)
        return {"over": over, "after_over": after_over, "twice": twice, "one": one, "at": at,
                "left": hosts_left(secured, principal)}

    kafka, kemu = secured_pair.both(run)
    check("security.acls.limit.delete", kafka, kemu)
