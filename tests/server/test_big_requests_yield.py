"""A big request yields to the event loop while it is worked on (issue 34): another client's ApiVersions is
answered between its items, not after them all. Each test holds the big request's first item until the
ApiVersions is on its way, then notes how many items were done when the ApiVersions answer was encoded;
the pacer's budget is 0, so every chance to yield is taken (kemu.handlers._pacing). Decided by order, not
by time: a request that never yields does every item before the event loop reads the ApiVersions."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kemu.admin import topics as topic_admin
from kemu.admin.topics import TopicPlan
from kemu.broker import topic_configs
from kemu.broker.config import BrokerConfig
from kemu.broker.storage import Storage
from kemu.handlers import _pacing, k00_produce, k03_metadata, k32_describe_configs
from kemu.server import dispatch, framing
from kemu.wire.records import NewRecord, build_batch
from tests.server.broker_thread import BrokerThread
from tests.server.encoding_hook import before_each_encoding
from tests.server.kafka_socket import KafkaSocket

API_VERSIONS = {"client_software_name": "t", "client_software_version": "1"}
ITEMS = 40
TIMEOUT_S = 30.0  # fails a stuck test instead of hanging it; not a measurement


class Interleaving:
    """Counts the items the big request has done; its first is held until the other client's request is
    sent; `at_answer` is the count when the other client's answer was encoded."""

    def __init__(self) -> None:
        self.done = 0
        self.at_answer: int | None = None
        self.started, self.sent = threading.Event(), threading.Event()

    def counted(self, work: Callable[..., Any]) -> Callable[..., Any]:
        def item(*args: Any, **kwargs: Any) -> Any:
            if not self.started.is_set():
                self.started.set()
                self.sent.wait(TIMEOUT_S)  # on the loop's thread: nothing else runs meanwhile
            self.done += 1
            return work(*args, **kwargs)

        return item

    def answered_between_items(self, big: KafkaSocket, other: KafkaSocket, api_key: int, version: int) -> Any:
        """Wait for the big request (sent already) to begin, have `other` ask ApiVersions, and return the
        big request's answer; asserts the ApiVersions was answered while items were still to do."""
        assert self.started.wait(TIMEOUT_S)
        other.send(18, 3, API_VERSIONS)
        self.sent.set()
        assert other.receive(18, 3)[1]["error_code"] == 0
        _, answer = big.receive(api_key, version)
        assert self.at_answer is not None and self.at_answer < self.done, (self.at_answer, self.done)
        return answer


@pytest.fixture
def interleaving(monkeypatch: pytest.MonkeyPatch) -> Iterator[Interleaving]:
    monkeypatch.setattr(_pacing, "BUDGET_S", 0.0)
    seen = Interleaving()

    def encoding(api_key: int) -> None:
        if api_key == 18 and seen.started.is_set() and seen.at_answer is None:
            seen.at_answer = seen.done

    before_each_encoding(monkeypatch, encoding)
    yield seen
    seen.sent.set()  # (pytest runs this after a failed test too) a held item goes on


@pytest.fixture
def served() -> Iterator[BrokerThread]:
    with BrokerThread(BrokerConfig(port=0)) as thread:
        yield thread


