"""The in-process harness answers as the server does: one script of requests (data plane, admin, a
coordinator, an ApiError refusal, acks=0, a version the broker closes the connection on) gets the same
response bytes, in the same order, from an InProcessBroker and from a BrokerThread serving a real socket."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.clock import VirtualClock
from kemu.testing.harness import InProcessBroker
from tests.handlers.data_plane import batch, fetch_body, produce_body
from tests.handlers.harness import Broker, broker_config
from tests.server.broker_thread import BrokerThread

T0 = 1_700_000_000_000
SOFTWARE = {"client_software_name": "kemu-tests", "client_software_version": "1"}
TOPIC = {"name": "t", "num_partitions": 2, "replication_factor": 1, "assignments": [], "configs": []}
CONFIG = {"cluster_id": "kemu-harness-test", "advertised_port": 19092}

SCRIPT: list[tuple[int, int, dict[str, Any]]] = [
    (18, 3, SOFTWARE),
    (19, 4, {"topics": [TOPIC], "timeout_ms": 5000, "validate_only": False}),
    (0, 9, produce_body({("t", 0): batch(b"a", b"b"), ("t", 1): batch(b"c"), ("nope", 0): batch(b"d")})),
    (0, 9, produce_body({("t", 0): batch(b"e")}, acks=0)),  # no response
    (1, 11, fetch_body([("t", 0, 0), ("t", 1, 0)], version=11)),
    (2, 5, {"replica_id": -1, "isolation_level": 0,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                      "timestamp": -1}]}]}),
    (3, 9, {"topics": None, "allow_auto_topic_creation": False, "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}),
    (10, 4, {"key_type": 7, "coordinator_keys": ["a"]}),  # refused with ApiError: the error response
    (10, 3, {"key": "g", "key_type": 0}),
    (22, 4, {"transactional_id": None, "transaction_timeout_ms": 60_000, "producer_id": -1, "producer_epoch": -1}),
    (60, 0, {"include_cluster_authorized_operations": False}),
    (1, 3, fetch_body([("t", 0, 0)], version=3)),  # a version Kafka 4 removed: the connection is closed
]


def transcript(broker: Broker) -> tuple[list[bytes], bool]:
    """The response frames to SCRIPT, and whether the broker then closed the connection."""
    with broker, broker.connect() as conn:
        for correlation_id, (key, version, body) in enumerate(SCRIPT, start=1):
            conn.send(key, version, body, correlation_id=correlation_id)
        frames = [conn.receive_frame() for _ in range(len(SCRIPT) - 2)]  # acks=0 and the last get none
        return frames, conn.closed_by_peer()


def test_same_bytes_as_through_a_real_socket() -> None:
    frames, closed = transcript(InProcessBroker(broker_config(**CONFIG), clock=VirtualClock(T0)))
    assert closed
    assert len(frames) == len(SCRIPT) - 2
    assert (frames, closed) == transcript(BrokerThread(broker_config(**CONFIG), clock=VirtualClock(T0)))


@pytest.mark.parametrize("kind", [InProcessBroker, BrokerThread])
def test_responses_come_in_request_order(kind: type[Broker]) -> None:
    with kind(broker_config(), clock=VirtualClock(T0)) as broker, broker.connect() as conn:
        for correlation_id in range(1, 21):
            conn.send(18, correlation_id % 4, SOFTWARE, correlation_id=correlation_id)
        assert [conn.receive(18, i % 4)[0] for i in range(1, 21)] == list(range(1, 21))
