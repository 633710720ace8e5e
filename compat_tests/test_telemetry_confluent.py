"""Client telemetry (KIP-714) with a stock client: a kemu with its receiver on (`kemu.client.telemetry.enable`,
set through the pytest plugin's marker) advertises GetTelemetrySubscriptions and PushTelemetry; librdkafka
(enable.metrics.push, on by default) asks for its subscription, is given the producer metrics a CLIENT_METRICS
resource subscribes it to, and pushes them; inspect() shows them decoded, under the names subscribed. Without the
receiver, librdkafka asks for nothing. The same through `kemu serve --override kemu.client.telemetry.enable=true
--control-port`: the control endpoint's inspection and `kemu inspect` show the pushes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from compat_tests.conformance.steps import Connection
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from kemu.testing import Broker
from tests.testing.test_control_openapi import send

PRODUCER_METRICS = "org.apache.kafka.producer."
CLIENT_ID = "telemetry-producer"


CONTROL_LINE = re.compile(r"^kemu control on (\S+):(\d+)$", re.MULTILINE)


class _Served:
    """What `subscribe` and `produce` need of a broker: its bootstrap address."""

    def __init__(self, bootstrap_servers: str) -> None:
        self.bootstrap_servers = bootstrap_servers


def subscribe(broker: Broker | _Served, name: str, values: dict[str, str]) -> None:
    """IncrementalAlterConfigs of a CLIENT_METRICS resource: confluent-kafka's admin has no such resource type."""
    host, port = broker.bootstrap_servers.split(":")
    connection = Connection((host, int(port)))
    try:
        answer = connection.exchange(44, 1, {"resources": [{"resource_type": 16, "resource_name": name, "configs": [
            {"name": key, "config_operation": 0, "value": value} for key, value in values.items()]}],
            "validate_only": False})
    finally:
        connection.close()
    assert isinstance(answer, dict) and answer["responses"][0]["error_code"] == 0, answer


def produce(broker: Broker | _Served, topic: str) -> Producer:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "client.id": CLIENT_ID,
                         "enable.metrics.push": True})
    for index in range(10):
        producer.produce(topic, f"v{index}".encode())
    assert producer.flush(15) == 0
    return producer


@pytest.mark.kemu(config={"kemu.client.telemetry.enable": "true"})
def test_librdkafka_pushes_the_subscribed_producer_metrics(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("metered")
    subscribe(kemu_broker, "producers", {"metrics": PRODUCER_METRICS, "interval.ms": "1000",
                                         "match": f"client_id={CLIENT_ID},client_software_name=confluent-kafka-.*"})
    producer = produce(kemu_broker, "metered")
    try:
        client = wait_for(lambda: [c for c in kemu_broker.inspect().telemetry_clients if c.client_id == CLIENT_ID],
                          what="librdkafka's GetTelemetrySubscriptions")[0]
        assert (client.client_software_name, client.requested_metrics, client.push_interval_ms) == (
            "confluent-kafka-python", [PRODUCER_METRICS], 1000)
        pushes = wait_for(lambda: [p for p in kemu_broker.inspect().telemetry
                                   if p.client_id == CLIENT_ID and p.metrics], what="a push with metrics")
    finally:
        producer.flush(5)
    names = {metric.name for push in pushes for metric in push.metrics}
    assert f"{PRODUCER_METRICS}node.request.latency.avg" in names, names
    assert all(name.startswith(PRODUCER_METRICS) for name in names), names
    assert all(push.error is None and push.subscription_id == client.subscription_id for push in pushes)
    assert any(point.time_unix_nano > 0 for push in pushes for metric in push.metrics for point in metric.points)


def test_without_the_receiver_librdkafka_asks_for_no_subscription(kemu_broker: Broker) -> None:
    kemu_broker.create_topic("unmetered")
    subscribe(kemu_broker, "everything", {"metrics": "*", "interval.ms": "100"})
    produce(kemu_broker, "unmetered")
    assert kemu_broker.inspect().telemetry_clients == []


def test_kemu_serve_with_the_receiver_shows_the_pushes_through_its_control_endpoint(tmp_path: Path) -> None:
    server = KemuServeProcess(tmp_path, extra_args=("--control-port", "0",
                                                     "--override", "kemu.client.telemetry.enable=true"))
    server.start()
    try:
        match = wait_for(lambda: CONTROL_LINE.search(server.output()), what="the 'kemu control on' line", timeout=10)
        control = f"{match[1]}:{match[2]}"
        served = _Served(server.bootstrap)
        subscribe(served, "producers", {"metrics": PRODUCER_METRICS, "interval.ms": "1000"})
        producer = produce(served, "served-metered")

        def pushed() -> list[dict[str, Any]]:
            answer = send(f"http://{control}", "GET", "/inspect").json()
            return [p for p in answer["telemetry"] if p["client_id"] == CLIENT_ID and p["metrics"]]

        pushes = wait_for(pushed, what="a push in the control endpoint's inspection")
        producer.flush(5)
        names = {metric["name"] for push in pushes for metric in push["metrics"]}
        assert f"{PRODUCER_METRICS}node.request.latency.avg" in names, names
        printed = subprocess.run([sys.executable, "-m", "kemu", "inspect", "--control", control],
                                 capture_output=True, text=True, timeout=60, check=True).stdout
        assert "Telemetry clients" in printed and pushes[0]["client_instance_id"] in printed
    finally:
        server.stop()
