"""Fault scripts: what a test makes the broker do wrong, as plain data.

    broker.faults.add(Fault(api="EndTxn", error="CONCURRENT_TRANSACTIONS", count=2))
    broker.faults.add(Fault(api="Produce", topic="orders", drop="after"))
    broker.faults.add(Fault(crash="after-prepare", transactional_id="tx-1"))

A request fault acts on the next `count` requests (None: every one, until removed) that match all its
filters — API, topic and partition, transactional id, group, client id — and does any of: answer with an
error code (the API's own error response: the handler does not run), hold the response back (`delay_ms`),
drop the connection before or after the handler runs, set the response's `throttle_time_ms`. When several
faults match a request, the first added acts and counts the hit. A request naming several topics matches
when any of them does, and its error response carries the error for all of them, as Kafka's would.

A crash fault names a point inside the two-phase commit (`CrashPoint`, optionally for one transactional
id): when marker writing reaches it, the broker stops dead there — nothing more is written, connections
drop — and `broker.restart()` or `kill()` brings it back to recover what it left, as Kafka's coordinator
recovers after a crash.

Each fault counts its `hits`; a test asserts on them. `to_json`/`from_json` give the JSON form (errors and
APIs by name) a control endpoint or a file can carry.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

from kemu.coordinators.crash_points import CrashPoint
from kemu.handlers import Handler
from kemu.handlers.context import RequestContext
from kemu.server.hooks import Intervention
from kemu.testing.transcript import Summary, summarize_request
from kemu.wire.apis import all_apis
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

DROP_BEFORE = "before"
DROP_AFTER = "after"
_DROPS = (DROP_BEFORE, DROP_AFTER)


class BrokerCrashed(BaseException):
    """Raised on the broker's thread at a crash point, to stop it dead. A BaseException so that no
    `except Exception` on the way (a housekeeping task's, a handler's) catches it and carries on writing."""

    def __init__(self, point: CrashPoint, transactional_id: str) -> None:
        super().__init__(f"crash point {point.value} reached for transactional id {transactional_id!r}")
        self.point = point
        self.transactional_id = transactional_id


@dataclass(slots=True, eq=False)
class Fault:
    """One scripted fault. `api` is a key (26) or Kafka's name ("EndTxn"); `error` an `ErrorCode` or its
    name; `crash` a `CrashPoint` or its value. Equality is identity: two alike faults are two faults."""

    api: int | str | None = None
    error: ErrorCode | str | None = None
    count: int | None = 1
    topic: str | None = None
    partition: int | None = None
    transactional_id: str | None = None
    group: str | None = None
    client_id: str | None = None
    delay_ms: int = 0
    drop: str | None = None
    throttle_time_ms: int | None = None
    crash: CrashPoint | str | None = None
    message: str | None = None  # the error message, for APIs whose response carries one
    hits: int = 0

    def __post_init__(self) -> None:
        if self.api is not None:
            self.api = _api_key(self.api)
        if isinstance(self.error, str):
            try:
                self.error = ErrorCode[self.error.upper()]
            except KeyError:
                raise ValueError(f"no error code named {self.error!r}") from None
        if isinstance(self.crash, str) and not isinstance(self.crash, CrashPoint):
            try:
                self.crash = CrashPoint(self.crash)
            except ValueError:
                points = ", ".join(point.value for point in CrashPoint)
                raise ValueError(f"no crash point {self.crash!r} (one of {points})") from None
        if self.drop is not None and self.drop not in _DROPS:
            raise ValueError(f"drop is 'before' or 'after', not {self.drop!r}")
        if self.count is not None and self.count < 0:
            raise ValueError("count is at least 0 (None: every matching request)")
        if self.delay_ms < 0 or (self.throttle_time_ms is not None and self.throttle_time_ms < 0):
            raise ValueError("delay_ms and throttle_time_ms are not negative")
        acts = (self.error is not None or self.drop is not None or self.delay_ms > 0
                or self.throttle_time_ms is not None)
        if self.crash is not None:
            if acts or self.api is not None or self.topic is not None or self.partition is not None \
                    or self.group is not None or self.client_id is not None:
                raise ValueError("a crash fault takes only a transactional_id (and a count)")
        elif not acts:
            raise ValueError("a fault needs something to do: error, drop, delay_ms, throttle_time_ms or crash")

    # ---- typed views ----------------------------------------------------------------------------------------
    @property
    def api_key(self) -> int | None:
        return self.api if isinstance(self.api, int) else None

    @property
    def error_code(self) -> ErrorCode | None:
        return self.error if isinstance(self.error, ErrorCode) else None

    @property
    def crash_point(self) -> CrashPoint | None:
        return self.crash if isinstance(self.crash, CrashPoint) else None

    @property
    def active(self) -> bool:
        """Whether it still acts: fewer hits than its count."""
        return self.count is None or self.hits < self.count

    # ---- JSON -------------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Fields that differ from their defaults (and always `hits`), errors and APIs by name."""
        out: dict[str, Any] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value == spec.default and spec.name not in ("hits", "count"):
                continue
            if spec.name == "api" and isinstance(value, int):
                value = all_apis()[value].name
            elif isinstance(value, ErrorCode):
                value = value.name
            elif isinstance(value, CrashPoint):
                value = value.value
            out[spec.name] = value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fault:
        known = {spec.name for spec in fields(cls)}
        if unknown := sorted(set(data) - known):
            raise ValueError(f"unknown fault fields: {', '.join(unknown)}")
        return cls(**data)

    # ---- what it does -------------------------------------------------------------------------------------------
    def matches(self, api_key: int, client_id: str | None, summary: Summary | None) -> bool:
        """Whether a request of `api_key` from `client_id`, whose fields are `summary` (needed only by a
        fault with a topic, partition, transactional id or group filter), is one this fault acts on."""
        if self.crash is not None or not self.active:
            return False
        if self.api is not None and self.api != api_key:
            return False
        if self.client_id is not None and self.client_id != client_id:
            return False
        if not self.needs_summary:
            return True
        assert summary is not None
        if self.transactional_id is not None and self.transactional_id not in summary.transactional_ids:
            return False
        if self.group is not None and self.group not in summary.groups:
            return False
        if self.topic is not None or self.partition is not None:
            return any((self.topic is None or note.topic == self.topic)
                       and (self.partition is None or note.partition == self.partition)
                       for note in summary.partitions)
        return True

    @property
    def needs_summary(self) -> bool:
        return (self.topic is not None or self.partition is not None or self.transactional_id is not None
                or self.group is not None)

    def intervention(self) -> Intervention:
        return Intervention(error=self.error_code, message=self.message, drop_before=self.drop == DROP_BEFORE,
                            drop_after=self.drop == DROP_AFTER, delay_s=self.delay_ms / 1000,
                            throttle_time_ms=self.throttle_time_ms)


