"""The Java 4.3 client against `kemu serve` and the reference Kafka, the outcomes compared: its Produce v13 and
Fetch v18, which name topics by id (KIP-516) — the idempotent producer's writes and what its consumer reads
back, exactly what was sent, kemu's transcript showing the versions the client chose — and the admin's
describeMetadataQuorum (DescribeQuorum v2) and listConfigResources (ListConfigResources v1)."""

from __future__ import annotations

from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.conftest import JavaKemu
from compat_tests.java.java_client import JavaClient
from compat_tests.java.test_java_transactions import PROGRAM, rows
from compat_tests.test_transactions_support import create_topics, unique

PRODUCE, FETCH, DESCRIBE_QUORUM, LIST_CONFIG_RESOURCES = 0, 1, 55, 74


def versions_for(kemu: JavaKemu, api_key: int, topic: str) -> set[int]:
    """The versions of the exchanges of this API that named the topic (by name or, resolved, by id)."""
    return {entry["version"] for entry in kemu.exchanges(api_key)
            if any(note["topic"] == topic for note in entry["request"].get("partitions", []))}


def test_produce_v13_and_fetch_v18_by_topic_id(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    topic = unique("java-topic-ids")
    codecs = ["none", "lz4"]
    per_partition = 40

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=len(codecs))
        return java.run(PROGRAM, target.bootstrap, "idempotent", topic, str(per_partition), *codecs)

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.topic_ids", kafka, result, varying={"producerId": "producer_id"})
    assert result["offsets"] == [list(range(per_partition + 1))] * len(codecs)
    assert rows(result["read"]) == sorted((topic, p, n, f"v-{p}-{n}") for p in range(len(codecs))
                                          for n in range(per_partition))
    # The client sent this topic's records as Produce v13 and read them as Fetch v18 only, both by topic id.
    assert versions_for(java_kemu, PRODUCE, topic) == {13}
    assert versions_for(java_kemu, FETCH, topic) == {18}


def test_describe_metadata_quorum(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    kafka, result = java_pair.both(lambda target: java.run("AdminCalls", target.bootstrap, "quorum"))
    # The leader's epoch counts the elections since the reference Kafka was formatted, which its restarts and
    # the earlier tests of a run move; kemu's single voter is at 1 (asserted below).
    check(f"java.{java.line}.describe_metadata_quorum", kafka, result, varying={"leaderEpoch": "count"})
    assert result == {"leaderId": 1, "leaderEpoch": 1, "highWatermarkKnown": True, "voters": [1], "observers": [],
                      "allCaughtUp": True}
    assert {entry["version"] for entry in java_kemu.exchanges(DESCRIBE_QUORUM)} == {2}


def set_group_config(bootstrap: str, group: str) -> None:
    """A group with a config of its own, which ListConfigResources lists (a group without one it does not)."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
        ConfigEntry("share.isolation.level", "read_committed", incremental_operation=AlterConfigOpType.SET)])
    admin = AdminClient({"bootstrap.servers": bootstrap})  # held until the answer: a dropped client aborts it
    admin.incremental_alter_configs([resource])[resource].result(30)


def test_list_config_resources(java_pair: Pair, java_kemu: JavaKemu, java: JavaClient) -> None:
    prefix = unique("java-lcr")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [f"{prefix}-b", f"{prefix}-a"], partitions=1)
        set_group_config(target.bootstrap, f"{prefix}-g")
        return {"all": java.run("AdminCalls", target.bootstrap, "config-resources", prefix),
                "brokers and topics": java.run("AdminCalls", target.bootstrap, "config-resources", prefix,
                                               "BROKER", "TOPIC"),
                "groups": java.run("AdminCalls", target.bootstrap, "config-resources", prefix, "GROUP")}

    kafka, result = java_pair.both(scenario)
    check(f"java.{java.line}.list_config_resources", kafka, result)
    assert result["brokers and topics"] == [["BROKER", "1"], ["TOPIC", f"{prefix}-a"], ["TOPIC", f"{prefix}-b"]]
    # Client metrics subscriptions of other tests (the telemetry ones) share the session's brokers: the listing of
    # every type holds them too, on both, in Kafka's order; only this test's resources are compared here.
    mine = [entry for entry in result["all"] if entry[0] != "CLIENT_METRICS"]
    assert mine == [["BROKER", "1"], ["BROKER_LOGGER", "1"], ["GROUP", f"{prefix}-g"],
                    *result["brokers and topics"][1:]]
    assert result["groups"] == [["GROUP", f"{prefix}-g"]]
    assert {entry["version"] for entry in java_kemu.exchanges(LIST_CONFIG_RESOURCES)} == {1}
