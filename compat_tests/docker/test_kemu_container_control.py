"""The image's control endpoint (KEMU_CONTROL_PORT) through `KemuContainer.control()`: the same powers a
Python test has in-process, against the container — a confluent-kafka transaction left open holds a
read_committed consumer back until `advance(61)`, a fault armed over HTTP is retried through and counts its
hit, the inspection shows no exactly-once violation, and `kemu inspect` inside the image prints it. Then
README.md's KemuContainer example of the control endpoint runs as printed, on the image built here."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from compat_tests.polling import wait_for
from compat_tests.test_testing_control_readme import examples
from kemu.testcontainers import CONTROL_PORT, KemuContainer

# The first test's setup builds the image (and, on a fresh machine, its debootstrap base).
pytestmark = pytest.mark.timeout(900)


def test_the_control_endpoint_through_kemu_container(kemu_image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with KemuContainer(kemu_image) as kafka:
        control = kafka.control()
        bootstrap = kafka.get_bootstrap_server()
        assert control.info()["bootstrap_servers"] == bootstrap
        topic = f"control-{uuid.uuid4().hex[:8]}"
        control.create_topic(topic)

        stalled = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"stalled-{topic}",
                            "transaction.timeout.ms": 60_000})
        stalled.init_transactions(30)
        stalled.begin_transaction()
        stalled.produce(topic, b"never-committed")
        stalled.flush(30)
        fault = control.add_fault({"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "topic": topic})
        plain = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        plain.produce(topic, b"after")
        assert plain.flush(30) == 0  # retried through the refusal
        assert control.fault(fault["id"])["hits"] == 1

        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{topic}",
                             "isolation.level": "read_committed", "enable.auto.commit": False})
        consumer.assign([TopicPartition(topic, 0, 0)])
        try:
            assert consumer.poll(2.0) is None  # held back at the open transaction
            control.advance(61)  # the coordinator's 60 s timeout aborts it
            seen: list[bytes] = []

            def step() -> bool:
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    seen.append(message.value())
                return bool(seen)

            wait_for(step, what="the record behind the aborted transaction")
            assert seen == [b"after"]
        finally:
            consumer.close()

        assert [r["value"] for r in control.records(topic, read_committed=True)] == ["after"]
        assert control.inspect()["violations"] == []
        exit_code, output = kafka.exec(["kemu", "inspect", "--control", f"127.0.0.1:{CONTROL_PORT}"])
        assert exit_code == 0 and topic in output.decode()

    [example] = examples("python")  # README.md's, which reads the image's name from KEMU_IMAGE
    monkeypatch.setenv("KEMU_IMAGE", kemu_image)
    exec(compile(example, "README.md (Control endpoint)", "exec"), {})
