"""`KemuControl`, the client `KemuContainer.control()` returns, against an in-process endpoint: each method
reaches its operation and gives back what the handle holds, and a refusal is a `KemuControlError` with the
endpoint's error code. (compat_tests/docker drives it against the image.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kemu.testcontainers import KemuControl, KemuControlError
from kemu.testing import Broker
from kemu.testing.control import ControlEndpoint
from kemu.testing.faults import Fault


@pytest.fixture
def client() -> Iterator[tuple[Broker, KemuControl]]:
    with Broker(virtual_clock=True) as broker, ControlEndpoint(broker) as control:
        yield broker, KemuControl(control.url + "/")


def test_each_method_reaches_its_operation(client: tuple[Broker, KemuControl]) -> None:
    broker, control = client
    assert control.info()["bootstrap_servers"] == broker.bootstrap_servers
    before = control.now_ms()
    assert control.advance(61) == before + 61_000 == broker.clock.now_ms()
    control.resume()
    assert not broker.clock.frozen
    control.freeze()
    assert broker.clock.frozen

    control.create_topic("t", partitions=2, config={"retention.ms": "60000"})
    listed = [(t["name"], t["partitions"], t["config"]) for t in control.topics()]
    assert listed == [("t", 2, {"retention.ms": "60000"})]
    assert control.produce("t", "v", key="k", partition=1) == 0
    assert [(r["partition"], r["key"], r["value"]) for r in control.records("t")] == [(1, "k", "v")]
    assert control.records("t", 0) == [] and len(control.records("t", read_committed=True)) == 1

    added = control.add_fault({"api": "Metadata", "delay_ms": 1, "count": 3})
    from_dataclass = control.add_fault(Fault(api="Fetch", error="NOT_LEADER_OR_FOLLOWER"))
    assert [f["id"] for f in control.faults()] == [added["id"], from_dataclass["id"]]
    assert control.fault(added["id"])["hits"] == 0
    control.remove_fault(from_dataclass["id"])
    assert len(broker.faults) == 1
    control.clear_faults()
    assert control.faults() == [] and len(broker.faults) == 0

    inspection = control.inspect()
    assert [p["high_watermark"] for p in inspection["partitions"] if p["topic"] == "t"] == [0, 1]
    assert "t" in control.inspect_text()
    assert isinstance(control.transcript(last=5), list)

    port = broker.port
    assert control.restart()["bootstrap_servers"] == control.kill()["bootstrap_servers"] == f"127.0.0.1:{port}"
    control.reset()
    assert control.topics() == []


def test_refusals_are_errors_with_the_endpoints_code(client: tuple[Broker, KemuControl]) -> None:
    _, control = client
    control.create_topic("t")
    with pytest.raises(KemuControlError) as exists:
        control.create_topic("t")
    assert (exists.value.status, exists.value.code) == (409, "TOPIC_ALREADY_EXISTS")
    with pytest.raises(KemuControlError) as missing:
        control.records("nope")
    assert (missing.value.status, missing.value.code) == (404, "UNKNOWN_TOPIC_OR_PARTITION")
    with pytest.raises(KemuControlError) as bad:
        control.add_fault({"api": "Metadata"})
    assert (bad.value.status, bad.value.code) == (400, "BAD_REQUEST")
