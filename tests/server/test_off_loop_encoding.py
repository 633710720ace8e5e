"""A big answer is encoded off the event loop (kemu.server.dispatch.OFF_LOOP_ELEMENTS): other clients are
answered while it is being encoded, instead of waiting for it."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kemu.broker.config import BrokerConfig
from kemu.server import dispatch
from tests.server.broker_thread import BrokerThread
from tests.server.encoding_hook import before_each_encoding

DESCRIBE_CONFIGS = 32
TOPICS = [f"t{index}" for index in range(20)]


def test_elements_over_counts_dicts_and_arrays_and_stops_at_the_limit() -> None:
    body = {"results": [{"configs": [{"name": "a"}, {"name": "b"}]} for _ in range(3)], "error_code": 0}
    # results (1) + 3 results + 3 configs lists + 6 configs = 13
    assert dispatch.elements_over(body, 12) and not dispatch.elements_over(body, 13)
    assert not dispatch.elements_over({"error_code": 0, "ids": list(range(10_000))}, 1)  # scalars are cheap


class HeldEncoding:
    """Encoding a DescribeConfigs answer waits until the test releases it (at most HOLD_S), as a long encoding
    that lets the GIL go would take its time; where each answer was encoded is noted."""

    HOLD_S = 5.0

    def __init__(self) -> None:
        self.threads: list[str] = []  # the threads the small answers were encoded on
        self.big_thread = ""  # the thread the DescribeConfigs answer was encoded on
        self.started, self.release, self.finished = threading.Event(), threading.Event(), threading.Event()


@pytest.fixture
def held_big_encoding(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldEncoding]:
    held = HeldEncoding()

    def encoding(api_key: int) -> None:
        if api_key != DESCRIBE_CONFIGS:
            held.threads.append(threading.current_thread().name)
        else:
            held.big_thread = threading.current_thread().name
            held.started.set()
            held.release.wait(held.HOLD_S)
            held.finished.set()

    before_each_encoding(monkeypatch, encoding)
    monkeypatch.setattr(dispatch, "OFF_LOOP_ELEMENTS", 10)
    try:
        yield held
    finally:
        held.release.set()


def test_a_big_answer_being_encoded_does_not_hold_other_clients(held_big_encoding: HeldEncoding) -> None:
    held = held_big_encoding
    with BrokerThread(BrokerConfig(port=0)) as served:
        with served.connect() as big, served.connect() as other:
            created = big.request(19, 7, {"topics": [
                {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
                for name in TOPICS], "timeout_ms": 30000, "validate_only": False})
            assert [topic["error_code"] for topic in created["topics"]] == [0] * len(TOPICS)
            big.send(DESCRIBE_CONFIGS, 4, {"resources": [
                {"resource_type": 2, "resource_name": name, "configuration_keys": None} for name in TOPICS],
                "include_synonyms": False, "include_documentation": False})
            assert held.started.wait(10)  # the DescribeConfigs is being encoded now
            assert other.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})[
                "error_code"] == 0
            # The other client was answered while the big answer's encoding was still held: on the loop, the
            # ApiVersions would have waited for the hold to run out.
            assert not held.finished.is_set()
            held.release.set()
            _, answer = big.receive(DESCRIBE_CONFIGS, 4)
            assert [result["resource_name"] for result in answer["results"]] == TOPICS
    # The ApiVersions answer, small, was encoded on the event loop's thread, the big one elsewhere.
    assert held.big_thread not in ("", held.threads[-1])
