"""kemu.server.hooks through a served broker: an interceptor answers with an error, drops the connection
before or after the handler, delays, throttles; observers see every exchange; a failing hook is skipped;
and a broker served without hooks answers as before."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kemu.handlers import Handler
from kemu.handlers.context import RequestContext
from kemu.server.hooks import Exchange, Intervention, RequestHooks
from kemu.testing import Broker
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode
from tests.server.kafka_socket import KafkaSocket

METADATA = 3
CREATE_TOPICS = 19


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker() as broker:
        yield broker


def metadata(*names: str) -> dict[str, object]:
    return {"topics": [{"name": name} for name in names], "allow_auto_topic_creation": False}


def create(name: str) -> dict[str, object]:
    return {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": []}], "timeout_ms": 1000, "validate_only": False}


def on_key(key: int, intervention: Intervention):  # type: ignore[no-untyped-def]
    def interceptor(ctx: RequestContext, handler: Handler, request: Request) -> Intervention | None:
        return intervention if handler.key == key else None
    return interceptor


def test_observers_see_request_and_response_bodies(broker: Broker) -> None:
    seen: list[Exchange] = []
    broker.call(broker.hooks.observe, seen.append)
    broker.create_topic("t")
    with KafkaSocket(("127.0.0.1", broker.port), client_id="app-1") as conn:
        body = conn.request(METADATA, 12, metadata("t"))
    assert body["topics"][0]["error_code"] == 0
    [exchange] = seen
    assert (exchange.api_key, exchange.api_version, exchange.api_name, exchange.client_id) == (
        METADATA, 12, "Metadata", "app-1")
    assert exchange.request.body["topics"][0]["name"] == "t"
    assert exchange.response is not None and exchange.response["topics"][0]["name"] == "t"
    assert exchange.sent and not exchange.closed and exchange.intervention is None


def test_an_error_intervention_answers_without_running_the_handler(broker: Broker) -> None:
    seen: list[Exchange] = []
    broker.call(broker.hooks.observe, seen.append)
    broker.call(broker.hooks.intercept,
                on_key(CREATE_TOPICS, Intervention(error=ErrorCode.NOT_CONTROLLER)))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        body = conn.request(CREATE_TOPICS, 4, create("never"))
    assert body["topics"][0]["error_code"] == ErrorCode.NOT_CONTROLLER.value
    assert broker.call(lambda: broker.core.topics.get("never")) is None  # the handler did not run
    assert seen[0].intervention is not None and seen[0].sent


def test_drop_before_closes_without_handling(broker: Broker) -> None:
    seen: list[Exchange] = []
    broker.call(broker.hooks.observe, seen.append)
    broker.call(broker.hooks.intercept, on_key(CREATE_TOPICS, Intervention(drop_before=True)))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        conn.send(CREATE_TOPICS, 4, create("dropped"))
        assert conn.closed_by_peer()
    assert broker.call(lambda: broker.core.topics.get("dropped")) is None
    assert seen[0].response is None and not seen[0].sent and seen[0].closed


def test_drop_after_keeps_the_effect_and_loses_the_response(broker: Broker) -> None:
    seen: list[Exchange] = []
    broker.call(broker.hooks.observe, seen.append)
    broker.call(broker.hooks.intercept, on_key(CREATE_TOPICS, Intervention(drop_after=True)))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        conn.send(CREATE_TOPICS, 4, create("made"))
        assert conn.closed_by_peer()
    assert broker.call(lambda: broker.core.topics.get("made")) is not None
    assert seen[0].response is not None and seen[0].response["topics"][0]["error_code"] == 0
    assert not seen[0].sent and seen[0].closed


def test_delay_and_throttle(broker: Broker) -> None:
    broker.call(broker.hooks.intercept, on_key(METADATA, Intervention(delay_s=0.3, throttle_time_ms=250)))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        started = time.monotonic()
        body = conn.request(METADATA, 12, metadata())
        assert time.monotonic() - started >= 0.3
        assert body["throttle_time_ms"] == 250
        # A version without throttle_time_ms still answers.
        assert conn.request(METADATA, 0, {"topics": []})["brokers"]


def test_first_intervention_wins_and_removal_works(broker: Broker) -> None:
    first = on_key(METADATA, Intervention(throttle_time_ms=1))
    remove_first = broker.call(broker.hooks.intercept, first)
    broker.call(broker.hooks.intercept, on_key(METADATA, Intervention(throttle_time_ms=2)))
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert conn.request(METADATA, 12, metadata())["throttle_time_ms"] == 1
        broker.call(remove_first)
        assert conn.request(METADATA, 12, metadata())["throttle_time_ms"] == 2


def test_a_failing_hook_is_skipped(broker: Broker) -> None:
    def broken(*_: object) -> None:
        raise RuntimeError("hook bug")

    seen: list[Exchange] = []
    broker.call(broker.hooks.intercept, broken)
    broker.call(broker.hooks.observe, broken)
    broker.call(broker.hooks.observe, seen.append)
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert conn.request(METADATA, 12, metadata())["throttle_time_ms"] == 0
    assert len(seen) == 1


def test_hooks_survive_restart(broker: Broker) -> None:
    broker.call(broker.hooks.intercept, on_key(METADATA, Intervention(throttle_time_ms=7)))
    broker.restart()
    with KafkaSocket(("127.0.0.1", broker.port)) as conn:
        assert conn.request(METADATA, 12, metadata())["throttle_time_ms"] == 7


def test_empty_hooks_change_nothing() -> None:
    hooks = RequestHooks()
    assert hooks.before(None, None, None) is None  # type: ignore[arg-type]
    hooks.after(None)  # type: ignore[arg-type]
