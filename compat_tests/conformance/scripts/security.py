"""Security without an authorizer (the shipped settings): the ACL calls (Kafka: SECURITY_DISABLED), SASL on a
PLAINTEXT listener, and SCRAM credentials."""

from __future__ import annotations

from compat_tests.conformance.scripts import barrier, step, versions
from compat_tests.conformance.scripts.unsupported import API_VERSIONS_KEYS, EPOCH
from compat_tests.conformance.steps import Script

ACL = {"resource_type": 2, "resource_name": "conf-acl-{run}", "resource_pattern_type": 3,
       "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}
FILTER = {"resource_type_filter": 2, "resource_name_filter": "conf-acl-{run}", "pattern_type_filter": 3,
          "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}
DESCRIBE = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
            "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}
# SCRAM-SHA-256 (mechanism 1) for a user of this run: a 32-byte salted password and salt, as a client computes.
SALT = "73616c74" * 4
SALTED = "ab" * 32


def acls() -> list[Script]:
    steps = []
    for version in versions(29):
        steps.append(step(f"describe v{version}", 29, version, DESCRIBE))
    for version in versions(30):
        steps.append(step(f"create v{version}", 30, version, {"creations": [ACL]}))
    for version in versions(31):
        steps.append(step(f"delete v{version}", 31, version, {"filters": [FILTER]}))
    return [Script("acls.without_authorizer", steps)]


def sasl() -> list[Script]:
    scripts = []
    for version in versions(17):
        scripts.append(Script(f"sasl.handshake_v{version}", [
            step(f"handshake PLAIN v{version}", 17, version, {"mechanism": "PLAIN"}),
            step("api versions after", 18, 3, {"client_software_name": "kemu-conformance",
                                               "client_software_version": "1.0"},
                 key_by=API_VERSIONS_KEYS, **EPOCH),
        ]))
    scripts.append(Script("sasl.handshake_unknown_mechanism", [
        step("handshake FANCY", 17, 1, {"mechanism": "FANCY"}),
    ]))
    for version in versions(36):
        scripts.append(Script(f"sasl.authenticate_v{version}", [
            step(f"authenticate without handshake v{version}", 36, version,
                 {"auth_bytes": "00616c69636500736563726574"}),
        ]))
    return scripts


def scram() -> list[Script]:
    user = "conf-user-{run}"
    upsert = {"name": user, "mechanism": 1, "iterations": 4096, "salt": SALT, "salted_password": SALTED}
    return [Script("scram.cases", [
        step("describe unknown user", 50, 0, {"users": [{"name": user}]}),
        step("create", 51, 0, {"deletions": [], "upsertions": [upsert]}),
        *barrier("describe"),
        step("describe", 50, 0, {"users": [{"name": user}]}),
        step("describe all", 50, 0, {"users": None}, only_run=("results",)),
        step("update with SHA-512", 51, 0, {"deletions": [], "upsertions": [upsert | {"mechanism": 2}]}),
        *barrier("describe-both"),
        step("describe both", 50, 0, {"users": [{"name": user}]}, key_by={"credential_infos": "mechanism"}),
        step("too few iterations", 51, 0, {"deletions": [], "upsertions": [upsert | {"iterations": 10}]}),
        step("too many iterations", 51, 0, {"deletions": [], "upsertions": [upsert | {"iterations": 100_000}]}),
        step("unknown mechanism", 51, 0, {"deletions": [], "upsertions": [upsert | {"mechanism": 9}]}),
        step("empty user", 51, 0, {"deletions": [], "upsertions": [upsert | {"name": ""}]}),
        step("delete and upsert the same", 51, 0, {"deletions": [{"name": user, "mechanism": 1}],
                                                   "upsertions": [upsert]}),
        step("delete", 51, 0, {"deletions": [{"name": user, "mechanism": 1}], "upsertions": []}),
        step("delete again", 51, 0, {"deletions": [{"name": user, "mechanism": 1}], "upsertions": []}),
        *barrier("describe-after-delete"),
        step("describe after delete", 50, 0, {"users": [{"name": user}]}),
        step("describe the same user twice", 50, 0, {"users": [{"name": user}, {"name": user}]}),
    ])]


def scripts() -> list[Script]:
    return [*acls(), *sasl(), *scram()]
