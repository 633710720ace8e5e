"""Spark's own Kafka source and sink (`format("kafka")`) in the setups a production pipeline has, in this session's
SparkSession:

- over SASL_SSL with SCRAM-SHA-512, configured as Spark's options (`kafka.security.protocol`,
  `kafka.sasl.mechanism`, `kafka.sasl.jaas.config`, `kafka.ssl.truststore.*`: a PKCS12 trust store for the
  source, a PEM one for the sink), against a `kemu serve` whose only listener is SASL_SSL;
- against a three-broker kemu, a stream to Spark's file sink while the input's partition leaders move and then
  a broker is stopped, the producer writing all along.

Each reads read_committed an input of plain records and committed and aborted transactions, and its output is
the committed input, record by record."""

from __future__ import annotations

import collections
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.spark.killed_query import (
    PARTITIONS,
    PREFIX,
    Feed,
    batch_ids,
    read_with_offsets,
    wait_until,
)
from kemu.spark import spark_kafka_options
from kemu.testing import Broker
from kemu.testing.certs import TestCertificates, sasl_settings
from kemu.testing.ports import free_port

pytestmark = pytest.mark.timeout(300)
USERS = {"alice": "alice-secret", "spark": "spark-secret"}
TRUSTSTORE_PASSWORD = "truststore-secret"
CLIENT_TIMEOUT_S = 60.0


def _prefixed(stream: DataFrame) -> DataFrame:
    return stream.select("key", F.concat(F.lit(PREFIX), F.col("value")).alias("value"))


def _expected(feed: Feed) -> collections.Counter[bytes]:
    return collections.Counter(PREFIX + value for value in feed.visible)


# ---- SASL_SSL with SCRAM-SHA-512 ---------------------------------------------------------------------------


