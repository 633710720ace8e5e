"""Client quotas (KIP-546's DescribeClientQuotas/AlterClientQuotas, KIP-13's byte-rate quotas): the quotas of
user, client-id and ip entities, validated as Kafka's ClientQuotaControlManager validates them, described as
its ClientQuotasImage filters them, kept in the data directory (`kemu-client-quotas.json`) for every node of
the cluster, and enforced as its ClientQuotaManager enforces producer_byte_rate and consumer_byte_rate: a
Rate over `quota.window.num` samples of `quota.window.size.seconds`, per node and per the quota entity a
client resolves to, and a throttle time that brings that rate back to the quota.

A broker with no quota anywhere makes no `Throttling` (BrokerCore.throttling is None), so its Produce and Fetch
pay nothing for this.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kemu.broker.errors import MAX_RECORDS_PER_USER_OP, TOO_MANY_RECORDS, ApiError
from kemu.hashing import java_hash_map_order, java_hash_order, java_string_hash

if TYPE_CHECKING:
    # AlterClientQuotas' entity is the same struct (TypedDicts compare by their keys).
    from kemu.wire.messages.k48_describe_client_quotas import DescribeClientQuotasResponseEntriesEntity
from kemu.wire.errors import ErrorCode

CLIENT_QUOTAS_FILE = "kemu-client-quotas.json"

USER, CLIENT_ID, IP = "user", "client-id", "ip"
PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE = "producer_byte_rate", "consumer_byte_rate"
REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE = "request_percentage", "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

# QuotaConfig.userAndClientQuotaConfigs() and ipConfigs(): each key with its ConfigDef type.
_USER_CLIENT_KEYS = {PRODUCER_BYTE_RATE: "LONG", CONSUMER_BYTE_RATE: "LONG", REQUEST_PERCENTAGE: "DOUBLE",
                     CONTROLLER_MUTATION_RATE: "DOUBLE"}
_IP_KEYS = {CONNECTION_CREATION_RATE: "INT"}
_TYPE_MAX = {"INT": (float(2**31 - 1), "an INT"), "LONG": (float(2**63 - 1), "a LONG")}

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

Entity = tuple[tuple[str, str | None], ...]
"""A quota entity: (entity type, name or None for the default), sorted by type."""


def entity_of(parts: Mapping[str, str | None]) -> Entity:
    return tuple(sorted(parts.items()))


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def entity_hash(entity: Entity) -> int:
    """ClientQuotaEntity.hashCode: its HashMap's, the sum of key hash xor value hash (0 for null)."""
    return _int32(sum(java_string_hash(kind) ^ (0 if name is None else java_string_hash(name))
                      for kind, name in entity))


def java_map_order(keys: Iterable[str], initial_capacity: int | None = None) -> list[str]:
    """The order a java.util.HashMap made with `initial_capacity` (None: the default) iterates these distinct
    keys, put in this order: by bucket of the capacity it grew to, in insertion order within one."""
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    if initial_capacity is not None:
        capacity = 1
        while capacity < initial_capacity:
            capacity *= 2
    for size in range(1, len(ordered) + 1):
        if size > int(capacity * 0.75):
            capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(ordered, key=bucket)


def entity_text(shown: Sequence[tuple[str, str | None]]) -> str:
    """ClientQuotaEntity.toString of an entity whose map iterates as `shown`."""
    body = ", ".join(f"{kind}={name}" if name is not None else f"{kind}=null" for kind, name in shown)
    return f"ClientQuotaEntity(entries={{{body}}})"


def entity_data(shown: Sequence[tuple[str, str | None]]) -> list[DescribeClientQuotasResponseEntriesEntity]:
    return [{"entity_type": kind, "entity_name": name} for kind, name in shown]


def image_order(entity: Entity) -> list[tuple[str, str | None]]:
    """An entity as the broker's metadata image keeps it (ClientQuotaImage.dataToEntity: a default HashMap)."""
    parts = dict(entity)
    return [(kind, parts[kind]) for kind in java_map_order(parts)]


def request_order(parts: Sequence[tuple[str, str | None]]) -> tuple[Entity, list[tuple[str, str | None]]]:
    """An entity as AlterClientQuotasRequest.entries() reads it: a HashMap sized to the parts sent, a type sent
    twice keeping its last name; and its iteration order."""
    named = dict(parts)
    return entity_of(named), [(kind, named[kind]) for kind in java_map_order((kind for kind, _ in parts),
                                                                             len(parts))]


class QuotaError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Op(NamedTuple):
    key: str
    value: float | None
    """None: remove the key."""


