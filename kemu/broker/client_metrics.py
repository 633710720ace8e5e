"""Client telemetry (KIP-714): the CLIENT_METRICS config resources (metrics subscriptions) and Kafka 4.3's
ClientMetricsManager — GetTelemetrySubscriptions and PushTelemetry over the client instances it keeps.

A subscription is a named set of `metrics` (name prefixes; `*` all), `interval.ms` and `match` (selector=regex
pairs over the client's id, software name and version, source address and port, instance id), validated as
ClientMetricsConfigs.validate does, kept in the data directory (`kemu-client-metrics.json`; Kafka keeps them in its
metadata log). A client instance gets every matching subscription's metrics, the lowest interval, and a
subscription id: the CRC-32C of the metrics' Java HashSet text and the interval, XORed with the instance id's
hash, as Kafka computes it. Requests before the push interval are throttled as ClientMetricsInstance decides; a
push is decompressed with telemetry.max.bytes as its bound (what fails: INVALID_RECORD, as the export fails in
Kafka), and when the receiver (`kemu.client.telemetry.enable`) is on, kept for inspection.

An instance is forgotten, as Kafka's ClientConnectionDisconnectListener and expiration timer forget it, when the
connection that made it (or last re-evaluated it) closes, or after max(60 s, 3 push intervals) without a request.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kemu.broker.broker_configs import ConfigEntry, ConfigSource, SynonymEntry
from kemu.broker.ids import random_uuid, uuid_text
from kemu.hashing import java_hash_map_order, java_hash_order, java_string_hash, java_uuid_hash
from kemu.log.config import InvalidConfigError, format_value, parse_value
from kemu.wire.checksum import crc32c
from kemu.wire.compression import CompressionError, decompress
from kemu.wire.errors import ErrorCode

CLIENT_METRICS_FILE = "kemu-client-metrics.json"
METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
ALL_METRICS = "*"
INTERVAL_DEFAULT_MS = 5 * 60 * 1000
_MIN_INTERVAL_MS, _MAX_INTERVAL_MS = 100, 3_600_000
SELECTORS = frozenset({"client_instance_id", "client_id", "client_software_name", "client_software_version",
                       "client_source_address", "client_source_port"})
ACCEPTED_COMPRESSION_TYPES = (4, 3, 1, 2)  # ZSTD, LZ4, GZIP, SNAPPY: ClientMetricsManager's order
_CACHE_MAX_SIZE = 16384
_CACHE_EXPIRY_MS = 60_000
_PUSHES_KEPT = 1000
_RESERVED_IDS = frozenset({0, 1})


class _Key(NamedTuple):
    type: str
    default: str
    doc: str


_KEYS: dict[str, _Key] = {
    METRICS: _Key("LIST", "", "Telemetry metric name prefix list"),
    INTERVAL_MS: _Key("INT", str(INTERVAL_DEFAULT_MS), "Metrics push interval in milliseconds"),
    MATCH: _Key("LIST", "", "Client match criteria"),
}
# DescribeConfigs lists them as ClientMetricsConfigs' parsed values iterate: a HashMap's order.
_DESCRIBE_ORDER = java_hash_map_order(_KEYS)


class SubscriptionRefused(Exception):
    """A subscription change Kafka refuses: the error (INVALID_REQUEST or INVALID_CONFIG) and its message."""

    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _java_split(text: str, separator: str) -> list[str]:
    """String.split: the trailing empty strings are dropped."""
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def parse_patterns(patterns: tuple[str, ...]) -> dict[str, re.Pattern[str]]:
    """ClientMetricsConfigs.parseMatchingPatterns: selector=regex each, a later selector replacing an earlier."""
    parsed: dict[str, re.Pattern[str]] = {}
    for pattern in patterns:
        pair = _java_split(pattern, "=")
        if len(pair) != 2 or pair[0].strip() not in SELECTORS:
            raise SubscriptionRefused(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
        try:
            parsed[pair[0].strip()] = re.compile(pair[1].strip())
        except re.error:
            raise SubscriptionRefused(ErrorCode.INVALID_CONFIG,
                                      f"Illegal client matching pattern: {pattern}") from None
    return parsed


def _parsed(configs: Mapping[str, str]) -> dict[str, Any]:
    """ConfigDef.parse over the defaults: each value typed, a list's items not empty."""
    values: dict[str, Any] = {}
    for name, key in _KEYS.items():
        raw = configs.get(name, key.default)
        try:
            value = parse_value(name, key.type, raw)
        except InvalidConfigError as exc:
            raise SubscriptionRefused(ErrorCode.INVALID_CONFIG, str(exc)) from None
        if key.type == "LIST" and any(item == "" for item in value):
            raise SubscriptionRefused(ErrorCode.INVALID_CONFIG, f"Configuration '{name}' values must not be empty.")
        values[name] = value
    return values


