"""Java share groups (src/ShareGroups.java: KafkaShareConsumer and Admin of kafka-clients 4.3) against `kemu
serve` and the reference Kafka, the outcomes compared: the Admin sets the group's share.auto.offset.reset, one
share consumer in explicit mode releases the first record it sees (which comes back with delivery count 2) and
accepts the rest, and the Admin describes the share group meanwhile."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.java_client import JavaClient
from compat_tests.test_transactions_support import create_topics, feed, unique

PER_PARTITION = 5
SHARE_GROUP_HEARTBEAT, SHARE_FETCH = 76, 78


def test_a_java_share_consumer_releases_and_accepts(java_pair: Pair, java: JavaClient) -> None:
    topic, group = unique("java-share"), unique("java-share-group")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=1)
        fed = feed(target.bootstrap, topic, PER_PARTITION, partitions=1)
        return fed, java.run("ShareGroups", target.bootstrap, "consume", topic, group, str(len(fed)))

    fed, kemu = scenario(java_pair.kemu)
    _, kafka = scenario(java_pair.kafka)
    check(f"java.{java.line}.share_group", kafka, kemu)
    values = [value for *_, value in fed]
    assert kemu["deliveries"] == [[value, 1] for value in values] + [[values[0], 2]]
    assert kemu["group"] == {"state": "Stable", "members": 1}
