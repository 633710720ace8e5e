"""Which partitions a query reads and from where to where, as Spark's Kafka source takes them in its options.

Offsets travel as Spark's Kafka source writes them: JSON `{"topic": {"partition": offset}}`, which is also what a
streaming query keeps in its checkpoint for this source. In a JSON spec -2 means earliest and -1 latest.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kemu.spark.options import number, option

TopicPartition = tuple[str, int]
Offsets = dict[TopicPartition, int]

EARLIEST = -2
LATEST = -1
# The Java client hides these from a pattern subscription (exclude.internal.topics=true).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


@dataclass(frozen=True)
class Selection:
    """Exactly one of Spark's `assign`, `subscribe` and `subscribePattern`."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[TopicPartition, ...] = ()

    def choose(self, available: Mapping[str, int]) -> list[TopicPartition]:
        """The partitions read, given the cluster's topics and their partition counts."""
        if self.assigned:
            return sorted(self.assigned)
        if self.pattern is not None:
            matcher = re.compile(self.pattern)
            names = [t for t in available if t not in INTERNAL_TOPICS and matcher.fullmatch(t)]
        else:
            names = [t for t in self.topics if t in available]
        return sorted((topic, p) for topic in names for p in range(available[topic]))


def selection(options: Mapping[str, str]) -> Selection:
    given = {name: option(options, name) for name in ("assign", "subscribe", "subscribePattern")}
    chosen = {name: value for name, value in given.items() if value is not None}
    if len(chosen) != 1:
        raise ValueError("exactly one of the options 'assign', 'subscribe' or 'subscribePattern' must be "
                         f"specified for the Kafka source, not {sorted(chosen) or 'none'}")
    [(name, value)] = chosen.items()
    if name == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise ValueError(f"no topics to subscribe to in 'subscribe' = {value!r}")
        return Selection(topics=topics)
    if name == "subscribePattern":
        if not value.strip():
            raise ValueError("pattern to subscribe is empty")
        return Selection(pattern=value)
    assigned = json.loads(value)
    if not isinstance(assigned, dict) or not all(isinstance(ps, list) for ps in assigned.values()):
        raise ValueError(f"'assign' must be JSON like {{\"topicA\":[0,1],\"topicB\":[2,4]}}, not {value!r}")
    return Selection(assigned=tuple((topic, int(p)) for topic, ps in assigned.items() for p in ps))


@dataclass(frozen=True)
class Spec:
    """Where a read starts or ends: earliest, latest, given offsets, or the first offset at a timestamp."""

    kind: str  # "earliest" | "latest" | "offsets" | "timestamp"
    offsets: Offsets = field(default_factory=dict)  # kind "offsets": per partition, -2/-1 allowed
    timestamps: dict[TopicPartition, int] = field(default_factory=dict)  # kind "timestamp", per partition
    every_timestamp: int | None = None  # kind "timestamp": one timestamp for every partition


def parse_offsets(text: str) -> Offsets:
    parsed = json.loads(text)
    if not isinstance(parsed, dict) or not all(isinstance(ps, dict) for ps in parsed.values()):
        raise ValueError(f"expected JSON like {{\"topicA\":{{\"0\":23,\"1\":-1}}}}, not {text!r}")
    return {(topic, int(p)): int(offset) for topic, ps in parsed.items() for p, offset in ps.items()}


def render_offsets(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """A stream offset as Spark keeps it (JSON object keys are strings)."""
    rendered: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        rendered.setdefault(topic, {})[str(partition)] = offset
    return rendered


def read_offsets(rendered: Mapping[str, Mapping[str, int]]) -> Offsets:
    return {(topic, int(p)): int(offset) for topic, ps in rendered.items() for p, offset in ps.items()}


def _spec(options: Mapping[str, str], prefix: str, default: str) -> Spec:
    every = number(options, f"{prefix}Timestamp")
    if every is not None:
        return Spec("timestamp", every_timestamp=every)
    by_timestamp = option(options, f"{prefix}OffsetsByTimestamp")
    if by_timestamp is not None:
        return Spec("timestamp", timestamps=parse_offsets(by_timestamp))
    text = (option(options, f"{prefix}Offsets") or default).strip()
    if text.lower() in ("earliest", "latest"):
        return Spec(text.lower())
    return Spec("offsets", offsets=parse_offsets(text))


def starting(options: Mapping[str, str], *, streaming: bool) -> Spec:
    """Spark's precedence: startingTimestamp, then startingOffsetsByTimestamp, then startingOffsets."""
    spec = _spec(options, "starting", "latest" if streaming else "earliest")
    if not streaming and (spec.kind == "latest" or LATEST in spec.offsets.values()):
        raise ValueError("starting offset can't be latest for batch queries on Kafka")
    return spec


def ending(options: Mapping[str, str]) -> Spec:
    spec = _spec(options, "ending", "latest")
    if spec.kind == "earliest" or EARLIEST in spec.offsets.values():
        raise ValueError("ending offset can't be earliest for batch queries on Kafka")
    return spec


def rate_limit(limit: int, start: Mapping[TopicPartition, int], end: Offsets) -> Offsets:
    """At most `limit` offsets past `start`, shared out in proportion to each partition's backlog (Spark's
    maxOffsetsPerTrigger: a share below one rounds up, so no partition with a backlog starves)."""
    sizes = {tp: end_offset - start[tp] for tp, end_offset in end.items() if end_offset - start[tp] > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(end)
    limited: Offsets = {}
    for tp, end_offset in end.items():
        if tp not in sizes:
            limited[tp] = end_offset
            continue
        share = limit * sizes[tp] / total
        limited[tp] = min(end_offset, start[tp] + (math.ceil(share) if share < 1 else math.floor(share)))
    return limited


def ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> Sequence[
        tuple[TopicPartition, int, int]]:
    """The non-empty [from, until) range of each partition, in partition order."""
    return [(tp, start[tp], end[tp]) for tp in sorted(end) if tp in start and start[tp] < end[tp]]
