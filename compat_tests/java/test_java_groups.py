"""Java consumer groups (src/Groups.java, kafka-clients 4.3) against `kemu serve`, under both protocols:
classic (JoinGroup/SyncGroup, the client's assignor) and KIP-848's `group.protocol=consumer` (ConsumerGroupHeartbeat,
the broker's assignor). Two members split the partitions and read every record once, the admin describes the
group with its protocol type, and when one leaves the other takes over all. The classic scenario runs against
the reference Kafka too, the outcomes compared."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import create_topics, feed, unique

PARTITIONS = 4
PER_PARTITION = 5


def observed(result: dict[str, Any]) -> dict[str, Any]:
    """What must be the same on both brokers: which member got which partitions follows the member ids, which
    differ, so the assignments as a set of sizes and what was read as one sorted list."""
    return {"assignmentSizes": sorted(len(a) for a in result["assignments"]),
            "read": sorted(row for member in result["read"] for row in member),
            "group": {**result["group"], "members": sorted(len(m["partitions"]) for m in result["group"]["members"])},
            "afterLeave": result["afterLeave"], "offsets": result["offsets"]}


@pytest.mark.parametrize(("protocol", "group_type"), [("classic", "Classic"), ("consumer", "Consumer")])
def test_two_members_share_the_partitions(java_pair: Pair, java: JavaClient, protocol: str,
                                          group_type: str) -> None:
    topic, group = unique(f"java-group-{protocol}"), unique(f"java-{protocol}")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=PARTITIONS)
        fed = feed(target.bootstrap, topic, PER_PARTITION, partitions=PARTITIONS)
        return fed, java.run("Groups", target.bootstrap, "share", topic, group, protocol, str(len(fed)))

    fed, result = scenario(java_pair.kemu)
    # A KIP-848 member learns of each step of a reassignment at its next heartbeat, every
    # group.consumer.heartbeat.interval.ms: 5 s on the reference Kafka (its shipped settings), which would
    # make that scenario take some 20 s there; it runs on kemu alone, whose fixture heartbeats every second.
    if protocol == "classic":
        _, kafka = scenario(java_pair.kafka)
        check(f"java.{java.line}.group_{protocol}", observed(kafka), observed(result))
    first, second = result["assignments"]
    assert first and second and sorted(first + second) == list(range(PARTITIONS))
    assert sorted((t, p, v) for member in result["read"] for t, p, _, v in member) == fed
    described = result["group"]
    assert (described["state"], described["type"]) == ("Stable", group_type)
    assert sorted(m["partitions"] for m in described["members"]) == sorted([first, second])
    assert result["afterLeave"] == list(range(PARTITIONS))
    assert result["offsets"] == {str(p): PER_PARTITION for p in range(PARTITIONS)}
