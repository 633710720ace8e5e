"""The kemu image through KemuContainer, as a test suite using testcontainers would use it."""

from __future__ import annotations

import socket
import uuid

import pytest
from confluent_kafka import Consumer, IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ClusterMetadata, ConfigResource, NewTopic, OffsetSpec
from testcontainers.core.container import DockerContainer

from compat_tests.polling import wait_for
from kemu.testcontainers import KAFKA_PORT, ImageMissing, KemuContainer

# The first test's setup builds the image (and, on a fresh machine, its debootstrap base).
pytestmark = pytest.mark.timeout(900)

KEMU_UID = 10001
SMOKE_PARTITIONS = 2
RECORDS_PER_TXN = 3
TXN_TIMEOUT_S = 30


def _create_topic(admin: AdminClient, name: str, partitions: int) -> None:
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions)], operation_timeout=10)
    futures[name].result(timeout=15)


def test_topic_admin_through_the_container(kemu_image: str) -> None:
    with KemuContainer(kemu_image) as kemu:
        bootstrap = kemu.get_bootstrap_server()
        admin = AdminClient({"bootstrap.servers": bootstrap})
        topic = f"container-{uuid.uuid4().hex[:8]}"

        _create_topic(admin, topic, partitions=3)

        def metadata_with_topic() -> ClusterMetadata | None:
            metadata = admin.list_topics(timeout=10)
            return metadata if topic in metadata.topics else None

        metadata = wait_for(metadata_with_topic, what=f"{topic} in Metadata")
        # The advertised listener is the address the client bootstrapped from, so it can follow it.
        assert [f"{b.host}:{b.port}" for b in metadata.brokers.values()] == [bootstrap]
        (broker_id,) = metadata.brokers
        assert sorted(metadata.topics[topic].partitions) == [0, 1, 2]
        assert {p.leader for p in metadata.topics[topic].partitions.values()} == {broker_id}


def test_code_written_for_kafka_container_runs_unchanged(kemu_image: str) -> None:
    # KafkaContainer's own calls, on its default container port 9093.
    kafka = KemuContainer(kemu_image, port=9093).with_kraft()
    kafka.start(timeout=60)
    try:
        producer = Producer({"bootstrap.servers": kafka.get_bootstrap_server(), "enable.idempotence": True})
        delivered: list[tuple[object, int]] = []
        topic = f"drop-in-{uuid.uuid4().hex[:8]}"  # created on first use, as by Kafka's default
        producer.produce(topic, value=b"v", on_delivery=lambda err, message: delivered.append((err, message.offset())))
        assert producer.flush(30) == 0 and delivered == [(None, 0)]
        producer.close()
    finally:
        kafka.stop()


def test_the_image_reports_healthy_and_runs_unprivileged(kemu_image: str) -> None:
    with KemuContainer(kemu_image) as kemu:
        container = kemu.get_wrapped_container()

        def health() -> str | None:
            container.reload()
            status = container.attrs["State"]["Health"]["Status"]
            return status if status != "starting" else None

        assert wait_for(health, what="the HEALTHCHECK's verdict", timeout=60) == "healthy"
        last_probe = container.attrs["State"]["Health"]["Log"][-1]
        assert last_probe["ExitCode"] == 0 and last_probe["Output"].startswith("healthy:"), last_probe

        exit_code, output = kemu.exec(["id", "-u"])
        assert (exit_code, output.decode().strip()) == (0, str(KEMU_UID))


def test_kafka_environment_variables_configure_the_broker(kemu_image: str) -> None:
    with KemuContainer(kemu_image).with_env("KAFKA_NODE_ID", "7") as kemu:
        admin = AdminClient({"bootstrap.servers": kemu.get_bootstrap_server()})
        assert list(admin.list_topics(timeout=10).brokers) == [7]


