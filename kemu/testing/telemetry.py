"""The client telemetry a kemu with its receiver on (`kemu.client.telemetry.enable`) was pushed (KIP-714), read for
inspect(): each push's OTLP MetricsData decoded with `opentelemetry-proto` (imported only when there is a push to
read). A push that cannot be read (opentelemetry-proto not installed, or not a MetricsData) has no metrics and
says why in its `error`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kemu.broker.client_metrics import ClientMetrics, TelemetryPush
from kemu.broker.ids import uuid_text

if TYPE_CHECKING:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


@dataclass(frozen=True, slots=True)
class TelemetryPoint:
    attributes: dict[str, Any]
    time_unix_nano: int
    value: float | int | None  # a gauge's or sum's; None for histograms and summaries
    count: int | None = None  # a histogram's or summary's
    sum: float | None = None


@dataclass(frozen=True, slots=True)
class TelemetryMetric:
    name: str  # e.g. org.apache.kafka.producer.record.queue.time.max
    kind: str  # "gauge", "sum", "histogram", "exponential_histogram" or "summary"
    unit: str
    description: str
    monotonic: bool | None  # a sum's is_monotonic
    temporality: str | None  # a sum's or histogram's: "delta" or "cumulative"
    points: list[TelemetryPoint]


@dataclass(frozen=True, slots=True)
class TelemetryPushInspection:
    """One accepted push: who sent it, when (the broker's clock), and its metrics."""

    client_instance_id: str
    client_id: str | None
    client_software_name: str | None
    client_software_version: str | None
    subscription_id: int
    time_ms: int
    terminating: bool
    compression_type: int
    size: int  # of the decompressed MetricsData
    resource: dict[str, Any]  # the resource's attributes (the client's own labels)
    metrics: list[TelemetryMetric]
    error: str | None = None  # why the metrics could not be read, if they could not

    def metric(self, name: str) -> TelemetryMetric:
        for found in self.metrics:
            if found.name == name:
                return found
        raise KeyError(f"no metric {name!r} in this push")


@dataclass(frozen=True, slots=True)
class TelemetryClientInspection:
    """A client instance the broker keeps (KIP-714): its subscription as it was last given."""

    client_instance_id: str
    client_id: str | None
    client_software_name: str | None
    client_software_version: str | None
    subscription_id: int
    requested_metrics: list[str]
    push_interval_ms: int
    terminating: bool


def clients(metrics: ClientMetrics) -> list[TelemetryClientInspection]:
    return sorted((TelemetryClientInspection(
        uuid_text(i.instance_id), i.attributes.client_id, i.attributes.software_name, i.attributes.software_version,
        i.subscription_id, list(i.metrics), i.push_interval_ms, i.terminating) for i in metrics.instances()),
        key=lambda c: c.client_instance_id)


def pushes(metrics: ClientMetrics) -> list[TelemetryPushInspection]:
    return [_push(push) for push in metrics.pushes]


def _push(push: TelemetryPush) -> TelemetryPushInspection:
    resource: dict[str, Any] = {}
    found: list[TelemetryMetric] = []
    error = None
    try:
        from opentelemetry.proto.metrics.v1 import metrics_pb2
    except ImportError:
        error = "reading pushed client telemetry needs opentelemetry-proto (pip install opentelemetry-proto)"
    else:
        try:
            data = metrics_pb2.MetricsData.FromString(push.data)
        except Exception as exc:  # protobuf's DecodeError, without importing protobuf itself for it
            error = f"not an OTLP MetricsData: {exc}"
        else:
            for resource_metrics in data.resource_metrics:
                resource.update(_attributes(resource_metrics.resource.attributes))
                for scope in resource_metrics.scope_metrics:
                    found += [_metric(metric) for metric in scope.metrics]
    attributes = push.attributes
    return TelemetryPushInspection(uuid_text(push.client_instance_id), attributes.client_id, attributes.software_name,
                                   attributes.software_version, push.subscription_id, push.time_ms, push.terminating,
                                   push.compression_type, len(push.data), resource, found, error)


_TEMPORALITY = {1: "delta", 2: "cumulative"}


def _metric(metric: Any) -> TelemetryMetric:
    kind = metric.WhichOneof("data") or ""
    body = getattr(metric, kind) if kind else None
    points: list[TelemetryPoint] = []
    for point in getattr(body, "data_points", ()):
        if kind in ("gauge", "sum"):
            value: float | int | None = point.as_double if point.WhichOneof("value") == "as_double" else point.as_int
            points.append(TelemetryPoint(_attributes(point.attributes), point.time_unix_nano, value))
        else:
            points.append(TelemetryPoint(_attributes(point.attributes), point.time_unix_nano, None, point.count,
                                         point.sum))
    monotonic = bool(metric.sum.is_monotonic) if kind == "sum" else None
    temporality = _TEMPORALITY.get(body.aggregation_temporality) if body is not None and kind in (
        "sum", "histogram", "exponential_histogram") else None
    return TelemetryMetric(metric.name, kind, metric.unit, metric.description, monotonic, temporality, points)


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        pairs: list[KeyValue] = list(value.kvlist_value.values)
        return _attributes(pairs)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)
