"""The topic list (kemu-topics.json) saved from each topic's entry as last encoded (kemu.broker.storage): a
save encodes only the topics its caller names, a creation encodes its topics in its steps, and the file is
always the bytes one encoding of the whole document gives, and what a restart reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kemu.admin.configs import ConfigChange, OpType, ResourceChange, alter
from kemu.admin.partitions import NewPartitions, plan_partitions
from kemu.admin.topics import NewTopic, create_topics, plan_topics
from kemu.broker import storage
from kemu.broker.broker import BrokerCore
from kemu.broker.storage import TOPICS_FILE

from .test_creation import broker, make_broker

__all__ = ["broker"]  # the fixture
RESOURCE_TOPIC = 2


@pytest.fixture
def encodings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each topic whose entry is encoded, in order."""
    seen: list[str] = []
    real = storage.entry_text

    def counted(topic: storage.Topic) -> str:
        seen.append(topic.name)
        return real(topic)

    monkeypatch.setattr(storage, "entry_text", counted)
    monkeypatch.setattr("kemu.broker.creation.entry_text", counted)
    return seen


def whole(broker: BrokerCore) -> str:
    """The document encoded at once, as the save of every topic did."""
    return json.dumps({"version": 1, "topics": [
        {"name": t.name, "id": str(t.topic_id), "configs": t.configs, "partitions": [p.saved() for p in t.partitions]}
        for t in broker.topics]}, sort_keys=True)


def saved(broker: BrokerCore) -> str:
    return (broker.data_dir / TOPICS_FILE).read_text()


def set_retention(broker: BrokerCore, name: str, value: str) -> None:
    alter(broker, [ResourceChange(RESOURCE_TOPIC, name, [ConfigChange("retention.ms", OpType.SET, value)])],
          validate_only=False, incremental=True)


def test_a_save_encodes_only_the_topics_it_names(broker: BrokerCore, encodings: list[str]) -> None:
    create_topics(broker, [NewTopic(f"t{i}", 2, 1) for i in range(20)])
    encodings.clear()
    set_retention(broker, "t7", "5000")
    assert encodings == ["t7"] and saved(broker) == whole(broker)
    encodings.clear()
    create_topics(broker, [NewTopic("new", 1, 1)])
    assert encodings == ["new"] and saved(broker) == whole(broker)
    encodings.clear()
    broker.delete_topic(broker.topics.get("t3").topic_id)  # type: ignore[union-attr]
    assert encodings == [] and saved(broker) == whole(broker) and '"t3"' not in saved(broker)


def test_every_change_leaves_the_bytes_of_one_whole_encoding(broker: BrokerCore, tmp_path: Path) -> None:
    create_topics(broker, [NewTopic(f"t{i}", 3, 1) for i in range(10)])
    set_retention(broker, "t1", "1234")
    [outcome], creation = plan_partitions(broker, [NewPartitions("t2", 5)], validate_only=False)
    creation.run()
    broker.elect_leader(broker.topics.get("t4").partitions[1], broker.node_id)  # type: ignore[union-attr]
    broker.delete_topic(broker.topics.get("t0").topic_id)  # type: ignore[union-attr]
    assert saved(broker) == whole(broker)
    before = saved(broker)
    broker.storage.save(broker.topics)  # everything encoded again
    assert saved(broker) == before
    broker.close()
    again = make_broker(tmp_path)
    try:
        assert saved(again) == before == whole(again)
        assert again.topics.get("t1").configs == {"retention.ms": "1234"}  # type: ignore[union-attr]
        assert len(again.topics.get("t2").partitions) == 5  # type: ignore[union-attr]
    finally:
        again.close()


def test_a_creation_encodes_its_topics_in_its_steps_not_when_it_finishes(broker: BrokerCore,
                                                                         encodings: list[str]) -> None:
    _, creation = plan_topics(broker, [NewTopic(f"n{i}", 1, 1) for i in range(300)])
    while not creation.step():
        pass
    assert sorted(encodings) == sorted(f"n{i}" for i in range(300))
    encodings.clear()
    creation.finish()
    assert encodings == [] and saved(broker) == whole(broker) and len(broker.topics) == 300


def test_a_save_during_a_creation_leaves_its_topics_out_until_it_finishes(broker: BrokerCore) -> None:
    _, creation = plan_topics(broker, [NewTopic(f"n{i}", 1, 1) for i in range(300)])
    while not creation.step():
        pass
    create_topics(broker, [NewTopic("between", 1, 1)])
    assert '"n0"' not in saved(broker) and '"between"' in saved(broker)
    creation.finish()
    assert saved(broker) == whole(broker) and '"n299"' in saved(broker)


def test_a_reassignment_and_an_unclean_election_encode_only_their_topic(broker: BrokerCore,
                                                                        encodings: list[str]) -> None:
    from kemu.admin.reassignments import reassign
    from kemu.broker.partition import NO_LEADER
    from kemu.handlers.k43_elect_leaders import _unclean
    from kemu.wire.errors import ErrorCode

    create_topics(broker, [NewTopic(f"t{i}", 2, 1) for i in range(20)])
    encodings.clear()
    assert reassign(broker, "t5", 1, [broker.node_id]) == (ErrorCode.NONE, None)
    assert encodings == ["t5"] and saved(broker) == whole(broker)
    encodings.clear()
    partition = broker.topics.get("t9").partitions[0]  # type: ignore[union-attr]
    partition.leader_id = NO_LEADER  # its leader gone, as a broker's stop leaves it
    assert _unclean(broker, partition) == (ErrorCode.NONE, None)
    assert encodings == ["t9"] and saved(broker) == whole(broker) and partition.leader_id == broker.node_id
