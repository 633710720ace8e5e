"""The transcript: what the broker was asked and what it answered, kept so a failing test explains itself.

An observer on the server's request hooks turns every exchange into an `Entry` — API, version, client id
and the fields that matter (topic and partition, producer id, epoch and sequence, transactional id, group,
offsets, error codes by name) — and keeps the last `capacity` of them in a ring. Bodies themselves are not
kept: a Fetch response's records may be megabytes, and an entry must stay cheap to hold and to print.

`render()` gives readable lines (the pytest plugin adds them to a failed test's report); `Entry.to_json()`
is the JSON form `kemu serve --transcript FILE` writes, one entry per line.

`summarize_request` and `summarize_response` also serve the fault filters (kemu.testing.faults): a fault
matches on the same topics, transactional ids and groups the transcript shows.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kemu.server.hooks import Exchange, Intervention
from kemu.wire.errors import ErrorCode
from kemu.wire.records import BatchHeader, CorruptRecordError, batch_slices

DEFAULT_CAPACITY = 2000

# The shapes topics and partitions take across the APIs' schemas (Produce's topic_data/partition_data,
# Fetch's topics/partitions, AddPartitionsToTxn's results_by_partition, ...).
_TOPIC_LISTS = frozenset({"topics", "topic_data", "responses", "v3_and_below_topics", "topic_results",
                          "results_by_topic_v3_and_below"})
_PARTITION_LISTS = frozenset({"partitions", "partition_data", "partition_responses", "results_by_partition",
                              "partition_indexes"})
_TOPIC_NAMES = ("name", "topic")
_PARTITION_INDEXES = ("index", "partition", "partition_index")
_ERRORS = ("error_code", "partition_error_code")
# Per-partition numbers worth a line: where a read starts, where a write landed, what a partition has.
_OFFSETS = ("fetch_offset", "base_offset", "committed_offset", "offset", "high_watermark", "last_stable_offset",
            "log_start_offset")
# Top-level scalars worth a line, on either side.
_SCALARS = ("transactional_id", "v3_and_below_transactional_id", "producer_id", "v3_and_below_producer_id",
            "producer_epoch", "v3_and_below_producer_epoch", "committed", "group_id", "member_id",
            "generation_id", "acks", "isolation_level", "key", "key_type", "transaction_timeout_ms",
            "member_epoch", "node_id", "leader")
_RENAMED = {"v3_and_below_transactional_id": "transactional_id", "v3_and_below_producer_id": "producer_id",
            "v3_and_below_producer_epoch": "producer_epoch"}
_UNSET_IN_RESPONSES = frozenset({"producer_id", "producer_epoch", "generation_id", "node_id", "member_epoch"})
_FIND_COORDINATOR = 10
_KEY_TYPE_TRANSACTION = 1

TopicNames = Callable[[uuid.UUID], "str | None"]


@dataclass(frozen=True, slots=True)
class PartitionNote:
    """One partition a request or response names, with what it said about it."""

    topic: str
    partition: int | None  # None: the topic as a whole (Metadata, CreateTopics)
    fields: tuple[tuple[str, Any], ...] = ()
    error: str | None = None  # the error's name, when not NONE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic}
        if self.partition is not None:
            out["partition"] = self.partition
        out.update(self.fields)
        if self.error is not None:
            out["error"] = self.error
        return out

    def render(self) -> str:
        where = self.topic if self.partition is None else f"{self.topic}-{self.partition}"
        parts = [where, *(f"{name}={value}" for name, value in self.fields)]
        if self.error is not None:
            parts.append(self.error)
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Summary:
    """The fields that matter of one request or response body."""

    fields: tuple[tuple[str, Any], ...] = ()
    partitions: tuple[PartitionNote, ...] = ()
    error: str | None = None  # the top-level error's name ("NONE" included), when the body has one
    errors: tuple[str, ...] = ()  # the names of every error besides NONE, top-level and per entry
    transactional_ids: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @property
    def topics(self) -> frozenset[str]:
        return frozenset(note.topic for note in self.partitions)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.fields)
        if self.error is not None:
            out["error"] = self.error
        if self.errors:
            out["errors"] = list(self.errors)
        if self.partitions:
            out["partitions"] = [note.to_json() for note in self.partitions]
        return out


@dataclass(frozen=True, slots=True)
class Entry:
    """One exchange: what the client asked and what it got."""

    seq: int
    time: float  # wall-clock seconds since the epoch when the exchange ended
    api: str
    api_key: int
    version: int
    client_id: str | None
    correlation_id: int
    request: Summary
    response: Summary | None  # None: no response body (acks=0 Produce, dropped before handling)
    sent: bool
    closed: bool
    fault: str | None = None  # what a fault did to it, if anything

    @property
    def errors(self) -> tuple[str, ...]:
        return () if self.response is None else self.response.errors

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq, "time": round(self.time, 6), "api": self.api, "api_key": self.api_key,
            "version": self.version, "client_id": self.client_id, "correlation_id": self.correlation_id,
            "request": self.request.to_json(),
            "response": None if self.response is None else self.response.to_json(),
            "sent": self.sent, "closed": self.closed, "fault": self.fault,
        }

    def render(self, *, max_partitions: int = 8) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.time)) + f".{int(self.time * 1000) % 1000:03d}"
        asked = _render_summary(self.request, max_partitions)
        head = f"#{self.seq} {stamp} {self.client_id or '-'} {self.api} v{self.version}"
        lines = [f"{head}  {asked}".rstrip()]
        if self.response is None:
            got = "(no response)"
        else:
            got = _render_summary(self.response, max_partitions, with_error=True)
            if not self.sent:
                got = f"(not sent) {got}"
        if self.fault is not None:
            got = f"{got}  [fault: {self.fault}]"
        if self.closed:
            got = f"{got}  [connection closed]"
        lines.append(f"    -> {got}")
        return "\n".join(lines)


class Transcript:
    """The last `capacity` exchanges of a broker. `observe` is its hook; `sink`, when given, also gets
    every entry as it is made (`kemu serve --transcript` writes them out)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, *, sink: Callable[[Entry], None] | None = None,
                 topic_names: TopicNames | None = None) -> None:
        self.sink = sink
        # Fetch v13+ names topics by id; the broker resolves them while the exchange is observed.
        self.topic_names = topic_names
        # The broker's thread appends while a test's thread reads: copying the ring must not race it.
        self._lock = threading.Lock()
        self._ring: deque[Entry] = deque()
        self._seq = 0
        self.capacity = capacity

    @property
    def capacity(self) -> int:
        """How many exchanges are kept; setting it keeps the newest that fit."""
        return self._ring.maxlen or 0

    @capacity.setter
    def capacity(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a transcript keeps at least one exchange")
        with self._lock:
            self._ring = deque(self._ring, maxlen=capacity)

    def observe(self, exchange: Exchange) -> None:
        entry = self.entry_of(exchange)
        with self._lock:
            self._ring.append(entry)
        if self.sink is not None:
            self.sink(entry)

    def entry_of(self, exchange: Exchange) -> Entry:
        names = self.topic_names
        self._seq += 1
        request = summarize_request(exchange.api_key, exchange.request.body, names)
        response = None if exchange.response is None else summarize_response(exchange.response, names)
        intervention = exchange.intervention
        return Entry(self._seq, time.time(), exchange.api_name, exchange.api_key, exchange.api_version,
                     exchange.client_id, exchange.correlation_id, request, response, exchange.sent,
                     exchange.closed, None if intervention is None else _describe(intervention))

    @property
    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._ring)

    def __len__(self) -> int:
        return len(self._ring)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def clear(self) -> None:
        with self._lock:
            self._ring.clear()

    def render(self, last: int | None = None) -> str:
        """Readable lines of the kept exchanges (the `last` ones only, when given), oldest first."""
        entries = self.entries
        if last is not None:
            entries = entries[-last:] if last > 0 else []
        if not entries:
            return "(no requests)"
        dropped = self._seq - len(self._ring)
        lines = [f"({dropped} earlier exchanges not kept)"] if dropped > 0 and last is None else []
        lines.extend(entry.render() for entry in entries)
        return "\n".join(lines)

    def to_json(self) -> list[dict[str, Any]]:
        return [entry.to_json() for entry in self.entries]


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"ERROR_{code}"  # a code this kemu does not know still shows


