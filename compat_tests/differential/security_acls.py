"""ACLs for the security differential tests: the codes of resource types, pattern types, operations and
permissions as the ACL APIs carry them, and one ACL creation with a test's own principal."""

from __future__ import annotations

import time
import uuid
from typing import Any

from compat_tests.differential.targets import Target

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = 2, 3, 4, 5, 6, 7
READ, WRITE, DESCRIBE, ALL = 3, 4, 8, 2
DENY, ALLOW = 2, 3


def creation(owner: str, **changes: Any) -> dict[str, Any]:
    return {"resource_type": TOPIC, "resource_name": f"t-{owner}", "resource_pattern_type": LITERAL,
            "principal": f"User:{owner}", "host": "*", "operation": READ, "permission_type": ALLOW} | changes


SETTLE_TIMEOUT_S = 15.0


def settle(secured: Target) -> None:
    """Wait until the broker serves what was just changed. Kafka's controller commits an ACL, topic or SCRAM
    change to the metadata log and answers; the broker applies the log a moment later, in order. So a barrier
    ACL made now is visible only once every earlier change is: wait for it (kemu applies everything at once,
    and shows it at once). Each barrier has a principal of its own, which no test's filter names."""
    marker = creation(f"barrier-{uuid.uuid4().hex}")
    made = secured.request(CREATE_ACLS, 3, {"creations": [marker]})
    assert not made["results"][0]["error_code"], made
    wanted = {"resource_type_filter": marker["resource_type"], "resource_name_filter": marker["resource_name"],
              "pattern_type_filter": LITERAL, "principal_filter": marker["principal"], "host_filter": None,
              "operation": ANY, "permission_type": ANY}
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while not secured.request(DESCRIBE_ACLS, 3, wanted)["resources"]:
        if time.monotonic() > deadline:
            raise AssertionError(f"{secured.name}: a barrier ACL never became visible")
        time.sleep(0.05)