def validate(name: str, configs: Mapping[str, str]) -> None:
    """ClientMetricsConfigs.validate, with Kafka's errors and messages."""
    if not name:
        raise SubscriptionRefused(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in _KEYS:
            raise SubscriptionRefused(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    parsed = _parsed(configs)
    interval = parsed[INTERVAL_MS]
    if INTERVAL_MS in configs and not _MIN_INTERVAL_MS <= interval <= _MAX_INTERVAL_MS:
        raise SubscriptionRefused(ErrorCode.INVALID_REQUEST,
                                  f"Invalid value {interval} for {INTERVAL_MS}, interval must be between 100 and "
                                  "3600000 (1 hour)")
    if MATCH in configs:
        parse_patterns(parsed[MATCH])


def describe(configs: Mapping[str, str], include_synonyms: bool, include_documentation: bool) -> list[ConfigEntry]:
    """A CLIENT_METRICS resource as ConfigHelper answers it: each config, a set one's source CLIENT_METRICS_CONFIG
    (its one synonym), an unset one's DEFAULT_CONFIG with no synonym; a subscription need not exist."""
    parsed = _parsed(configs)
    entries = []
    for name in _DESCRIBE_ORDER:
        key = _KEYS[name]
        value = format_value(key.type, parsed[name])
        is_set = name in configs
        source = ConfigSource.CLIENT_METRICS_CONFIG if is_set else ConfigSource.DEFAULT_CONFIG
        synonyms = (SynonymEntry(name, value, source),) if is_set and include_synonyms else ()
        entries.append(ConfigEntry(name=name, value=value, source=source, synonyms=synonyms, config_type=key.type,
                                   documentation=key.doc if include_documentation else None))
    return entries


@dataclass(frozen=True, slots=True)
class Subscription:
    name: str
    metrics: tuple[str, ...]
    interval_ms: int
    patterns: dict[str, re.Pattern[str]]


def _subscription(name: str, configs: Mapping[str, str]) -> Subscription:
    parsed = _parsed(configs)
    return Subscription(name, parsed[METRICS], parsed[INTERVAL_MS], parse_patterns(parsed[MATCH]))


class ClientAttributes(NamedTuple):
    """What a subscription's `match` selects on, from the connection: its client id, the software it named in
    ApiVersions, its address and port."""

    client_id: str | None
    software_name: str | None
    software_version: str | None
    source_address: str | None
    source_port: int | None


@dataclass(frozen=True, slots=True)
class TelemetryPush:
    """One accepted push with metrics, as the receiver got it: the decompressed OTLP MetricsData."""

    client_instance_id: uuid.UUID
    subscription_id: int
    time_ms: int
    terminating: bool
    compression_type: int
    data: bytes
    attributes: ClientAttributes


@dataclass(slots=True)
class ClientInstance:
    instance_id: uuid.UUID
    attributes: ClientAttributes
    subscription_id: int
    version: int
    metrics: list[str]
    push_interval_ms: int
    last_get_ms: int = 0
    last_push_ms: int = 0
    terminating: bool = False
    last_error: ErrorCode = ErrorCode.NONE
    expires_ms: int = 0

    def may_get(self, now_ms: int) -> bool:
        """ClientMetricsInstance.maybeUpdateGetRequestTimestamp."""
        if now_ms - max(self.last_get_ms, self.last_push_ms) >= self.push_interval_ms:
            self.last_get_ms = now_ms
            return True
        return False

    def may_push(self, now_ms: int) -> bool:
        """ClientMetricsInstance.maybeUpdatePushRequestTimestamp: the first push after a get is taken at once
        (clients jitter the interval)."""
        accepted = self.last_get_ms > self.last_push_ms or now_ms - self.last_push_ms >= self.push_interval_ms
        if accepted:
            self.last_push_ms = now_ms
        return accepted


def java_host_address(host: str) -> str:
    """InetAddress.getHostAddress, which a `client_source_address` pattern matches: an IPv6 address in full
    without leading zeros (0:0:0:0:0:0:0:1), an IPv4-mapped one as the IPv4 address."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return ":".join(format(int(group, 16), "x") for group in address.exploded.split(":"))
    return str(address)


def subscription_id(metrics: list[str], push_interval_ms: int, instance_id: uuid.UUID) -> int:
    """ClientMetricsManager.computeSubscriptionId: CRC-32C of `metrics.toString() + pushIntervalMs`, as an int,
    XORed with the instance id's hashCode."""
    text = f"[{', '.join(metrics)}]{push_interval_ms}".encode()
    value = (crc32c(text) ^ java_uuid_hash(instance_id)) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class GetAnswer(NamedTuple):
    error: ErrorCode
    instance: ClientInstance | None


class ClientMetrics:
    """The subscriptions, and the client instances the telemetry APIs serve (ClientMetricsManager)."""

    def __init__(self, data_dir: Path, now_ms: Callable[[], int], max_bytes: int, receiver: bool,
                 new_uuid: Callable[[], uuid.UUID] = random_uuid) -> None:
        self._path = data_dir / CLIENT_METRICS_FILE
        self._now_ms = now_ms
        self.max_bytes = max_bytes
        self.receiver = receiver
        self._new_uuid = new_uuid
        self._configs: dict[str, dict[str, str]] = {}
        if self._path.exists():
            stored = json.loads(self._path.read_text(encoding="utf-8"))
            self._configs = {str(name): {str(k): str(v) for k, v in values.items()}
                             for name, values in stored.items() if values}
        self._subscriptions = {name: _subscription(name, values) for name, values in self._configs.items()}
        self._version = 0
        self._instances: OrderedDict[uuid.UUID, ClientInstance] = OrderedDict()
        # The connection (client address and port) that made or last re-evaluated each instance.
        self._connections: dict[tuple[str | None, int | None], uuid.UUID] = {}
        self.pushes: deque[TelemetryPush] = deque(maxlen=_PUSHES_KEPT)

    # ---- the CLIENT_METRICS resources ----------------------------------------------------------------------
    def names(self) -> list[str]:
        return list(self._configs)

    def get(self, name: str) -> dict[str, str]:
        return dict(self._configs.get(name, {}))

    def replace(self, name: str, values: Mapping[str, str]) -> None:
        """A subscription's new full set of configs (validated first); none removes it."""
        if values:
            self._configs[name] = dict(values)
            self._subscriptions[name] = _subscription(name, values)
        elif name in self._configs:
            del self._configs[name], self._subscriptions[name]
        else:
            return
        self._version += 1
        temporary = self._path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._configs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, self._path)

    # ---- client instances ----------------------------------------------------------------------------------
    def instances(self) -> list[ClientInstance]:
        now = self._now_ms()
        return [instance for instance in self._instances.values() if instance.expires_ms > now]

    def _instance(self, instance_id: uuid.UUID, attributes: ClientAttributes, now: int) -> ClientInstance:
        instance = self._instances.get(instance_id)
        if instance is not None and instance.expires_ms <= now:
            instance = None
        if instance is None or instance.version < self._version:
            instance = self._evaluate(instance_id, attributes if instance is None else instance.attributes)
            self._connections[(attributes.source_address, attributes.source_port)] = instance_id
        self._instances[instance_id] = instance
        self._instances.move_to_end(instance_id)
        while len(self._instances) > _CACHE_MAX_SIZE:
            self._instances.popitem(last=False)
        instance.expires_ms = now + max(_CACHE_EXPIRY_MS, instance.push_interval_ms * 3)
        return instance

    def disconnected(self, address: str, port: int) -> None:
        """A client connection closed: the instance it made is forgotten."""
        instance_id = self._connections.pop((address, port), None)
        if instance_id is not None:
            self._instances.pop(instance_id, None)

    def _evaluate(self, instance_id: uuid.UUID, attributes: ClientAttributes) -> ClientInstance:
        """ClientMetricsManager.createClientInstance: the matching subscriptions' metrics and lowest interval."""
        selected = {
            "client_instance_id": uuid_text(instance_id), "client_id": attributes.client_id,
            "client_software_name": attributes.software_name,
            "client_software_version": attributes.software_version,
            "client_source_address": None if attributes.source_address is None
            else java_host_address(attributes.source_address),
            "client_source_port": None if attributes.source_port is None else str(attributes.source_port),
        }
        interval = INTERVAL_DEFAULT_MS
        metrics: list[str] = []
        everything = False
        for name in java_hash_map_order(self._subscriptions):
            subscription = self._subscriptions[name]
            if all(selected.get(key) is not None and pattern.fullmatch(selected[key] or "") is not None
                   for key, pattern in subscription.patterns.items()):
                everything = everything or ALL_METRICS in subscription.metrics
                metrics += [m for m in java_hash_order(subscription.metrics, java_string_hash, copied=True)
                            if m not in metrics]
                interval = min(interval, subscription.interval_ms)
        ordered = [ALL_METRICS] if everything else java_hash_order(metrics, java_string_hash)
        return ClientInstance(instance_id, attributes, subscription_id(ordered, interval, instance_id), self._version,
                              ordered, interval)

    def get_subscriptions(self, instance_id: uuid.UUID, attributes: ClientAttributes) -> GetAnswer:
        """processGetTelemetrySubscriptionRequest: the zero id asks for a new one."""
        now = self._now_ms()
        if instance_id.int == 0:
            instance_id = self._new_uuid()
            while instance_id in self._instances:
                instance_id = self._new_uuid()
        instance = self._instance(instance_id, attributes, now)
        if not instance.may_get(now) and instance.last_error not in (ErrorCode.UNKNOWN_SUBSCRIPTION_ID,
                                                                       ErrorCode.UNSUPPORTED_COMPRESSION_TYPE):
            return GetAnswer(ErrorCode.THROTTLING_QUOTA_EXCEEDED, None)
        instance.last_error = ErrorCode.NONE
        return GetAnswer(ErrorCode.NONE, instance)

    def push(self, instance_id: uuid.UUID, subscription: int, terminating: bool, compression_type: int,
             metrics: bytes, attributes: ClientAttributes) -> ErrorCode:
        """processPushTelemetryRequest: the checks in Kafka's order, then the export of the metrics."""
        if instance_id.int in _RESERVED_IDS:
            return ErrorCode.INVALID_REQUEST
        now = self._now_ms()
        instance = self._instance(instance_id, attributes, now)
        error = self._check_push(instance, subscription, terminating, compression_type, metrics, now)
        instance.terminating = terminating
        if error is not ErrorCode.NONE:
            instance.last_error = error
            return error
        if metrics:
            try:
                data = decompress(compression_type, metrics, self.max_bytes)
            except CompressionError:
                instance.last_error = ErrorCode.INVALID_RECORD
                return ErrorCode.INVALID_RECORD
            if self.receiver:
                self.pushes.append(TelemetryPush(instance_id, subscription, now, terminating, compression_type, data,
                                                 instance.attributes))
        instance.last_error = ErrorCode.NONE
        return ErrorCode.NONE

    def _check_push(self, instance: ClientInstance, subscription: int, terminating: bool, compression_type: int,
                    metrics: bytes, now: int) -> ErrorCode:
        if instance.terminating:
            return ErrorCode.INVALID_REQUEST
        if not instance.may_push(now) and not terminating:
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED
        if subscription != instance.subscription_id:
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        if not 0 <= compression_type <= 4:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if len(metrics) > self.max_bytes:
            return ErrorCode.TELEMETRY_TOO_LARGE
        return ErrorCode.NONE