class Alteration(NamedTuple):
    entity: Entity
    ops: Sequence[Op]
    shown: Sequence[tuple[str, str | None]] = ()
    """The entity in the iteration order of the request's map (`request_order`), as results show it."""


def _valid_ip(name: str | None) -> bool:
    """ClientQuotaControlManager.isValidIpEntity. Kafka asks InetAddress.getByName, which resolves host names
    too; the core does no lookups, so only address literals (and localhost) pass here."""
    if name is None or name == "localhost":
        return True
    try:
        ipaddress.ip_address(name.strip("[]") if name.startswith("[") else name)
    except ValueError:
        return False
    return True


def _check_entity(shown: Sequence[tuple[str, str | None]]) -> Mapping[str, str]:
    """validateEntity (over the entity's parts in its map's order: the first refusal wins) then
    configKeysForEntityType: the keys the entity may set, or raise QuotaError."""
    if not shown:
        raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    for kind, name in shown:
        if kind not in (USER, CLIENT_ID, IP):
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {kind}")
        if name == "":
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"Empty {kind} not supported")
    parts = dict(shown)
    if IP in parts:
        if USER in parts or CLIENT_ID in parts:
            # Kafka's message lacks the space between "should" and "not".
            raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                                                        "not be combined with User or ClientId")
        if not _valid_ip(parts[IP]):
            raise QuotaError(ErrorCode.INVALID_REQUEST, f"{parts[IP]} is not a valid IP or resolvable host.")
        return _IP_KEYS
    return _USER_CLIENT_KEYS


