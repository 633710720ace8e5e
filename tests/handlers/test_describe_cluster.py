from __future__ import annotations

import pytest

from tests.handlers.harness import Broker, Connection

KEY = 60


@pytest.mark.real_socket
@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe(broker: Broker, conn: Connection, version: int) -> None:
    body = conn.request(KEY, version, {"include_fenced_brokers": True})
    assert (body["error_code"], body["error_message"]) == (0, None)
    assert body["cluster_id"] == broker.broker.cluster_id and body["controller_id"] == 1
    assert body["brokers"] == [{"broker_id": 1, "host": "127.0.0.1", "port": broker.port, "rack": None,
                                "is_fenced": False}]
    assert body["cluster_authorized_operations"] == -2147483648
    assert body["endpoint_type"] == 1


def test_authorized_operations(conn: Connection) -> None:
    assert conn.request(KEY, 0, {"include_cluster_authorized_operations": True})[
        "cluster_authorized_operations"] == 8096


def test_controllers_are_not_described_by_a_broker(conn: Connection) -> None:
    body = conn.request(KEY, 1, {"endpoint_type": 2})
    assert (body["error_code"], body["error_message"]) == (
        114, "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
    assert body["brokers"] == []


def test_an_unknown_endpoint_type_is_unsupported(conn: Connection) -> None:
    body = conn.request(KEY, 1, {"endpoint_type": 9})
    assert (body["error_code"], body["error_message"]) == (115, "Unsupported endpoint type 9")
    assert body["brokers"] == [] and body["cluster_id"] == ""
