"""The kemu image through KemuContainer, as a test suite using testcontainers would use it."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ClusterMetadata, NewTopic

from compat_tests.polling import wait_for
from kemu.testcontainers import KemuContainer, api_versions_round_trip

# The first test's setup builds the image (and, on a fresh machine, its debootstrap base).
pytestmark = pytest.mark.timeout(1200)

PRODUCE, FETCH = 0, 1
KEMU_UID = 10001


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


def test_flags_given_as_arguments_override_the_environment(kemu_image: str) -> None:
    container = KemuContainer(kemu_image).with_env("KAFKA_NODE_ID", "7").with_command(["--node-id", "9"])
    with container as kemu:
        admin = AdminClient({"bootstrap.servers": kemu.get_bootstrap_server()})
        assert list(admin.list_topics(timeout=10).brokers) == [9]


def test_docker_stop_is_a_clean_shutdown(kemu_image: str) -> None:
    with KemuContainer(kemu_image) as kemu:
        container = kemu.get_wrapped_container()
        container.stop(timeout=20)
        container.reload()
        # kemu is PID 1 (the entrypoint execs it) and handles SIGTERM itself.
        assert (container.status, container.attrs["State"]["ExitCode"]) == ("exited", 0), kemu.get_logs()


def test_produce_and_consume_through_the_container(kemu_image: str) -> None:
    with KemuContainer(kemu_image) as kemu:
        bootstrap = kemu.get_bootstrap_server()
        host, port = bootstrap.rsplit(":", 1)
        served = api_versions_round_trip(host, int(port))
        if PRODUCE not in served or FETCH not in served:
            pytest.xfail(f"kemu does not serve Produce and Fetch yet (ApiVersions lists {sorted(served)})")

        topic = f"container-{uuid.uuid4().hex[:8]}"
        _create_topic(AdminClient({"bootstrap.servers": bootstrap}), topic, partitions=1)
        sent = [f"message-{i}".encode() for i in range(10)]

        producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
        for value in sent:
            producer.produce(topic, value=value)
        assert producer.flush(30) == 0

        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "enable.auto.commit": False}
        )
        try:
            consumer.assign([TopicPartition(topic, 0, 0)])
            received: list[bytes] = []

            def all_received() -> bool:
                message = consumer.poll(1.0)
                if message is not None:
                    assert message.error() is None, message.error()
                    received.append(message.value())
                return len(received) >= len(sent)

            wait_for(all_received, what=f"{len(sent)} messages from {topic}", timeout=60)
            assert received == sent
        finally:
            consumer.close()