def create(conn: KafkaSocket, names: list[str], partitions: int = 1) -> None:
    created = conn.request(19, 7, {"topics": [
        {"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [], "configs": []}
        for name in names], "timeout_ms": 30000, "validate_only": False})
    assert [topic["error_code"] for topic in created["topics"]] == [0] * len(names)


NAMES = [f"t{index}" for index in range(ITEMS)]


def test_describe_configs_of_many_topics(served: BrokerThread, interleaving: Interleaving,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with served.connect() as big, served.connect() as other:
        create(big, NAMES)
        monkeypatch.setattr(k32_describe_configs, "_describe", interleaving.counted(k32_describe_configs._describe))
        big.send(32, 4, {"resources": [{"resource_type": 2, "resource_name": n, "configuration_keys": None}
                                       for n in NAMES], "include_synonyms": False, "include_documentation": False})
        answer = interleaving.answered_between_items(big, other, 32, 4)
    assert [result["resource_name"] for result in answer["results"]] == NAMES


def test_metadata_of_many_topics(served: BrokerThread, interleaving: Interleaving,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with served.connect() as big, served.connect() as other:
        create(big, NAMES)
        monkeypatch.setattr(k03_metadata, "_topic", interleaving.counted(k03_metadata._topic))
        big.send(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                         "include_topic_authorized_operations": False})
        answer = interleaving.answered_between_items(big, other, 3, 12)
    assert sorted(topic["name"] for topic in answer["topics"]) == sorted(NAMES)


def test_create_topics_checks_the_topics_a_slice_at_a_time(served: BrokerThread, interleaving: Interleaving,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TopicPlan, "SLICE", 1)
    monkeypatch.setattr(topic_configs, "validate", interleaving.counted(topic_configs.validate))
    with served.connect() as big, served.connect() as other:
        big.send(19, 7, {"topics": [{"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                                     "configs": []} for n in NAMES], "timeout_ms": 30000, "validate_only": True})
        answer = interleaving.answered_between_items(big, other, 19, 7)
    assert [topic["error_code"] for topic in answer["topics"]] == [0] * ITEMS


def test_delete_topics_of_many_partitions(served: BrokerThread, interleaving: Interleaving,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(topic_admin, "DELETE_SLICE_PARTITIONS", 1)
    with served.connect() as big, served.connect() as other:
        create(big, ["wide"], partitions=ITEMS)  # one topic: yielding topic by topic would not yield at all
        monkeypatch.setattr(Storage, "delete_partition", interleaving.counted(Storage.delete_partition))
        big.send(20, 6, {"topics": [{"name": "wide", "topic_id": uuid.UUID(int=0)}], "timeout_ms": 30000})
        answer = interleaving.answered_between_items(big, other, 20, 6)
    assert [topic["error_code"] for topic in answer["responses"]] == [0]


def test_produce_to_many_partitions(served: BrokerThread, interleaving: Interleaving,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k00_produce, "PACED_BYTES", 0)  # a small request stands in for a big one
    with served.connect() as big, served.connect() as other:
        create(big, ["wide"], partitions=ITEMS)
        monkeypatch.setattr(k00_produce, "_produce_partition", interleaving.counted(k00_produce._produce_partition))
        batch = build_batch([NewRecord(b"v", timestamp=1)])
        big.send(0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": "wide", "partition_data": [{"index": p, "records": batch} for p in range(ITEMS)]}]})
        answer = interleaving.answered_between_items(big, other, 0, 9)
    assert [p["error_code"] for p in answer["responses"][0]["partition_responses"]] == [0] * ITEMS


def test_a_big_frame_arriving(served: BrokerThread, interleaving: Interleaving,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The frame's bytes keep arriving, so the reader never waits for the socket: here each receive takes a
    KiB at most, and the items are the receives."""
    real_writable = framing.FrameBuffer.writable
    receives = interleaving.counted(lambda: None)

    def writable(self: framing.FrameBuffer) -> memoryview:
        if self.mid_frame():
            receives()
        return real_writable(self)[:1024]

    monkeypatch.setattr(framing.FrameBuffer, "writable", writable)
    with served.connect() as big, served.connect() as other:
        batch = build_batch([NewRecord(b"v" * 40_000, timestamp=1)])
        frame = big.encode(0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": "nowhere", "partition_data": [{"index": 0, "records": batch}]}]})
        sender = threading.Thread(target=big.send_raw, args=(frame,))
        sender.start()  # 40 KiB, all there to be read, in 40 receives
        answer = interleaving.answered_between_items(big, other, 0, 9)
        sender.join(TIMEOUT_S)
    assert answer["responses"][0]["partition_responses"][0]["error_code"] == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_a_big_answer_of_a_request_run_on_the_reader_is_encoded_off_the_loop(
        served: BrokerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    """ListOffsets never waits, so the connection's reader runs it; its big answer is encoded on a worker
    thread all the same (held here until the other client is answered)."""
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def encoding(api_key: int) -> None:
        if api_key == 2:
            started.set()
            release.wait(TIMEOUT_S)
            finished.set()

    monkeypatch.setattr(dispatch, "OFF_LOOP_ELEMENTS", 10)
    with served.connect() as big, served.connect() as other:
        create(big, NAMES)
        before_each_encoding(monkeypatch, encoding)
        try:
            big.send(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": n, "partitions": [{"partition_index": 0, "timestamp": -1}]} for n in NAMES]})
            assert started.wait(TIMEOUT_S)
            assert other.request(18, 3, API_VERSIONS)["error_code"] == 0
            assert not finished.is_set()  # answered while the big answer's encoding was held
        finally:
            release.set()
        _, answer = big.receive(2, 7)
    assert [topic["name"] for topic in answer["topics"]] == NAMES
