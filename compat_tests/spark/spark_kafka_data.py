"""Topics written for the `format("kafka")` scenarios, with every record's place as the broker assigned it.

Each record sent is kept with the partition and offset of its delivery report and its fate (plain, committed,
aborted, left open), so what a Spark read must return is worked out from what the broker said it stored, not
written down by hand; and the rows Spark returns are reduced to what two brokers given the same writes must agree
on (a topic by the name the scenario gave it, not its unique name).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from compat_tests.spark.support import TIMEOUT_S

PLAIN, COMMITTED, ABORTED, OPEN = "plain", "committed", "aborted", "open"
VISIBLE_TO_READ_COMMITTED = frozenset({PLAIN, COMMITTED})

Header = tuple[str, bytes | None]


@dataclass(frozen=True)
class Sent:
    role: str
    """The topic's name in the scenario (its real name has a unique suffix)."""
    partition: int
    offset: int
    key: bytes
    value: bytes
    fate: str
    timestamp_ms: int | None = None
    headers: tuple[Header, ...] = ()


@dataclass
class Topics:
    """The scenario's topics on one broker: `role` -> unique real name, and everything sent to them."""

    bootstrap: str
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    names: dict[str, str] = field(default_factory=dict)
    sent: list[Sent] = field(default_factory=list)
    _open: list[Producer] = field(default_factory=list)

    def name(self, role: str) -> str:
        return self.names.setdefault(role, f"spark-{role}-{self.run}")

    def role(self, name: str) -> str:
        return {real: role for role, real in self.names.items()}[name]

    def create(self, *roles: str, partitions: int = 2) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.create_topics([NewTopic(self.name(role), partitions, 1) for role in roles])
        for future in futures.values():
            future.result(TIMEOUT_S)

    def send(self, producer: Producer, role: str, records: Iterable[tuple[int, bytes]], fate: str, *,
             timestamps: Sequence[int] | None = None,
             headers: Sequence[Sequence[Header]] | None = None) -> list[Sent]:
        """Send (partition, value) records (the value is also the key) and keep them once delivered."""
        delivered: list[Sent] = []
        failures: list[str] = []
        records = list(records)
        # A delivery report carries no headers: they are taken from what was sent, by the (unique) value.
        sent_headers = {value: tuple(headers[n]) for n, (_, value) in enumerate(records)} if headers else {}

        def report(error: Any, message: Message) -> None:
            if error is not None:
                failures.append(str(error))
                return
            value = message.value() or b""
            delivered.append(Sent(role, message.partition() or 0, message.offset() or 0, message.key() or b"",
                                  value, fate, message.timestamp()[1] if timestamps else None,
                                  sent_headers.get(value, ())))

        for n, (partition, value) in enumerate(records):
            extra: dict[str, Any] = {}
            if timestamps is not None:
                extra["timestamp"] = timestamps[n]
            if headers is not None:
                extra["headers"] = list(headers[n])
            producer.produce(self.name(role), value, key=value, partition=partition, on_delivery=report, **extra)
            producer.poll(0)
        producer.flush(TIMEOUT_S)
        if failures:
            raise KafkaException(failures[0])
        self.sent.extend(delivered)
        return delivered

    def plain(self, role: str, records: Iterable[tuple[int, bytes]], **extra: Any) -> list[Sent]:
        return self.send(Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True}), role,
                         records, PLAIN, **extra)

    def transactions(self, role: str, count: int, per_transaction: int, *, leave_open: int = 0) -> None:
        """`count` transactions, committed and aborted by turns (the first committed), spread over both
        partitions; then, with `leave_open`, one more left open with that many records."""
        producer = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": f"{self.name(role)}-txn"})
        producer.init_transactions(TIMEOUT_S)
        for t in range(count):
            fate = COMMITTED if t % 2 == 0 else ABORTED
            producer.begin_transaction()
            values = (b"txn-%d-%s-%d" % (t, fate.encode(), n) for n in range(per_transaction))
            self.send(producer, role, ((n % 2, value) for n, value in enumerate(values)), fate)
            (producer.commit_transaction if fate == COMMITTED else producer.abort_transaction)(TIMEOUT_S)
        if leave_open:
            opened = Producer({"bootstrap.servers": self.bootstrap, "transactional.id": f"{self.name(role)}-open",
                               "transaction.timeout.ms": 900_000})
            opened.init_transactions(TIMEOUT_S)
            opened.begin_transaction()
            self.send(opened, role, ((n % 2, b"open-%d" % n) for n in range(leave_open)), OPEN)
            self._open.append(opened)

    def abort_open(self) -> None:
        for producer in self._open:
            producer.abort_transaction(TIMEOUT_S)
        self._open.clear()

    def of(self, *roles: str, fates: frozenset[str] = VISIBLE_TO_READ_COMMITTED) -> list[Sent]:
        return [record for record in self.sent if record.role in roles and record.fate in fates]


KafkaRow = tuple[Any, ...]


def rows(topics: Topics, frame: DataFrame | list[Row], *, with_timestamps: bool = False,
         with_headers: bool = False) -> list[KafkaRow]:
    """Spark's Kafka rows as (role, partition, offset, key, value[, timestamp ms][, headers]), sorted (the
    timestamp in milliseconds is read from the column `ts_ms`, which `with_millis` adds)."""
    collected = frame.collect() if isinstance(frame, DataFrame) else frame
    out = []
    for row in collected:
        entry: list[Any] = [topics.role(row["topic"]), row["partition"], row["offset"], bytes(row["key"]),
                            bytes(row["value"])]
        if with_timestamps:
            entry.append(row["ts_ms"])
        if with_headers:
            entry.append(tuple((h["key"], None if h["value"] is None else bytes(h["value"]))
                               for h in row["headers"] or ()))
        out.append(tuple(entry))
    return sorted(out)


def with_millis(frame: DataFrame) -> DataFrame:
    """The record timestamp in milliseconds since the epoch, as Kafka stored it (no time zone in between)."""
    return frame.withColumn("ts_ms", F.expr("unix_millis(timestamp)"))


def expected(records: Iterable[Sent], *, with_timestamps: bool = False, with_headers: bool = False) -> list[KafkaRow]:
    out = []
    for record in records:
        entry: list[Any] = [record.role, record.partition, record.offset, record.key, record.value]
        if with_timestamps:
            entry.append(record.timestamp_ms)
        if with_headers:
            entry.append(record.headers)
        out.append(tuple(entry))
    return sorted(out)


def on_both(brokers: dict[str, str], scenario: Callable[[Topics], Any]) -> dict[str, Any]:
    """The scenario's outcome on each broker (the `brokers` fixture: kemu and the reference Kafka), each on
    topics of its own; equal on both (what it asserted of each itself is checked inside the scenario)."""
    outcomes = {label: scenario(Topics(bootstrap)) for label, bootstrap in brokers.items()}
    assert outcomes["kemu"] == outcomes["kafka"], "kemu and Kafka differ"
    return outcomes
