"""A big partition creation (CreateTopics, CreatePartitions, Metadata auto-creation) makes its logs a few at
a time and yields to the event loop in between: other connections are answered while it runs."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest

from kemu.broker.creation import PartitionCreation
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import batch, produce
from tests.handlers.harness import Broker

CREATE_TOPICS, CREATE_PARTITIONS, METADATA, API_VERSIONS = 19, 37, 3, 18
TIMEOUT_S = 30.0  # fails a test whose loop is stuck instead of hanging it; not a measurement
# What a creating connection waits for its answer: making 2,000 partitions' files took 4 s on a quiet machine and
# more than the sockets' usual 10 s on a loaded one. Not a measurement either.
CREATION_TIMEOUT_S = 120.0


class Gate:
    """Holds the next creation of more than one partition after its first real step until the test opens it:
    the test then knows the creation is underway (logs made, nothing registered) while it sends its other
    requests. Other creations run as usual."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started = threading.Event()
        self.opened = threading.Event()
        self.held: PartitionCreation | None = None
        real_step = PartitionCreation.step

        def step(creation: PartitionCreation, count: int = 16) -> bool:
            if self.held is None and not self.started.is_set() and real_step(creation, 1) is False:
                self.held = creation
                self.started.set()
                return False
            if creation is self.held and not self.opened.is_set():
                return False  # nothing done this step: the handler yields again
            return real_step(creation, count)

        monkeypatch.setattr(PartitionCreation, "step", step)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    made = Gate(monkeypatch)
    yield made
    made.opened.set()


def _answered_meanwhile(broker: Broker, gate: Gate, name: str) -> None:
    """While `name`'s creation waits at the gate: ApiVersions and a Produce to another topic are answered."""
    assert gate.started.wait(TIMEOUT_S)
    other = broker.connect()
    versions = other.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert versions["error_code"] == 0
    assert produce(other, "other", batch(b"meanwhile"))["error_code"] == 0
    assert broker.call(lambda: name in broker.broker.creating)  # the creation had not finished


@pytest.mark.real_socket
def test_other_connections_are_answered_during_a_big_create_topics(broker: Broker, gate: Gate) -> None:
    setup = broker.connect()
    create_topic(setup, "other")
    creator = broker.connect()
    creator.sock.settimeout(CREATION_TIMEOUT_S)
    creator.send(CREATE_TOPICS, 7, {"topics": [{"name": "big", "num_partitions": 2000, "replication_factor": 1}],
                                    "timeout_ms": 60000})
    _answered_meanwhile(broker, gate, "big")
    assert broker.call(lambda: "big" not in broker.broker.topics)  # invisible until every log is made
    gate.opened.set()
    _, body = creator.receive(CREATE_TOPICS, 7)
    assert [(t["name"], t["error_code"], t["num_partitions"]) for t in body["topics"]] == [("big", 0, 2000)]
    partitions = broker.call(lambda: broker.broker.topics.get("big").partitions)  # type: ignore[union-attr]
    assert len(partitions) == 2000 and all(p.is_open for p in partitions)
    assert broker.call(lambda: not broker.broker.creating)


@pytest.mark.real_socket
def test_other_connections_are_answered_during_a_big_create_partitions(broker: Broker, gate: Gate) -> None:
    setup = broker.connect()
    create_topic(setup, "other")
    create_topic(setup, "grown")
    creator = broker.connect()
    creator.sock.settimeout(CREATION_TIMEOUT_S)
    creator.send(CREATE_PARTITIONS, 3, {"topics": [{"name": "grown", "count": 1500, "assignments": None}],
                                        "timeout_ms": 60000, "validate_only": False})
    _answered_meanwhile(broker, gate, "grown")
    # As Kafka's controller, which applies one change after another: a second CreatePartitions on the topic
    # waits for the first and is planned against the 1500 partitions it leaves.
    more = broker.connect()
    more.sock.settimeout(CREATION_TIMEOUT_S)
    more.send(CREATE_PARTITIONS, 3, {"topics": [{"name": "grown", "count": 2000, "assignments": None}],
                                     "timeout_ms": 60000, "validate_only": False})
    assert broker.call(lambda: len(broker.broker.topics.get("grown").partitions)) == 1  # type: ignore[union-attr]
    gate.opened.set()
    _, body = creator.receive(CREATE_PARTITIONS, 3)
    assert [(r["name"], r["error_code"]) for r in body["results"]] == [("grown", 0)]
    _, grown = more.receive(CREATE_PARTITIONS, 3)
    assert [(r["name"], r["error_code"]) for r in grown["results"]] == [("grown", 0)]
    assert broker.call(lambda: len(broker.broker.topics.get("grown").partitions)) == 2000  # type: ignore[union-attr]


@pytest.mark.real_socket
def test_metadata_auto_creation_yields_too(broker: Broker, gate: Gate) -> None:
    setup = broker.connect()
    create_topic(setup, "other")
    names = [f"auto-{i}" for i in range(300)]
    asker = broker.connect()
    asker.sock.settimeout(CREATION_TIMEOUT_S)
    asker.send(METADATA, 12, {"topics": [{"name": n, "topic_id": uuid.UUID(int=0)} for n in names],
                              "allow_auto_topic_creation": True, "include_topic_authorized_operations": False})
    _answered_meanwhile(broker, gate, "auto-0")
    gate.opened.set()
    _, body = asker.receive(METADATA, 12)
    assert {t["error_code"] for t in body["topics"]} == {3}  # UNKNOWN_TOPIC_OR_PARTITION, as Kafka 4.3 while it creates
    assert broker.call(lambda: all(n in broker.broker.topics for n in names))