def _check_value(keys: Mapping[str, str], key: str, value: float) -> None:
    """validateQuotaKeyValue."""
    kind = keys.get(key)
    if kind is None:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if value <= 0.0:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    highest, article = _TYPE_MAX[kind]
    if value > highest:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for {article}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        raise QuotaError(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")


class ClientQuotaStore:
    """Every entity's quotas, in the data directory; an entity with none is not kept."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / CLIENT_QUOTAS_FILE
        self._quotas: dict[Entity, dict[str, float]] = {}
        self.version = 0  # moves on every change, so what is derived from the quotas knows to look again
        if self._path.exists():
            for stored in json.loads(self._path.read_text(encoding="utf-8")):
                values = {str(k): float(v) for k, v in stored["values"].items()}
                if values:
                    self._quotas[entity_of(stored["entity"])] = values

    @staticmethod
    def exists_in(data_dir: Path) -> bool:
        return (data_dir / CLIENT_QUOTAS_FILE).exists()

    def __bool__(self) -> bool:
        return bool(self._quotas)

    def get(self, entity: Entity) -> dict[str, float]:
        return dict(self._quotas.get(entity, {}))

    def value(self, entity: Entity, key: str) -> float | None:
        values = self._quotas.get(entity)
        return None if values is None else values.get(key)

    def entities(self) -> list[Entity]:
        return list(self._quotas)

    def alter(self, alterations: Iterable[Alteration], validate_only: bool = False) -> list[
            tuple[list[tuple[str, str | None]], ErrorCode, str | None]]:
        """ClientQuotaControlManager.alterClientQuotas: each entity's result (the entity as its first entry
        showed it), in the order of Kafka's HashMap of results. Changes of the entities that pass are applied
        together (unless `validate_only`), even those of an entity a later duplicate entry turns into an
        error, as Kafka's records are. More changes than the controller's list of records takes (one per key
        set to a new value or removed) refuse the whole request, validate_only or not: ApiError
        POLICY_VIOLATION."""
        results: dict[Entity, tuple[ErrorCode, str | None]] = {}
        shown: dict[Entity, list[tuple[str, str | None]]] = {}
        changes: list[tuple[Entity, str, float | None]] = []
        for alteration in alterations:
            entity = alteration.entity
            shown.setdefault(entity, list(alteration.shown) or image_order(entity))
            text = entity_text(shown[entity])
            wanted: dict[str, float | None] = {}
            for op in alteration.ops:
                if op.key in wanted:
                    results[entity] = (ErrorCode.INVALID_REQUEST, f"Duplicate quota key {op.key} not updating "
                                                                  f"quota for this entity {text}")
                else:
                    wanted[op.key] = op.value
            if entity in results:
                results[entity] = (ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {text}")
                continue
            try:
                changes += self._changes(entity, shown[entity], wanted)
            except QuotaError as refused:
                results[entity] = (refused.code, refused.message)
            else:
                results[entity] = (ErrorCode.NONE, None)
        if len(changes) > MAX_RECORDS_PER_USER_OP:
            raise ApiError(ErrorCode.POLICY_VIOLATION, TOO_MANY_RECORDS)
        if changes and not validate_only:
            self._apply(changes)
        return [(shown[entity], *results[entity]) for entity in java_hash_order(results, entity_hash)]

    def _apply(self, changes: Sequence[tuple[Entity, str, float | None]]) -> None:
        """As the broker's ClientQuotaDelta.apply rebuilds an entity's quotas: a HashMap sized to the old ones,
        the old keys in their order, then the new ones in the order of its HashMap of changes; the values are
        kept in that map's iteration order, which DescribeClientQuotas shows."""
        by_entity: dict[Entity, dict[str, float | None]] = {}
        for entity, key, value in changes:
            by_entity.setdefault(entity, {})[key] = value
        for entity, changed in by_entity.items():
            old = self._quotas.get(entity, {})
            merged = {**old, **{key: value for key, value in changed.items() if value is not None}}
            inserted = [key for key in old if key in merged and not (key in changed and changed[key] is None)]
            inserted += [key for key in java_map_order(changed) if key not in old and changed[key] is not None]
            values = {key: merged[key] for key in java_map_order(inserted, len(old))}
            if values:
                self._quotas[entity] = values
            else:
                self._quotas.pop(entity, None)
        self.version += 1
        self._save()

    def _changes(self, entity: Entity, shown: Sequence[tuple[str, str | None]],
                 wanted: Mapping[str, float | None]) -> list[tuple[Entity, str, float | None]]:
        keys = _check_entity(shown)
        current = self._quotas.get(entity, {})
        changes: list[tuple[Entity, str, float | None]] = []
        for key in java_hash_map_order(wanted):
            value = wanted[key]
            if value is None:
                if key in current:
                    changes.append((entity, key, None))
                continue
            _check_value(keys, key, value)
            if current.get(key) != value:
                changes.append((entity, key, value))
        return changes

    def describe(self, components: Iterable[Mapping[str, object]], strict: bool) -> list[tuple[Entity,
                                                                                               dict[str, float]]]:
        """ClientQuotasImage.describe: the entities the filter matches, with their quotas."""
        exact: dict[str, str | None] = {}
        specified: set[str] = set()
        for component in components:
            kind, match_type, match = component["entity_type"], component["match_type"], component["match"]
            assert isinstance(kind, str) and isinstance(match_type, int)
            assert match is None or isinstance(match, str)
            if not kind:
                raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid empty entity type.")
            if kind in exact or kind in specified:
                raise QuotaError(ErrorCode.INVALID_REQUEST,
                                 f"Entity type {kind} cannot appear more than once in the filter.")
            if kind not in (IP, USER, CLIENT_ID):
                raise QuotaError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
            if match_type == MATCH_EXACT:
                if match is None:
                    raise QuotaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_EXACT, but set match string to null.")
                exact[kind] = match
            elif match_type == MATCH_DEFAULT:
                if match is not None:
                    raise QuotaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
                exact[kind] = None
            elif match_type == MATCH_SPECIFIED:
                if match is not None:
                    raise QuotaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
                specified.add(kind)
            else:
                raise QuotaError(ErrorCode.INVALID_REQUEST, f"Unknown match type {match_type}")
        named = exact.keys() | specified
        if IP in named and (USER in named or CLIENT_ID in named):
            raise QuotaError(ErrorCode.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
                                                        "component should not be used with user or clientId "
                                                        "filter component.")
        found = []
        for entity in java_hash_order(self._quotas, entity_hash):
            parts = dict(entity)
            if strict and len(parts) != len(exact) + len(specified):
                continue
            if all(kind in parts and parts[kind] == name for kind, name in exact.items()) and specified <= parts.keys():
                found.append((entity, self.get(entity)))
        return found

    def _save(self) -> None:
        stored = [{"entity": dict(entity), "values": values} for entity, values in self._quotas.items()]
        temporary = self._path.with_suffix(".tmp")
        temporary.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, self._path)


# ---- enforcement -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Sample:
    start_ms: int
    last_event_ms: int
    value: float = 0.0
    events: int = 0

    def reset(self, now_ms: int) -> None:
        self.start_ms = self.last_event_ms = now_ms
        self.value, self.events = 0.0, 0


