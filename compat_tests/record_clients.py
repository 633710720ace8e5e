"""The five clients behind one small interface, for the data-plane compat tests: produce records, read a
partition from an offset (by assignment: no consumer group), list offsets, delete records.

Each client is driven the way its users drive it — confluent-kafka (librdkafka), kafka-python and aiokafka
in this process, kafkajs through compat_tests/js/produce_consume.mjs, kcat as a command — and reports
what it saw as `Received` records, so a test can compare every client against the same expectations.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from compat_tests.external_clients import TOOL_TIMEOUT_S, Kafkajs, Kcat, ToolFailed, find_kafkajs, find_kcat

READ_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Record:
    """A record to produce. `timestamp` None lets the client stamp it."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: int | None = None


@dataclass(frozen=True)
class Received:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


class ProduceFailed(Exception):
    """The broker refused a record; `error` is the client's name for the error (e.g. MSG_SIZE_TOO_LARGE)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass
class Client(ABC):
    name: ClassVar[str]
    codecs: ClassVar[frozenset[str]]
    """The compression codecs this client can write."""
    read_codecs: ClassVar[frozenset[str]]
    """The compression codecs it can read."""
    bootstrap: str
    allows_null_key_and_value: ClassVar[bool] = True
    """kafka-python and aiokafka refuse a record with neither key nor value."""

    @abstractmethod
    def produce(self, topic: str, records: Sequence[Record], *, compression: str = "none",
                max_request_bytes: int | None = None, idempotent: bool = False) -> list[int]:
        """Produce with acks=all; the offsets the broker acknowledged, in order. Raises ProduceFailed."""

    @abstractmethod
    def read(self, topic: str, partition: int, offset: int, count: int) -> list[Received]:
        """`count` records of one partition from `offset`, by assignment."""

    @abstractmethod
    def offset_for_time(self, topic: str, partition: int, timestamp: int) -> int | None:
        """ListOffsets by timestamp: the first offset at or after it, None if there is none."""

    @abstractmethod
    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        """(earliest, latest) offsets."""


def require_codec(client: Client, codec: str) -> None:
    if codec == "none" or codec in client.codecs:
        return
    pytest.skip(f"{client.name} cannot write {codec} (no codec for it in this client)")


# --- confluent-kafka ---------------------------------------------------------------------------------


@dataclass
class Confluent(Client):
    name = "confluent-kafka"
    codecs = read_codecs = frozenset({"gzip", "snappy", "lz4", "zstd"})

    def produce(self, topic: str, records: Sequence[Record], *, compression: str = "none",
                max_request_bytes: int | None = None, idempotent: bool = False) -> list[int]:
        from confluent_kafka import Producer

        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap, "acks": "all", "linger.ms": 5,
                                  "compression.type": compression, "enable.idempotence": idempotent}
        if max_request_bytes is not None:
            config["message.max.bytes"] = max_request_bytes
        producer = Producer(config)
        reports: list[tuple[int, Any]] = []

        def report(index: int) -> Any:
            def delivered(error: Any, message: Any) -> None:
                reports.append((index, error or message.offset()))

            return delivered

        for index, record in enumerate(records):
            kwargs: dict[str, Any] = {"partition": record.partition, "key": record.key, "value": record.value,
                                      "headers": list(record.headers)}
            if record.timestamp is not None:
                kwargs["timestamp"] = record.timestamp
            producer.produce(topic, on_delivery=report(index), **kwargs)
            producer.poll(0)
        remaining = producer.flush(READ_TIMEOUT_S)
        assert remaining == 0, f"{remaining} messages still undelivered"
        offsets = [outcome for _, outcome in sorted(reports, key=lambda r: r[0])]
        for outcome in offsets:
            if not isinstance(outcome, int):
                raise ProduceFailed(outcome.name())
        return [int(o) for o in offsets]

    def _consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer({"bootstrap.servers": self.bootstrap, "group.id": "kemu-compat-assign-only",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})

    def read(self, topic: str, partition: int, offset: int, count: int) -> list[Received]:
        from confluent_kafka import TopicPartition

        with closing(self._consumer()) as consumer:
            consumer.assign([TopicPartition(topic, partition, offset)])
            out: list[Received] = []
            deadline = time.monotonic() + READ_TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                message = consumer.poll(0.2)
                if message is None:
                    continue
                if message.error():
                    raise AssertionError(f"confluent-kafka consumer error: {message.error()}")
                out.append(Received(message.partition(), message.offset(), message.key(), message.value(),
                                    tuple(message.headers() or ()), message.timestamp()[1]))
            return out

    def offset_for_time(self, topic: str, partition: int, timestamp: int) -> int | None:
        from confluent_kafka import TopicPartition

        with closing(self._consumer()) as consumer:
            [found] = consumer.offsets_for_times([TopicPartition(topic, partition, timestamp)], timeout=10)
            assert found.error is None, found.error
            return None if found.offset < 0 else int(found.offset)

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        with closing(self._consumer()) as consumer:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            return int(low), int(high)

    def delete_records(self, topic: str, partition: int, before: int) -> None:
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.delete_records([TopicPartition(topic, partition, before)])
        for future in futures.values():
            future.result(timeout=10)


# --- what kafka-python and aiokafka share (aiokafka began as kafka-python's port to asyncio) -------------


def _producer_options(bootstrap: str, compression: str, max_request_bytes: int | None,
                      idempotent: bool) -> dict[str, Any]:
    options: dict[str, Any] = {"bootstrap_servers": bootstrap, "acks": "all", "linger_ms": 5,
                               "enable_idempotence": idempotent,
                               "compression_type": None if compression == "none" else compression}
    if max_request_bytes is not None:
        options["max_request_size"] = max_request_bytes
    return options


def _received(m: Any) -> Received:
    """A kafka-python or aiokafka ConsumerRecord."""
    return Received(m.partition, m.offset, m.key, m.value, tuple(m.headers), m.timestamp)


# --- kafka-python ------------------------------------------------------------------------------------


@dataclass
class KafkaPython(Client):
    name = "kafka-python"
    # snappy, lz4 and zstd through python-snappy, lz4 and zstandard (the test extra installs them).
    codecs = read_codecs = frozenset({"gzip", "snappy", "lz4", "zstd"})
    allows_null_key_and_value = False

    def produce(self, topic: str, records: Sequence[Record], *, compression: str = "none",
                max_request_bytes: int | None = None, idempotent: bool = False) -> list[int]:
        from kafka import KafkaProducer
        from kafka.errors import KafkaError

        producer = KafkaProducer(**_producer_options(self.bootstrap, compression, max_request_bytes, idempotent))
        try:
            futures = [producer.send(topic, key=r.key, value=r.value, partition=r.partition,
                                     headers=list(r.headers), timestamp_ms=r.timestamp) for r in records]
            producer.flush(READ_TIMEOUT_S)
            try:
                return [future.get(READ_TIMEOUT_S).offset for future in futures]
            except KafkaError as exc:
                raise ProduceFailed(type(exc).__name__) from exc
        finally:
            producer.close(5)

    def _consumer(self) -> Any:
        from kafka import KafkaConsumer

        return KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=200)

    def read(self, topic: str, partition: int, offset: int, count: int) -> list[Received]:
        from kafka import TopicPartition

        with closing(self._consumer()) as consumer:
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek(tp, offset)
            out: list[Received] = []
            deadline = time.monotonic() + READ_TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=200).values():
                    out.extend(map(_received, batch))
            return out

    def offset_for_time(self, topic: str, partition: int, timestamp: int) -> int | None:
        from kafka import TopicPartition

        with closing(self._consumer()) as consumer:
            tp = TopicPartition(topic, partition)
            found = consumer.offsets_for_times({tp: timestamp})[tp]
            return None if found is None else int(found.offset)

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from kafka import TopicPartition

        with closing(self._consumer()) as consumer:
            tp = TopicPartition(topic, partition)
            return int(consumer.beginning_offsets([tp])[tp]), int(consumer.end_offsets([tp])[tp])

    def delete_records(self, topic: str, partition: int, before: int) -> None:
        from kafka import TopicPartition
        from kafka.admin import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            admin.delete_records({TopicPartition(topic, partition): before})
        finally:
            admin.close()


# --- aiokafka ----------------------------------------------------------------------------------------


@dataclass
class AioKafka(Client):
    name = "aiokafka"
    codecs = read_codecs = frozenset({"gzip", "snappy", "lz4", "zstd"})
    allows_null_key_and_value = False

    def produce(self, topic: str, records: Sequence[Record], *, compression: str = "none",
                max_request_bytes: int | None = None, idempotent: bool = False) -> list[int]:
        from aiokafka import AIOKafkaProducer
        from aiokafka.errors import KafkaError

        async def run() -> list[int]:
            producer = AIOKafkaProducer(**_producer_options(self.bootstrap, compression, max_request_bytes,
                                                            idempotent))
            await producer.start()
            try:
                futures = [await producer.send(topic, key=r.key, value=r.value, partition=r.partition,
                                               headers=list(r.headers), timestamp_ms=r.timestamp) for r in records]
                try:
                    return [(await future).offset for future in futures]
                except KafkaError as exc:
                    raise ProduceFailed(type(exc).__name__) from exc
            finally:
                await producer.stop()

        return asyncio.run(run())

    def _run_consumer(self, work: Any) -> Any:
        from aiokafka import AIOKafkaConsumer

        async def run() -> Any:
            consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                        auto_offset_reset="earliest", fetch_max_wait_ms=200)
            await consumer.start()
            try:
                return await work(consumer)
            finally:
                await consumer.stop()

        return asyncio.run(run())

    def read(self, topic: str, partition: int, offset: int, count: int) -> list[Received]:
        from aiokafka import TopicPartition

        async def work(consumer: Any) -> list[Received]:
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            consumer.seek(tp, offset)
            out: list[Received] = []
            deadline = time.monotonic() + READ_TIMEOUT_S
            while len(out) < count and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=200)).values():
                    out.extend(map(_received, batch))
            return out

        result: list[Received] = self._run_consumer(work)
        return result

    def offset_for_time(self, topic: str, partition: int, timestamp: int) -> int | None:
        from aiokafka import TopicPartition

        async def work(consumer: Any) -> int | None:
            tp = TopicPartition(topic, partition)
            found = (await consumer.offsets_for_times({tp: timestamp}))[tp]
            return None if found is None else int(found.offset)

        result: int | None = self._run_consumer(work)
        return result

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from aiokafka import TopicPartition

        async def work(consumer: Any) -> tuple[int, int]:
            tp = TopicPartition(topic, partition)
            low = (await consumer.beginning_offsets([tp]))[tp]
            high = (await consumer.end_offsets([tp]))[tp]
            return int(low), int(high)

        result: tuple[int, int] = self._run_consumer(work)
        return result

    def delete_records(self, topic: str, partition: int, before: int) -> None:
        from aiokafka import TopicPartition
        from aiokafka.admin import AIOKafkaAdminClient, RecordsToDelete

        async def run() -> None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
            await admin.start()
            try:
                await admin.delete_records({TopicPartition(topic, partition): RecordsToDelete(before)},
                                           timeout_ms=10000)
            finally:
                await admin.close()

        asyncio.run(run())


# --- kafkajs -----------------------------------------------------------------------------------------

_KAFKAJS_CODECS = {"none": "None", "gzip": "GZIP", "snappy": "Snappy", "lz4": "LZ4", "zstd": "ZSTD"}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


@dataclass
class KafkaJs(Client):
    name = "kafkajs"
    # kafkajs ships gzip only; snappy, lz4 and zstd need codec packages a project installs itself.
    codecs = read_codecs = frozenset({"gzip"})
    tool: Kafkajs = field(default_factory=find_kafkajs)

    def _run(self, *args: str) -> Any:
        return self.tool.run("produce_consume", self.bootstrap, *args)

    def produce(self, topic: str, records: Sequence[Record], *, compression: str = "none",
                max_request_bytes: int | None = None, idempotent: bool = False) -> list[int]:
        from compat_tests.external_clients import KafkajsError

        messages = [{"partition": r.partition, "key": _b64(r.key), "value": _b64(r.value),
                     "headers": {k: _b64(v) for k, v in r.headers}, "timestamp": r.timestamp} for r in records]
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "messages.json"
            path.write_text(json.dumps(messages))
            try:
                metadata = self._run("produce", topic, str(path), _KAFKAJS_CODECS[compression], "-1",
                                     "idempotent" if idempotent else "plain")
            except KafkajsError as exc:
                raise ProduceFailed(exc.type or exc.error.get("name", "?")) from exc
        # One entry per partition with its base offset; records of a partition got consecutive offsets.
        next_offset = {m["partition"]: int(m["baseOffset"]) for m in metadata}
        offsets = []
        for record in records:
            offsets.append(next_offset[record.partition])
            next_offset[record.partition] += 1
        return offsets

    def read(self, topic: str, partition: int, offset: int, count: int) -> list[Received]:
        found = self._run("fetch", topic, str(partition), str(offset), str(count))
        return [Received(r["partition"], r["offset"], _unb64(r["key"]), _unb64(r["value"]),
                         tuple((k, _unb64(v)) for k, v in r["headers"].items()), r["timestamp"]) for r in found]

    def offset_for_time(self, topic: str, partition: int, timestamp: int) -> int | None:
        result = self._run("offsets", topic, str(timestamp))
        [found] = [p for p in result["byTimestamp"] if p["partition"] == partition]
        [latest] = [p for p in result["offsets"] if p["partition"] == partition]
        offset = int(found["offset"])
        # kafkajs turns the broker's "no such offset" (-1) into the high watermark, as its docs say.
        return None if offset < 0 or offset == int(latest["high"]) else offset

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        result = self._run("offsets", topic)
        [found] = [p for p in result["offsets"] if p["partition"] == partition]
        return int(found["low"]), int(found["high"])

    def delete_records(self, topic: str, partition: int, before: int) -> None:
        self._run("delete-records", topic, str(partition), str(before))


# --- kcat --------------------------------------------------------------------------------------------

_KCAT_DELIMITER = "\x1f"  # unit separator: never inside the test's text keys and values


@dataclass
class KcatClient(Client):
    """kcat writes text lines: a key and value per line, the same headers on every record, the client's
    own timestamps; it reads any record (kcat -J prints keys and values as text, null as null)."""

    name = "kcat"
    # kcat 1.7.1 bundles librdkafka 2.0.2, which decides gzip, snappy and lz4 support from Produce v2 and
    # sends those batches uncompressed to a broker whose ApiVersions lists Produce from v3 (librdkafka issue
    # #4956); Kafka 4 lists it from v0 for that reason (KAFKA-18659), as kemu does, so kcat compresses.
    codecs = frozenset({"gzip", "snappy", "lz4", "zstd"})
    read_codecs = frozenset({"gzip", "snappy", "lz4", "zstd"})
    tool: Kcat = field(default_factory=find_kcat)

    def produce(self, topic: str, records: Sequence[Record], *, compression: str = "none",
                max_request_bytes: int | None = None, idempotent: bool = False, null_empty: bool = False) -> list[int]:
        partitions = {r.partition for r in records}
        assert len(partitions) == 1, "kcat produces to one partition per run"
        headers = {r.headers for r in records}
        assert len(headers) == 1, "kcat puts the same headers on every record"
        assert all(r.timestamp is None for r in records), "kcat stamps its own timestamps"
        args = ["-P", "-t", topic, "-p", str(partitions.pop()), "-K", _KCAT_DELIMITER, "-D", "\n",
                "-X", f"compression.codec={compression}", "-X", "acks=all",
                "-X", f"enable.idempotence={str(idempotent).lower()}"]
        if null_empty:
            args.append("-Z")
        if max_request_bytes is not None:
            args += ["-X", f"message.max.bytes={max_request_bytes}"]
        for name, value in headers.pop():
            args += ["-H", f"{name}={value.decode()}"]
        lines = "".join(f"{(r.key or b'').decode()}{_KCAT_DELIMITER}{(r.value or b'').decode()}\n" for r in records)
        before = self.watermarks(topic, records[0].partition)[1]
        completed = subprocess.run([self.tool.executable, "-b", self.bootstrap, *args], input=lines,
                                   capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False)
        if "Delivery failed" in completed.stderr:
            raise ProduceFailed(completed.stderr.strip())
        if completed.returncode != 0:
            raise ToolFailed(f"kcat -P exited {completed.returncode}: {completed.stderr}")
        return list(range(before, before + len(records)))

    def read(self, topic: str, partition: int, offset: int, count: int) -> list[Received]:
        completed = self.tool.run(self.bootstrap, "-C", "-t", topic, "-p", str(partition), "-o", str(offset),
                                  "-c", str(count), "-e", "-J", "-q")
        if completed.returncode != 0:
            raise ToolFailed(f"kcat -C exited {completed.returncode}: {completed.stderr}")
        out = []
        for line in completed.stdout.splitlines():
            document = json.loads(line)
            names_values = document.get("headers") or []
            headers = tuple((names_values[i], None if names_values[i + 1] is None else names_values[i + 1].encode())
                            for i in range(0, len(names_values), 2))
            key, value = document["key"], document["payload"]
            out.append(Received(document["partition"], document["offset"],
                                None if key is None else key.encode(), None if value is None else value.encode(),
                                headers, document["ts"]))
        return out

    def offset_for_time(self, topic: str, partition: int, timestamp: int) -> int | None:
        completed = self.tool.run(self.bootstrap, "-Q", "-t", f"{topic}:{partition}:{timestamp}")
        if completed.returncode != 0:
            raise ToolFailed(f"kcat -Q exited {completed.returncode}: {completed.stderr}")
        # "<topic> [<partition>] offset <offset>"
        offset = int(completed.stdout.split("offset")[-1].split()[0])
        return offset if offset >= 0 else None

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        low = self._query(topic, partition, -2)
        high = self._query(topic, partition, -1)
        return low, high

    def _query(self, topic: str, partition: int, special: int) -> int:
        completed = self.tool.run(self.bootstrap, "-Q", "-t", f"{topic}:{partition}:{special}")
        if completed.returncode != 0:
            raise ToolFailed(f"kcat -Q exited {completed.returncode}: {completed.stderr}")
        return int(completed.stdout.split("offset")[-1].split()[0])


CLIENTS: dict[str, type[Client]] = {
    cls.name: cls for cls in (Confluent, KafkaPython, AioKafka, KafkaJs, KcatClient)
}
DELETERS = ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs")
"""The clients with a DeleteRecords call (kcat has none)."""


def create_topic(bootstrap: str, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=configs or {})], operation_timeout=10)
    for future in futures.values():
        future.result(timeout=10)
