"""The Kafka and kfake definitions start, answer Metadata, and leave nothing behind: what benchmarks.run
relies on before it measures them. Without java (and the kafka-4.3 jars) or go, these skip, and fail under
CI=true (compat_tests.external_clients.tool_missing). The first kfake run builds it (~1 min), later ones
reuse the cached binary; the Kafka one formats and starts one JVM (a few seconds)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.brokers import BrokerDefinition, RunningBroker
from benchmarks.kafka_probe import api_versions, metadata_broker_count
from benchmarks.peers import KAFKA_JVM_OPTIONS, KAFKA_SERVING_THREADS, kafka_definition, kfake_definition
from compat_tests.external_clients import tool_missing

PRODUCE, FETCH, INIT_PRODUCER_ID, END_TXN = 0, 1, 22, 26


def available(definition: BrokerDefinition) -> BrokerDefinition:
    if definition.unavailable is not None:
        tool_missing(f"{definition.label}: {definition.unavailable}")
    return definition


def test_kfake_starts_on_a_free_port_and_answers_metadata() -> None:
    with RunningBroker(available(kfake_definition())) as broker:
        assert broker.plan.command[1:] == ["-port", "0"]
        broker.start()
        assert broker.port > 0
        assert metadata_broker_count(broker.host, broker.port) == 1
        offered = api_versions(broker.host, broker.port)
        assert {PRODUCE, FETCH, INIT_PRODUCER_ID, END_TXN} <= offered.keys()
        assert broker.rss_kib() > 0
    assert not broker.alive()


def test_kafka_starts_with_the_benchmark_jvm_and_answers_metadata() -> None:
    with RunningBroker(available(kafka_definition())) as broker:
        command = broker.plan.command
        # The benchmark's JVM options, and not the tests' quick-start ones (C1 only, serial GC).
        assert command[1:1 + len(KAFKA_JVM_OPTIONS)] == list(KAFKA_JVM_OPTIONS)
        assert not any(option.startswith("-XX:TieredStopAtLevel") for option in command)
        assert command[-2] == "kafka.Kafka"
        properties = Path(command[-1])
        shown = dict(line.split("=", 1) for line in properties.read_text().splitlines() if "=" in line)
        assert {key: shown[key] for key in KAFKA_SERVING_THREADS} == KAFKA_SERVING_THREADS
        assert broker.plan.address is not None and shown["listeners"].startswith(
            f"PLAINTEXT://{broker.plan.address[0]}:{broker.plan.address[1]},")
        broker.start()
        assert metadata_broker_count(broker.host, broker.port) == 1
        assert {PRODUCE, FETCH, INIT_PRODUCER_ID, END_TXN} <= api_versions(broker.host, broker.port).keys()
        assert broker.rss_kib() > 0
        work_dir = properties.parents[1]
        assert work_dir.is_dir()
    assert not broker.alive()
    assert not work_dir.exists()  # the plan's cleanup removed the formatted folder
