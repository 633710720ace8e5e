"""Java consumer groups (kafka-clients 3.9.1, src/Groups.java) against `kemu serve`, under both protocols:
classic (JoinGroup/SyncGroup, the client's assignor) and KIP-848's `group.protocol=consumer`
(ConsumerGroupHeartbeat, the broker's assignor). Two members split the partitions and read every record once,
the admin describes the group with its protocol type, and when one leaves the other takes over all."""

from __future__ import annotations

import pytest

from compat_tests.java.conftest import JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import create_topics, feed, unique

PARTITIONS = 4
PER_PARTITION = 5


@pytest.mark.parametrize(("protocol", "group_type"), [("classic", "Classic"), ("consumer", "Consumer")])
def test_two_members_share_the_partitions(java_kemu: JavaKemu, java: JavaClient, protocol: str,
                                          group_type: str) -> None:
    bootstrap = java_kemu.bootstrap
    topic, group = unique(f"java-group-{protocol}"), unique(f"java-{protocol}")
    create_topics(bootstrap, [topic], partitions=PARTITIONS)
    fed = feed(bootstrap, topic, PER_PARTITION, partitions=PARTITIONS)
    total = len(fed)

    result = java.run("Groups", bootstrap, "share", topic, group, protocol, str(total))

    first, second = result["assignments"]
    assert first and second and sorted(first + second) == list(range(PARTITIONS))
    assert sorted((t, p, v) for member in result["read"] for t, p, _, v in member) == fed
    described = result["group"]
    assert (described["state"], described["type"]) == ("Stable", group_type)
    assert sorted(m["partitions"] for m in described["members"]) == sorted([first, second])
    assert result["afterLeave"] == list(range(PARTITIONS))
    assert result["offsets"] == {str(p): PER_PARTITION for p in range(PARTITIONS)}