def test_other_kafka_variables_are_broker_settings(kemu_image: str) -> None:
    container = (KemuContainer(kemu_image)
                 .with_env("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
                 .with_env("KAFKA_LOG_RETENTION_MS", "60000"))
    with container as kemu:
        admin = AdminClient({"bootstrap.servers": kemu.get_bootstrap_server()})
        broker = ConfigResource(ConfigResource.Type.BROKER, "1")
        entries = admin.describe_configs([broker])[broker].result(timeout=15)
        assert entries["group.initial.rebalance.delay.ms"].value == "0"
        assert entries["log.retention.ms"].value == "60000"


def test_flags_given_as_arguments_override_the_environment(kemu_image: str) -> None:
    container = KemuContainer(kemu_image).with_env("KAFKA_NODE_ID", "7").with_command(["--node-id", "9"])
    with container as kemu:
        admin = AdminClient({"bootstrap.servers": kemu.get_bootstrap_server()})
        assert list(admin.list_topics(timeout=10).brokers) == [9]


def test_advertised_listeners_may_name_a_published_port_other_than_the_listen_port(kemu_image: str) -> None:
    # As with `docker run -p 19092:9092 -e KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:19092`.
    with socket.socket() as probe:
        probe.bind(("", 0))
        host_port = probe.getsockname()[1]
    container = KemuContainer(kemu_image).with_bind_ports(str(KAFKA_PORT), host_port)
    advertised = f"{container.get_docker_client().host()}:{host_port}"
    with container.with_env("KAFKA_ADVERTISED_LISTENERS", f"PLAINTEXT://{advertised}") as kemu:
        assert kemu.get_bootstrap_server() == advertised
        metadata = AdminClient({"bootstrap.servers": advertised}).list_topics(timeout=10)
        assert [f"{b.host}:{b.port}" for b in metadata.brokers.values()] == [advertised]
        # The listener file was not waited for: the variable came with the container.
        assert b"waiting for the advertised listener" not in kemu.get_wrapped_container().logs()


def test_docker_stop_is_a_clean_shutdown(kemu_image: str) -> None:
    with KemuContainer(kemu_image) as kemu:
        container = kemu.get_wrapped_container()
        container.stop(timeout=20)
        container.reload()
        # kemu is PID 1 (the entrypoint execs it) and handles SIGTERM itself.
        assert (container.status, container.attrs["State"]["ExitCode"]) == ("exited", 0), kemu.get_logs()


def test_a_container_waiting_for_its_advertised_listener_stops_on_sigterm(kemu_image: str) -> None:
    # What KemuContainer starts, before it has written the listener file.
    waiting = DockerContainer(kemu_image).with_env("KEMU_ADVERTISED_LISTENERS_FILE", "/tmp/never-written")
    with waiting:
        container = waiting.get_wrapped_container()

        def says_it_waits() -> bool:
            return b"waiting for the advertised listener" in container.logs()

        wait_for(says_it_waits, what="the entrypoint to wait for its listener file")
        container.stop(timeout=20)
        container.reload()
        # 143 = ended by SIGTERM; ignoring it (the default for PID 1) would end in docker's SIGKILL, 137.
        assert (container.status, container.attrs["State"]["ExitCode"]) == ("exited", 143), waiting.get_logs()


def test_smoke_transactions_read_committed_through_the_container(kemu_image: str) -> None:
    """The issue's smoke test: a topic, transactions committed and aborted, a read_committed consumer."""
    with KemuContainer(kemu_image) as kemu:
        bootstrap = kemu.get_bootstrap_server()
        topic = f"smoke-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        _create_topic(admin, topic, partitions=SMOKE_PARTITIONS)

        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"smoke-{topic}", "linger.ms": 0})
        producer.init_transactions(TXN_TIMEOUT_S)
        written: dict[str, list[tuple[int, str]]] = {}
        for name, commit in (("first", True), ("aborted", False), ("last", True)):
            values = [(p, f"{name}-{p}-{n}") for p in range(SMOKE_PARTITIONS) for n in range(RECORDS_PER_TXN)]
            written[name] = values
            producer.begin_transaction()
            for partition, value in values:
                producer.produce(topic, value=value.encode(), partition=partition)
            if commit:
                producer.commit_transaction(TXN_TIMEOUT_S)
            else:
                # abort_transaction() purges what is still queued: flush, so the aborted records are in the log.
                assert producer.flush(TXN_TIMEOUT_S) == 0
                producer.abort_transaction(TXN_TIMEOUT_S)
        # While the broker is still there, rather than when the garbage collector gets to it.
        producer.close()

        # Every record of the three transactions, and one marker per transaction, is in each partition.
        partitions = [TopicPartition(topic, p) for p in range(SMOKE_PARTITIONS)]
        ends = admin.list_offsets(
            {tp: OffsetSpec.latest() for tp in partitions}, isolation_level=IsolationLevel.READ_UNCOMMITTED
        )
        high_watermarks = {tp.partition: future.result(timeout=15).offset for tp, future in ends.items()}
        assert high_watermarks == {p: 3 * RECORDS_PER_TXN + 3 for p in range(SMOKE_PARTITIONS)}

        consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"smoke-{topic}", "isolation.level": "read_committed",
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
        })  # fmt: skip
        received: dict[int, list[str]] = {p: [] for p in range(SMOKE_PARTITIONS)}
        last_values = {p: f"last-{p}-{RECORDS_PER_TXN - 1}" for p in range(SMOKE_PARTITIONS)}
        try:
            consumer.subscribe([topic])

            # The last committed transaction's last record on a partition comes after everything the
            # aborted one wrote there, so having it means an aborted record would have shown up.
            def read_to_the_last_transaction() -> bool:
                for message in consumer.consume(100, 0.5):
                    assert message.error() is None, message.error()
                    received[message.partition()].append(message.value().decode())
                return all(last_values[p] in values for p, values in received.items())

            wait_for(read_to_the_last_transaction, what=f"the last transaction's records from {topic}", timeout=60)
        finally:
            consumer.close()
        committed = written["first"] + written["last"]
        assert received == {p: [v for q, v in committed if q == p] for p in range(SMOKE_PARTITIONS)}


def test_a_missing_image_is_named_with_how_to_build_it(docker_engine: None) -> None:


    with pytest.raises(ImageMissing, match=r"the docker image kemu-never-built:nope is not on this machine: build it "
                                           r"with `bash docker/build-image --tag kemu-never-built:nope`"):
        KemuContainer("kemu-never-built:nope").start()
