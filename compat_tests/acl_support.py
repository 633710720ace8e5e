"""A `kemu serve` with Kafka's StandardAuthorizer on, for the ACL compat tests.

`allow.everyone.if.no.acl.found=true`: a resource no ACL names is open, so the tests' ANONYMOUS client
(PLAINTEXT) may create ACLs (no ACL names the cluster), and each test closes only what it names. An ACL on a
resource closes it to every principal and operation the ACLs do not allow, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests.kemu_process import KemuServeProcess, running

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ANONYMOUS = "User:ANONYMOUS"


def authorizer_server(data_dir: Path) -> KemuServeProcess:
    return KemuServeProcess(data_dir, extra_args=(
        "--override", f"authorizer.class.name={STANDARD_AUTHORIZER}",
        "--override", "allow.everyone.if.no.acl.found=true",
        "--override", "group.initial.rebalance.delay.ms=0",
    ))


@pytest.fixture(scope="module")
def acl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    """One authorizing `kemu serve` per test module; the tests keep apart by their own resource names."""
    yield from running(authorizer_server(tmp_path_factory.mktemp("kemu-acl-data")))


def allow_anonymous(bootstrap: str, resource: str, name: str, *operations: str, topic: str | None = None) -> None:
    """ALLOW ACLs for the tests' ANONYMOUS client (confluent-kafka's admin; resource and operations by
    Kafka's names: "GROUP", "DESCRIBE"), after creating `topic` if one is named."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    if topic is not None:
        admin.create_topics([NewTopic(topic, num_partitions=1)])[topic].result(timeout=15)
    kind = ResourceType.BROKER if resource == "CLUSTER" else ResourceType[resource]
    bindings = [AclBinding(kind, name, ResourcePatternType.LITERAL, ANONYMOUS, "*", AclOperation[op],
                           AclPermissionType.ALLOW) for op in operations]
    for future in admin.create_acls(bindings).values():
        future.result(timeout=15)
