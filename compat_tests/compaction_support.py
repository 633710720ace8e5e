"""What the compaction compat tests share: a `kemu serve --control-port` whose cleaner a test runs over HTTP
(POST /cleaner/run, the endpoint a test in any language has), topic configs changed with confluent-kafka's
IncrementalAlterConfigs, and readers of each client that say which records a consumer gets from offset 0."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import pytest

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for

CONTROL_LINE = re.compile(r"^kemu control on (\S+):(\d+)$", re.MULTILINE)
READ_TIMEOUT_S = 60.0
KeyValue = tuple[bytes | None, bytes | None]


@dataclass
class Compacting:
    server: KemuServeProcess

    @property
    def bootstrap(self) -> str:
        return self.server.bootstrap

    def control_url(self) -> str:
        """The control endpoint of the current run (a restart may pick another port)."""
        match = wait_for(lambda: list(CONTROL_LINE.finditer(self.server.output())),
                         what="the 'kemu control on' line", timeout=10)[-1]
        return f"http://{match[1]}:{match[2]}"

    def _call(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.control_url() + path, data=data, method=method)
        with closing(urllib.request.urlopen(request, timeout=120)) as answer:
            return json.loads(answer.read())

    def clean(self, topic: str | None = None) -> list[dict[str, Any]]:
        cleaned: list[dict[str, Any]] = self._call("POST", "/cleaner/run", {} if topic is None else {"topic": topic})[
            "cleaned"]
        return cleaned

    def inspect(self) -> dict[str, Any]:
        inspection: dict[str, Any] = self._call("GET", "/inspect")
        return inspection

    def restart(self) -> None:
        """Restart the server and wait for its new control endpoint's line (the port may change)."""
        seen = len(CONTROL_LINE.findall(self.server.output()))
        self.server.restart()
        wait_for(lambda: len(CONTROL_LINE.findall(self.server.output())) > seen,
                 what="the restarted server's 'kemu control on' line", timeout=30)


@pytest.fixture
def compacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Compacting]:
    server = KemuServeProcess(tmp_path_factory.mktemp("kemu-compaction"),
                              extra_args=("--control-port", "0",
                                          "--override", "log.retention.check.interval.ms=500"))
    server.start()
    try:
        yield Compacting(server)
    finally:
        if server.is_running():
            server.stop_cleanly()


def alter_topic_configs(bootstrap: str, topic: str, configs: dict[str, str]) -> None:
    """IncrementalAlterConfigs SET on a live topic, with confluent-kafka's admin client."""
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET) for name, value in configs.items()])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)


def confluent_read(bootstrap: str, topic: str, count: int, *, committed: bool = False,
                   start: int = 0) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of the first `count` records a confluent-kafka consumer gets from `start`."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kemu-compaction-reader",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed" if committed else "read_uncommitted"})
    with closing(consumer):
        consumer.assign([TopicPartition(topic, 0, start)])
        out: list[tuple[int, bytes | None, bytes | None]] = []
        deadline = time.monotonic() + READ_TIMEOUT_S
        while len(out) < count and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.2):
                if message.error():
                    raise AssertionError(f"confluent-kafka consumer error: {message.error()}")
                out.append((message.offset(), message.key(), message.value()))
        return out


def kafka_python_read(bootstrap: str, topic: str, count: int, *, committed: bool = False,
                      start: int = 0) -> list[tuple[int, bytes | None, bytes | None]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest",
                             fetch_max_wait_ms=200,
                             isolation_level="read_committed" if committed else "read_uncommitted")
    with closing(consumer):
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek(partition, start)
        out: list[tuple[int, bytes | None, bytes | None]] = []
        deadline = time.monotonic() + READ_TIMEOUT_S
        while len(out) < count and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                out.extend((m.offset, m.key, m.value) for m in batch)
        return out


def latest_per_key(records: list[tuple[int, bytes | None, bytes | None]]) -> dict[bytes | None, bytes | None]:
    return {key: value for _, key, value in records}
