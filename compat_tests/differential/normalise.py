"""The one place that says what may differ between Kafka's answers and kemu's, and how it is made equal.

What may differ, by the field that carries it: the cluster id, node ids (where a test does not choose them),
ports, timestamps, producer ids, member ids, throttle times, topic ids. A value of such a field is replaced
by a placeholder naming its kind and the order in which that value was first seen in the observation
(`<producer_id#1>`), so two places that held the same producer id still hold the same placeholder, and a
broker that handed out one id where Kafka handed out two still differs. Nothing else is touched.

A kind named `step:<kind>` is numbered afresh in each step of a script (`next_step`): for times of day that
two steps may or may not share, by the millisecond they ran in, while within a step they still must match
(a token's expiry that is its max lifetime).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# field name -> the kind of value it holds. Matched on the field's own name wherever it stands.
VARYING_FIELDS: dict[str, str] = {
    "cluster_id": "cluster_id",
    "throttle_time_ms": "throttle_time_ms",
    "port": "port",
    "producer_id": "producer_id",
    "member_id": "member_id",
    "leader": "member_id",  # JoinGroup's leader: a member id
    "topic_id": "topic_id",
    "timestamp": "timestamp",
    "log_append_time_ms": "timestamp",
    "last_timestamp": "timestamp",
    "max_timestamp": "timestamp",
    "first_timestamp": "timestamp",
    "transaction_start_time_ms": "timestamp",
    "last_update_time_ms": "timestamp",
    "current_txn_start_offset_ms": "timestamp",
    "session_id": "session_id",
    "incarnation_id": "incarnation_id",
}
# A field whose name ends so is a time of day in milliseconds (and never a duration: durations end in _ms
# without "time", or in "timeout_ms").
_TIMESTAMP_NAME = re.compile(r"(^|_)(timestamp|time)(_ms)?$")
STEP = "step:"
_DURATIONS = {"throttle_time_ms", "session_timeout_ms", "rebalance_timeout_ms", "transaction_timeout_ms"}


def kind_of(name: str) -> str | None:
    """The varying kind a field of this name holds, or None for a field that must be equal."""
    if name in VARYING_FIELDS:
        return VARYING_FIELDS[name]
    if name not in _DURATIONS and _TIMESTAMP_NAME.search(name):
        return "timestamp"
    return None


class Normaliser:
    """Replaces varying values by placeholders, numbering each kind's distinct values as first seen.

    Kafka's "none" values (-1, null, the empty string, the zero UUID) are kept as they are: whether a broker
    answered "no producer id" is part of its behaviour, not a varying detail."""

    NONE_VALUES: frozenset[Any] = frozenset({-1, None, "", "AAAAAAAAAAAAAAAAAAAAAA"})

    def __init__(self) -> None:
        self._seen: dict[tuple[str, Any], str] = {}
        self._counts: dict[str, int] = {}

    def next_step(self) -> None:
        """Forgets the `step:` kinds' values, so the next step numbers them from 1."""
        for key in [key for key in self._seen if key[0].startswith(STEP)]:
            del self._seen[key]
        for kind in [kind for kind in self._counts if kind.startswith(STEP)]:
            del self._counts[kind]

    def placeholder(self, kind: str, value: Any) -> Any:
        if isinstance(value, (list, dict)):
            return value
        hashable = value.hex() if isinstance(value, (bytes, bytearray)) else value
        if hashable in self.NONE_VALUES:
            return value
        key = (kind, str(hashable))
        if key not in self._seen:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self._seen[key] = f"<{kind}#{self._counts[kind]}>"
        return self._seen[key]

    def __call__(self, observation: Any, extra: Mapping[str, str] | None = None) -> Any:
        return self._walk(observation, extra or {})

    def _walk(self, value: Any, extra: Mapping[str, str]) -> Any:
        if isinstance(value, dict):
            result = {}
            for name, item in value.items():
                kind = extra.get(name) or kind_of(str(name))
                if kind is not None and not isinstance(item, (dict, list)):
                    result[name] = self.placeholder(kind, item)
                else:
                    result[name] = self._walk(item, extra)
            return result
        if isinstance(value, (list, tuple)):
            return [self._walk(item, extra) for item in value]
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).hex()
        return value


def normalise(observation: Any, extra: Mapping[str, str] | None = None) -> Any:
    """One observation normalised on its own (placeholders numbered within it)."""
    return Normaliser()(observation, extra)
