"""Client telemetry (KIP-714) with the Java 4.3 client: its admin subscribes a client by a CLIENT_METRICS resource
and describes and lists it, on kemu and on the reference Kafka, the outcomes compared; its producer, without a
telemetry receiver on either (the reference has no ClientTelemetry reporter, and kemu's is off by default), gets
no client instance id on both; and against a kemu with the receiver on, it is given the subscription and pushes
producer metrics, which inspect() shows under the instance id the producer reports. (No terminating push from
its close reached kemu in 20 s when tried, so none is asserted: the producer's sender may stop before the
telemetry sender sends it.)"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from compat_tests.differential.compare import check
from compat_tests.differential.targets import Pair, Target
from compat_tests.java.java_client import JavaClient
from compat_tests.polling import wait_for
from compat_tests.test_transactions_support import create_topics, unique
from kemu.testing import Broker

PRODUCER_METRICS = "org.apache.kafka.producer."
CLIENT_ID = "kemu-compat-java-telemetry"
MATCH = f"client_id={CLIENT_ID},client_software_name=apache-kafka-java"


@pytest.fixture
def receiving() -> Iterator[Broker]:
    with Broker(config={"kemu.client.telemetry.enable": "true"}) as broker:
        yield broker


def subscribe(java: JavaClient, bootstrap: str, name: str, interval_ms: int = 1000) -> dict[str, Any]:
    result: dict[str, Any] = java.run("Telemetry", bootstrap, "subscribe", name, PRODUCER_METRICS, str(interval_ms),
                                      MATCH)
    assert name in result["listed"], result
    return result["described"]  # type: ignore[no-any-return]


def test_the_admin_subscribes_describes_and_lists(java_pair: Pair, java: JavaClient) -> None:
    name = unique("java-telemetry")
    kafka, kemu = java_pair.both(lambda target: subscribe(java, target.bootstrap, name))
    check(f"java.{java.line}.telemetry_subscription", kafka, kemu)
    assert kemu == {"interval.ms": ["1000", "DYNAMIC_CLIENT_METRICS_CONFIG"],
                    "match": [MATCH, "DYNAMIC_CLIENT_METRICS_CONFIG"],
                    "metrics": [PRODUCER_METRICS, "DYNAMIC_CLIENT_METRICS_CONFIG"]}


def test_without_a_receiver_the_producer_gets_no_instance_id(java_pair: Pair, java: JavaClient) -> None:
    topic = unique("java-telemetry-off")

    def scenario(target: Target) -> Any:
        create_topics(target.bootstrap, [topic], partitions=1)
        return java.run("Telemetry", target.bootstrap, "produce", topic, "3", "0")

    kafka, kemu = java_pair.both(scenario)
    check(f"java.{java.line}.telemetry_without_receiver", kafka, kemu)
    assert kemu["instance"] is None and kemu["thrown"] is not None, kemu


def test_the_producer_pushes_its_metrics_to_the_receiver(receiving: Broker, java: JavaClient) -> None:
    bootstrap = receiving.bootstrap_servers
    subscribe(java, bootstrap, "java-producers")
    receiving.create_topic("java-metered")
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(java.run, "Telemetry", bootstrap, "produce", "java-metered", "20", "5000")
        # While the producer is connected (its instance goes with its connection, as in Kafka).
        [client] = wait_for(lambda: [c for c in receiving.inspect().telemetry_clients if c.client_id == CLIENT_ID],
                            what="the Java producer's client instance")
        result = running.result()
    instance = result["instance"]
    assert instance == client.client_instance_id and result["thrown"] is None, (result, client)
    assert (client.client_id, client.client_software_name, client.requested_metrics, client.push_interval_ms) == (
        CLIENT_ID, "apache-kafka-java", [PRODUCER_METRICS], 1000)
    pushes = wait_for(lambda: [p for p in receiving.inspect().telemetry if p.client_instance_id == instance],
                      what="the Java producer's pushes")
    names = {metric.name for push in pushes for metric in push.metrics}
    assert names and all(name.startswith(PRODUCER_METRICS) for name in names), names
    assert f"{PRODUCER_METRICS}record.send.total" in names or f"{PRODUCER_METRICS}record.send.rate" in names, names
    assert all(p.error is None and p.subscription_id == client.subscription_id for p in pushes)