@dataclass(slots=True)
class Rate:
    """Kafka's Rate over a SampledTotal: `samples` windows of `window_ms` (and one more, for the sample that
    overlaps the oldest window), the rate being their total over the time they span, counted as at least
    samples - 1 full windows."""

    samples: int
    window_ms: int
    _kept: list[_Sample] = field(default_factory=list)
    _current: int = 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window_ms:
            self._current = (self._current + 1) % (self.samples + 1)
            if self._current >= len(self._kept):
                sample = _Sample(now_ms, now_ms)
                self._kept.append(sample)
            else:
                sample = self._kept[self._current]
                sample.reset(now_ms)
        sample.value += value
        sample.events += 1
        sample.last_event_ms = now_ms

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._kept:
            self._kept.append(_Sample(now_ms, now_ms))
        return self._kept[self._current]

    def _purge(self, now_ms: int) -> None:
        expire_age = self.samples * self.window_ms
        for sample in self._kept:
            if now_ms - sample.last_event_ms >= expire_age:
                sample.reset(now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        self._purge(now_ms)
        oldest = min(sample.start_ms for sample in self._kept) if self._kept else now_ms
        if not self._kept:
            self._kept.append(_Sample(now_ms, now_ms))
        elapsed = now_ms - oldest
        full_windows = elapsed // self.window_ms
        if full_windows < self.samples - 1:
            elapsed += (self.samples - 1 - full_windows) * self.window_ms
        return max(elapsed, 1)

    def measure(self, now_ms: int) -> float:
        """Per second."""
        self._purge(now_ms)
        total = sum(sample.value for sample in self._kept)
        return total / (self.window_size_ms(now_ms) / 1000.0)


def _java_round(value: float) -> int:
    return math.floor(value + 0.5)


class Throttling:
    """The byte-rate quota managers of every node: the rate each client's quota entity has used, and the
    throttle time an excess earns (ClientQuotaManager.recordAndGetThrottleTimeMs)."""

    def __init__(self, store: ClientQuotaStore, samples: int, window_seconds: int) -> None:
        self.store = store
        self.samples, self.window_ms = samples, window_seconds * 1000
        self._rates: dict[tuple[int, str, str, str], Rate] = {}

    def resolve(self, key: str, user: str, client_id: str) -> tuple[float, str, str] | None:
        """The quota of `key` that applies to this user and client id, with the (user, client id) the clients
        sharing it are counted under, in the precedence Kafka's default quota callback gives:
        user and client id, user and default client, user, default user and client id, default user and
        default client, default user, client id, default client."""
        value = self.store.value
        for user_part, client_part, shared in (
                ((USER, user), (CLIENT_ID, client_id), (user, client_id)),
                ((USER, user), (CLIENT_ID, None), (user, client_id)),
                ((USER, user), None, (user, "")),
                ((USER, None), (CLIENT_ID, client_id), (user, client_id)),
                ((USER, None), (CLIENT_ID, None), (user, client_id)),
                ((USER, None), None, (user, "")),
                (None, (CLIENT_ID, client_id), ("", client_id)),
                (None, (CLIENT_ID, None), ("", client_id))):
            entity = tuple(part for part in (client_part, user_part) if part is not None)
            limit = value(entity, key)  # sorted by type: client-id before user
            if limit is not None:
                return limit, *shared
        return None

    def max_in_window(self, key: str, user: str, client_id: str) -> float | None:
        """ClientQuotaManager.maxValueInQuotaWindow: what a client may take in one go without being throttled
        with nothing recorded yet (None: no quota)."""
        found = self.resolve(key, user, client_id)
        return None if found is None else found[0] * (self.samples - 1) * (self.window_ms / 1000)

    def record(self, node_id: int, key: str, user: str, client_id: str, value: float, now_ms: int) -> int:
        """Record `value` (bytes) and return the throttle time in ms it earns (0: within the quota)."""
        found = self.resolve(key, user, client_id)
        if found is None:
            return 0
        limit, user_tag, client_tag = found
        rate = self._rates.get((node_id, key, user_tag, client_tag))
        if rate is None:
            rate = self._rates[(node_id, key, user_tag, client_tag)] = Rate(self.samples, self.window_ms)
        rate.record(value, now_ms)
        measured = rate.measure(now_ms)
        if measured <= limit:
            return 0
        return _java_round((measured - limit) / limit * rate.window_size_ms(now_ms))

    def unrecord(self, node_id: int, key: str, user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back what `record` counted (a throttled Fetch sends no records)."""
        found = self.resolve(key, user, client_id)
        if found is not None:
            rate = self._rates.get((node_id, key, found[1], found[2]))
            if rate is not None:
                rate.record(-value, now_ms)


def user_of(principal: str) -> str:
    """The user name of a "Type:name" principal, which user quotas are matched against."""
    return principal.partition(":")[2] or principal