class SecuredServe:
    """A `kemu serve` with one listener, SASL_SSL (SCRAM-SHA-512 for USERS), and what its clients need."""

    def __init__(self, directory: Path) -> None:
        self.certs = TestCertificates.create(directory / "certs")
        settings = {
            "listeners": f"SASL_SSL://127.0.0.1:{free_port()}",
            "inter.broker.listener.name": "SASL_SSL",
            **self.certs.tls_settings(),
            **sasl_settings("sasl_ssl", ("SCRAM-SHA-512",), USERS),
        }
        extra: list[str] = []
        for name, value in settings.items():
            extra += ["--override", f"{name}={value}"]
        self.process = KemuServeProcess(directory / "data", extra_args=tuple(extra))
        ca = x509.load_pem_x509_certificate(self.certs.ca_file.read_bytes())
        self.truststore = directory / "truststore.p12"
        self.truststore.write_bytes(pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(ca, b"kemu-test-ca")],
            serialization.BestAvailableEncryption(TRUSTSTORE_PASSWORD.encode())))

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    def client(self, user: str = "alice") -> dict[str, str]:
        """confluent-kafka's settings (librdkafka)."""
        return {"security.protocol": "SASL_SSL", "ssl.ca.location": str(self.certs.ca_file),
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": USERS[user]}

    def spark_options(self, truststore: str) -> dict[str, str]:
        """Spark's kafka.* options for the Java client, as user "spark", trusting the CA from a PKCS12 trust
        store ("pkcs12") or a PEM file ("pem")."""
        options = {"kafka.bootstrap.servers": self.bootstrap, "kafka.security.protocol": "SASL_SSL",
                   "kafka.sasl.mechanism": "SCRAM-SHA-512",
                   "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                             f'username="spark" password="{USERS["spark"]}";'}
        if truststore == "pkcs12":
            options |= {"kafka.ssl.truststore.type": "PKCS12", "kafka.ssl.truststore.location": str(self.truststore),
                        "kafka.ssl.truststore.password": TRUSTSTORE_PASSWORD}
        else:
            options |= {"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(self.certs.ca_file)}
        return options


@pytest.fixture(scope="module")
def secured_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredServe]:
    serve = SecuredServe(tmp_path_factory.mktemp("kemu-sasl-ssl"))
    for _ in running(serve.process):
        yield serve


def _create(bootstrap: str, client: dict[str, str], *topics: str, replication: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **client})
    for future in admin.create_topics([NewTopic(t, PARTITIONS, replication) for t in topics]).values():
        future.result(CLIENT_TIMEOUT_S)


def test_spark_source_and_sink_over_sasl_ssl_with_scram(spark_kafka: SparkSession, secured_serve: SecuredServe,
                                                         tmp_path: Path,
                                                         record_property: Callable[[str, object], None]) -> None:
    label = uuid.uuid4().hex[:8]
    source, output = f"secured-in-{label}", f"secured-out-{label}"
    client = secured_serve.client()
    _create(secured_serve.bootstrap, client, source, output)
    feed = Feed(secured_serve.bootstrap, source, client, prefill_steps=12)
    feed.prefill()

    stream = (spark_kafka.readStream.format("kafka").options(**secured_serve.spark_options("pkcs12"))
              .option("kafka.isolation.level", "read_committed").option("subscribe", source)
              .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "16").load())
    query = (_prefixed(stream).writeStream.format("kafka").options(**secured_serve.spark_options("pem"))
             .option("topic", output).option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(CLIENT_TIMEOUT_S * 3)
    assert query.exception() is None
    batches = len(batch_ids(tmp_path / "checkpoint", "commits"))

    # Spark's batch read of the output, over SASL_SSL too, and confluent-kafka's, read_committed.
    read = (spark_kafka.read.format("kafka").options(**secured_serve.spark_options("pem"))
            .option("kafka.isolation.level", "read_committed").option("subscribe", output)
            .option("startingOffsets", "earliest").option("endingOffsets", "latest").load()
            .select("key", "value").collect())
    rows = collections.Counter((bytes(row.key), bytes(row.value)) for row in read)
    assert rows == collections.Counter((value, PREFIX + value) for value in feed.visible)
    consumed = read_with_offsets(secured_serve.bootstrap, output, client=client)
    assert collections.Counter(consumed.values()) == _expected(feed)
    # Spark's clients were the user "spark", and authenticated with SCRAM-SHA-512 (kemu logs each login).
    assert "authenticated as User:spark with SCRAM-SHA-512" in secured_serve.process.output()
    record_property("records", len(read))
    record_property("batches", batches)
    print(f"\nSASL_SSL: input {len(feed.plain) + len(feed.committed) + len(feed.aborted)} records "
          f"({len(feed.visible)} committed), {batches} batches, output {len(read)} records")


# ---- a three-broker kemu, leaders moved and a broker stopped -----------------------------------------------


@pytest.mark.kemu(brokers=3)
def test_a_stream_through_a_leader_move_and_a_stopped_broker(spark_kafka: SparkSession, kemu_broker: Broker,
                                                            tmp_path: Path,
                                                            record_property: Callable[[str, object], None]) -> None:
    bootstrap = kemu_broker.bootstrap_servers
    topic = f"cluster-in-{uuid.uuid4().hex[:8]}"
    kemu_broker.create_topic(topic, partitions=PARTITIONS, replication_factor=3)
    moved, stopped = threading.Event(), threading.Event()
    # The producer waits at these steps until the disturbance before them: it writes before, between and after.
    feed = Feed(bootstrap, topic, prefill_steps=6, total_steps=42, pace=0.1, gates={18: moved, 30: stopped})
    feed.prefill()
    checkpoint, folder = tmp_path / "checkpoint", tmp_path / "output"
    stream = (spark_kafka.readStream.format("kafka").options(**spark_kafka_options(bootstrap))
              .option("subscribe", topic).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", "20").load())
    query = (_prefixed(stream).writeStream.format("parquet").option("path", str(folder))
             .option("checkpointLocation", str(checkpoint)).trigger(processingTime="200 milliseconds").start())
    events: dict[str, Any] = {}
    try:
        feed.start()

        def commits_past(count: int) -> Callable[[], bool]:
            def done() -> bool:
                assert query.exception() is None, query.exception()
                assert feed.failure is None, feed.failure
                return len(batch_ids(checkpoint, "commits")) >= count
            return done

        wait_until(commits_past(2), "the query's first two batches", timeout=120)
        leaders = {p: kemu_broker.leader(topic, p) for p in range(PARTITIONS)}
        for partition, leader in leaders.items():
            kemu_broker.move_leader(topic, partition, 1 + leader % 3)
        events["leaders"] = (leaders, {p: kemu_broker.leader(topic, p) for p in range(PARTITIONS)})
        events["batches before the move"] = len(batch_ids(checkpoint, "commits"))
        moved.set()
        wait_until(commits_past(events["batches before the move"] + 2), "two batches after the leaders moved",
              timeout=120)
        victim = kemu_broker.leader(topic, 0)
        kemu_broker.stop_broker(victim)
        events["stopped"] = victim
        events["batches before the stop"] = len(batch_ids(checkpoint, "commits"))
        stopped.set()
        wait_until(commits_past(events["batches before the stop"] + 2), f"two batches after broker {victim} stopped",
              timeout=120)
        feed.finish()
        query.processAllAvailable()
    finally:
        moved.set()
        stopped.set()
        query.stop()
    assert events["leaders"][0] != events["leaders"][1]
    assert kemu_broker.leader(topic, 0) != events["stopped"]
    rows = spark_kafka.read.parquet(str(folder)).select("key", "value").collect()
    found = collections.Counter((bytes(row.key), bytes(row.value)) for row in rows)
    assert found == collections.Counter((value, PREFIX + value) for value in feed.visible)
    batches = len(batch_ids(checkpoint, "commits"))
    record_property("records", len(rows))
    record_property("batches", batches)
    print(f"\nthree brokers: leaders {events['leaders'][0]} -> {events['leaders'][1]} after "
          f"{events['batches before the move']} batches, broker {events['stopped']} stopped after "
          f"{events['batches before the stop']}; input {len(feed.plain) + len(feed.committed) + len(feed.aborted)}"
          f" records ({len(feed.visible)} committed, {len(feed.aborted)} aborted), {batches} batches, output "
          f"{len(rows)} rows")