class Faults:
    """The faults of one broker handle (`broker.faults`); they survive its restart() and kill().

    Added and removed from a test's thread, consulted on the broker's: the list is replaced whole on
    every change, so the broker always reads a consistent one."""

    def __init__(self) -> None:
        self._faults: tuple[Fault, ...] = ()

    def add(self, fault: Fault) -> Fault:
        """Arm `fault` (after those already armed); returns it, to assert on its hits later."""
        self._faults = (*self._faults, fault)
        return fault

    def remove(self, fault: Fault) -> None:
        self._faults = tuple(present for present in self._faults if present is not fault)

    def clear(self) -> None:
        self._faults = ()

    def list(self) -> builtins.list[Fault]:
        return [*self._faults]

    def __iter__(self) -> Iterator[Fault]:
        return iter(self._faults)

    def __len__(self) -> int:
        return len(self._faults)

    def to_json(self) -> builtins.list[dict[str, Any]]:
        return [fault.to_json() for fault in self._faults]

    # ---- on the broker's thread ---------------------------------------------------------------------------------
    def intercept(self, ctx: RequestContext, handler: Handler, request: Request) -> Intervention | None:
        """The request hook (kemu.server.hooks): the intervention of the first armed fault that matches."""
        faults = self._faults
        if not faults:
            return None
        summary: Summary | None = None
        client_id = request.header.client_id
        topics = ctx.broker.topics

        def name_of(topic_id: uuid.UUID) -> str | None:
            found = topics.by_id(topic_id)
            return None if found is None else found.name

        for fault in faults:
            if fault.crash is not None:
                continue
            if summary is None and fault.needs_summary:
                summary = summarize_request(handler.key, request.body, name_of)
            if fault.matches(handler.key, client_id, summary):
                fault.hits += 1
                return fault.intervention()
        return None

    def crash_at(self, point: CrashPoint, transactional_id: str) -> Fault | None:
        """The armed crash fault for `point` and `transactional_id`, its hit counted; None if there is none."""
        for fault in self._faults:
            if (fault.crash is point and fault.active
                    and (fault.transactional_id is None or fault.transactional_id == transactional_id)):
                fault.hits += 1
                return fault
        return None


@cache
def _api_keys_by_name() -> dict[str, int]:
    return {api.name.lower(): key for key, api in all_apis().items()}


def _api_key(api: int | str) -> int:
    if isinstance(api, int):
        if api not in all_apis():
            raise ValueError(f"no API with key {api}")
        return api
    key = _api_keys_by_name().get(api.replace("_", "").lower())
    if key is None:
        raise ValueError(f"no API named {api!r} (Kafka's names, e.g. 'EndTxn', 'Produce')")
    return key
