"""`kemu serve --override name=value` sets Kafka broker settings, as kafka-server-start's --override does:
clients see them in DescribeConfigs as static broker configs, and topics inherit the log.* defaults."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic

from compat_tests.kemu_process import KemuServeProcess


@pytest.fixture
def tuned_server(tmp_path: Path) -> Iterator[KemuServeProcess]:
    process = KemuServeProcess(tmp_path / "data", extra_args=(
        "--override", "group.initial.rebalance.delay.ms=0",
        "--override", "log.retention.ms=5000",
    ))
    process.start()
    try:
        yield process
    finally:
        process.stop_cleanly()


def test_overrides_are_static_broker_configs_and_topic_defaults(tuned_server: KemuServeProcess,
                                                                 topic_name: str) -> None:
    admin = AdminClient({"bootstrap.servers": tuned_server.bootstrap})
    admin.create_topics([NewTopic(topic_name, num_partitions=1)])[topic_name].result(timeout=15)

    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    entries = admin.describe_configs([broker])[broker].result(timeout=15)
    delay = entries["group.initial.rebalance.delay.ms"]
    assert (delay.value, delay.source) == ("0", ConfigSource.STATIC_BROKER_CONFIG.value)

    topic = ConfigResource(ConfigResource.Type.TOPIC, topic_name)
    retention = admin.describe_configs([topic])[topic].result(timeout=15)["retention.ms"]
    assert retention.value == "5000"
    assert retention.source == ConfigSource.STATIC_BROKER_CONFIG.value


@pytest.mark.parametrize(("override", "message"), [
    ("num.partitions=zero", "num.partitions"),
    ("num.partitions=0", "num.partitions"),
    ("num.partitions", "--override takes NAME=VALUE"),
])
def test_a_bad_override_stops_the_server_before_it_listens(override: str, message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "kemu", "serve", "--port", "0", "--override", override],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr
    assert "kemu serving on" not in done.stdout


def test_an_unknown_setting_is_warned_about_as_kafka_does(tmp_path: Path) -> None:
    process = KemuServeProcess(tmp_path / "data", extra_args=("--override", "no.such.broker.setting=8"))
    process.start()
    try:
        admin = AdminClient({"bootstrap.servers": process.bootstrap})
        assert admin.list_topics(timeout=15).brokers
    finally:
        process.stop_cleanly()
    assert "The configuration 'no.such.broker.setting' was supplied but isn't a known config." in process.output()

