"""inspect() of client telemetry (KIP-714): a client subscribed by a CLIENT_METRICS resource pushes an OTLP
MetricsData (zstd-compressed, as librdkafka and the Java client do); the handle shows the client instance with the
subscription it was given and the push decoded, in the JSON the control endpoint documents and in the rendered
report. A push that is no MetricsData is kept with the reason it cannot be read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    AGGREGATION_TEMPORALITY_DELTA,
    Gauge,
    Metric,
    MetricsData,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
    Sum,
)
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from kemu.broker.ids import uuid_text
from kemu.testing import Broker
from kemu.wire.compression import CompressionType, compress
from kemu.wire.schema import ZERO_UUID
from tests.server.kafka_socket import KafkaSocket
from tests.testing.test_control_openapi import problems

QUEUE_TIME = "org.apache.kafka.producer.record.queue.time.max"
SENT = "org.apache.kafka.producer.node.request.latency.avg"


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker(config={"kemu.client.telemetry.enable": "true"}, virtual_clock=True) as running:
        yield running


def metrics_data() -> bytes:
    label = [KeyValue(key="node_id", value=AnyValue(string_value="1"))]
    gauge = Metric(name=QUEUE_TIME, unit="ms", gauge=Gauge(data_points=[
        NumberDataPoint(time_unix_nano=1_700_000_000_000_000_000, as_double=12.5)]))
    total = Metric(name=SENT, sum=Sum(aggregation_temporality=AGGREGATION_TEMPORALITY_DELTA, is_monotonic=True,
                                      data_points=[NumberDataPoint(attributes=label, as_int=7)]))
    resource = Resource(attributes=[KeyValue(key="client_rack", value=AnyValue(string_value="r1"))])
    return MetricsData(resource_metrics=[ResourceMetrics(resource=resource, scope_metrics=[
        ScopeMetrics(metrics=[gauge, total])])]).SerializeToString()


def test_a_push_is_shown_decoded(broker: Broker) -> None:
    with KafkaSocket(("127.0.0.1", broker.port), client_id="telemetry-test") as conn:
        [done] = conn.request(44, 1, {"resources": [{"resource_type": 16, "resource_name": "producers", "configs": [
            {"name": "metrics", "config_operation": 0, "value": "org.apache.kafka.producer."},
            {"name": "interval.ms", "config_operation": 0, "value": "1000"}]}], "validate_only": False})["responses"]
        assert done["error_code"] == 0
        given = conn.request(71, 0, {"client_instance_id": ZERO_UUID})
        pushed = conn.request(72, 0, {"client_instance_id": given["client_instance_id"],
                                      "subscription_id": given["subscription_id"], "terminating": False,
                                      "compression_type": int(CompressionType.ZSTD),
                                      "metrics": compress(CompressionType.ZSTD, metrics_data())})
        assert pushed["error_code"] == 0
        broker.clock.advance(1000)
        garbage = conn.request(72, 0, {"client_instance_id": given["client_instance_id"],
                                       "subscription_id": given["subscription_id"], "terminating": True,
                                       "compression_type": 0, "metrics": b"\xff\xff"})
        assert garbage["error_code"] == 0
        inspection = broker.inspect()  # while connected: the instance goes with its connection
    instance = uuid_text(given["client_instance_id"])
    [client] = inspection.telemetry_clients
    assert (client.client_instance_id, client.client_id, client.requested_metrics, client.push_interval_ms,
            client.terminating) == (instance, "telemetry-test", ["org.apache.kafka.producer."], 1000, True)
    first, second = inspection.telemetry
    assert (first.client_instance_id, first.client_id, first.subscription_id, first.compression_type,
            first.resource, first.error) == (instance, "telemetry-test", given["subscription_id"], 4,
                                             {"client_rack": "r1"}, None)
    assert inspection.telemetry_metric_names("telemetry-test") == {QUEUE_TIME, SENT}
    gauge, total = first.metric(QUEUE_TIME), first.metric(SENT)
    assert (gauge.kind, gauge.unit, [p.value for p in gauge.points]) == ("gauge", "ms", [12.5])
    assert (total.kind, total.monotonic, total.temporality) == ("sum", True, "delta")
    assert [(p.attributes, p.value) for p in total.points] == [({"node_id": "1"}, 7)]
    assert second.terminating and second.metrics == [] and (second.error or "").startswith("not an OTLP")
    as_json = inspection.to_json()
    assert list(problems(as_json, {"$ref": "#/components/schemas/Inspection"})) == []
    assert as_json["telemetry"][0]["metrics"][0]["name"] == QUEUE_TIME
    assert "Telemetry clients" in inspection.render() and instance in inspection.render()


def test_nothing_is_kept_without_the_receiver() -> None:
    with Broker(virtual_clock=True) as running:
        with KafkaSocket(("127.0.0.1", running.port)) as conn:
            given = conn.request(71, 0, {"client_instance_id": ZERO_UUID})
            assert conn.request(72, 0, {"client_instance_id": given["client_instance_id"],
                                        "subscription_id": given["subscription_id"], "terminating": False,
                                        "compression_type": 0, "metrics": metrics_data()})["error_code"] == 0
            inspection = running.inspect()
    assert inspection.telemetry == [] and len(inspection.telemetry_clients) == 1