class JsonLinesFile:
    """`kemu serve --transcript FILE`: every exchange as one JSON line, written as it happens (line-buffered,
    so a test reading the file while the broker runs sees whole lines). Appended to, so a broker restarted on
    the same file keeps what the run before its crash answered: that is usually what explains the failure."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._file = open(path, "a", encoding="utf-8", buffering=1)  # open for the broker's life

    def attach(self, transcript: Transcript, call: Callable[[Callable[[], None]], None]) -> None:
        """Write what `transcript` holds, then every entry it makes; `call` runs on the broker's thread, so no
        exchange falls between the two."""
        def start() -> None:
            for entry in transcript.entries:
                self.write(entry)
            transcript.sink = self.write

        call(start)

    def write(self, entry: Entry) -> None:
        self._file.write(json.dumps(entry.to_json(), default=str) + "\n")

    def close(self) -> None:
        self._file.close()


# ---- the fields that matter ---------------------------------------------------------------------------------
def summarize_request(api_key: int, body: dict[str, Any], topic_names: TopicNames | None = None) -> Summary:
    summary = _summarize(body, topic_names, with_error=False)
    if api_key == _FIND_COORDINATOR:
        # FindCoordinator names its group or transactional id as a key (v0-3) or keys (v4+).
        keys = set(body.get("coordinator_keys") or ()) | ({body["key"]} if body.get("key") else set())
        if body.get("key_type", 0) == _KEY_TYPE_TRANSACTION:
            return _with(summary, transactional_ids=summary.transactional_ids | keys)
        return _with(summary, groups=summary.groups | keys)
    return summary


def summarize_response(body: dict[str, Any], topic_names: TopicNames | None = None) -> Summary:
    return _summarize(body, topic_names, with_error=True)


def _with(summary: Summary, **changes: Any) -> Summary:
    values = {name: getattr(summary, name) for name in Summary.__dataclass_fields__}
    values.update(changes)
    return Summary(**values)


def _summarize(body: dict[str, Any], topic_names: TopicNames | None, *, with_error: bool) -> Summary:
    fields: list[tuple[str, Any]] = []
    for name in _SCALARS:
        value = body.get(name)
        if value is None or value == "" or (name.startswith("v3_and_below") and value in (-1, "")):
            continue
        if with_error and value == -1 and name in _UNSET_IN_RESPONSES:
            continue  # an error response's defaults, not news
        fields.append((_RENAMED.get(name, name), value))
    throttle = body.get("throttle_time_ms")
    if throttle:
        fields.append(("throttle_time_ms", throttle))
    notes: list[PartitionNote] = []
    errors: list[str] = []
    txn_ids: set[str] = set()
    groups: set[str] = set()
    _walk(body, topic_names, with_error, notes, errors, txn_ids, groups)
    top = body.get("error_code")
    error = error_name(top) if with_error and isinstance(top, int) else None
    if error is not None and error != "NONE":
        errors.insert(0, error)
    return Summary(tuple(fields), tuple(notes), error, tuple(dict.fromkeys(errors)), frozenset(txn_ids),
                   frozenset(groups))


def _walk(body: dict[str, Any], topic_names: TopicNames | None, response: bool, notes: list[PartitionNote],
          errors: list[str], txn_ids: set[str], groups: set[str]) -> None:
    for key, value in body.items():
        if key in ("transactional_id", "v3_and_below_transactional_id") and isinstance(value, str) and value:
            txn_ids.add(value)
        elif key == "group_id" and isinstance(value, str) and value:
            groups.add(value)
        elif key in ("groups", "groups_names") and isinstance(value, list):
            groups.update(item for item in value if isinstance(item, str))
        elif key == "transactional_ids" and isinstance(value, list):
            txn_ids.update(item for item in value if isinstance(item, str))
        if not isinstance(value, list):
            continue
        for item in value:
            if not isinstance(item, dict):
                continue
            if key in _TOPIC_LISTS:
                _topic(item, topic_names, response, notes, errors)
            else:
                # e.g. AddPartitionsToTxn v4's transactions, OffsetFetch v8's groups, WriteTxnMarkers' markers
                _walk(item, topic_names, response, notes, errors, txn_ids, groups)
                item_error = item.get("error_code")
                if isinstance(item_error, int) and item_error:
                    errors.append(error_name(item_error))


def _topic(item: dict[str, Any], topic_names: TopicNames | None, response: bool, notes: list[PartitionNote],
           errors: list[str]) -> None:
    topic = _topic_name(item, topic_names)
    if topic is None:
        return
    partitions = next((item[key] for key in _PARTITION_LISTS if isinstance(item.get(key), list)), None)
    topic_error = _error_of(item)
    if topic_error is not None:
        errors.append(topic_error)
    if not partitions:
        notes.append(PartitionNote(topic, None, (), topic_error))
        return
    for entry in partitions:
        if isinstance(entry, int):
            notes.append(PartitionNote(topic, entry))
            continue
        if not isinstance(entry, dict):
            continue
        index = next((entry[key] for key in _PARTITION_INDEXES if isinstance(entry.get(key), int)), None)
        # -1 is "unknown" (an error's answer): noise in a transcript.
        fields = [(name, entry[name]) for name in _OFFSETS if isinstance(entry.get(name), int) and entry[name] != -1]
        records = entry.get("records")
        if records:
            fields.extend(_batches(records, offsets=response))
        aborted = entry.get("aborted_transactions")
        if aborted:
            fields.append(("aborted_transactions", len(aborted)))
        own = _error_of(entry)
        if own is not None:
            errors.append(own)
        notes.append(PartitionNote(topic, index, tuple(fields), own or topic_error))


def _topic_name(item: dict[str, Any], topic_names: TopicNames | None) -> str | None:
    for key in _TOPIC_NAMES:
        name = item.get(key)
        if isinstance(name, str) and name:
            return name
    topic_id = item.get("topic_id")
    if isinstance(topic_id, uuid.UUID) and topic_id.int:
        found = topic_names(topic_id) if topic_names is not None else None
        return found if found is not None else str(topic_id)
    return None


def _error_of(item: dict[str, Any]) -> str | None:
    for key in _ERRORS:
        code = item.get(key)
        if isinstance(code, int) and code:
            return error_name(code)
    return None


def _batches(records: Any, *, offsets: bool) -> Iterable[tuple[str, Any]]:
    """What the batch headers of a Produce's or a Fetch's records say: the producer, its sequence, how many
    records and, with `offsets` (a Fetch response: a Produce's are not assigned yet), which offsets;
    decoding headers only, never the records."""
    try:
        headers = [BatchHeader.parse(piece) for piece in batch_slices(records)]
    except (CorruptRecordError, ValueError, TypeError):
        return [("records", "unreadable")]
    if not headers:
        return []
    first, last = headers[0], headers[-1]
    out: list[tuple[str, Any]] = []
    if first.has_producer_id:
        out += [("producer_id", first.producer_id), ("producer_epoch", first.producer_epoch),
                ("base_sequence", first.base_sequence)]
    if any(header.is_transactional for header in headers):
        out.append(("transactional", True))
    out += [("batches", len(headers)), ("records", sum(header.records_count for header in headers))]
    controls = sum(1 for header in headers if header.is_control)
    if controls:
        out.append(("control_batches", controls))
    if offsets:
        out.append(("offsets", f"{first.base_offset}..{last.last_offset}"))
    return out


def _render_summary(summary: Summary, max_partitions: int, *, with_error: bool = False) -> str:
    parts: list[str] = []
    if with_error and summary.error is not None:
        parts.append(summary.error)
    parts.extend(f"{name}={value}" for name, value in summary.fields)
    shown = summary.partitions[:max_partitions]
    parts.extend(f"[{note.render()}]" for note in shown)
    if len(summary.partitions) > len(shown):
        parts.append(f"(+{len(summary.partitions) - len(shown)} more)")
    if with_error:
        extra = [name for name in summary.errors if name != summary.error
                 and not any(note.error == name for note in shown)]
        if extra:
            parts.append("errors=" + ",".join(extra))
        if not parts:
            return "ok"
    return " ".join(str(part) for part in parts)


def _describe(intervention: Intervention) -> str:
    parts: list[str] = []
    if intervention.error is not None:
        parts.append(f"error {intervention.error.name}")
    if intervention.drop_before:
        parts.append("dropped before handling")
    if intervention.drop_after:
        parts.append("response dropped")
    if intervention.delay_s:
        parts.append(f"delayed {intervention.delay_s * 1000:.0f} ms")
    if intervention.throttle_time_ms is not None:
        parts.append(f"throttle {intervention.throttle_time_ms} ms")
    return ", ".join(parts) or "intervened"


