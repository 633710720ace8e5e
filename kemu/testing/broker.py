"""`kemu.testing.Broker`: a real kemu broker inside the test's process, on its own thread and Trio loop.

    with kemu.testing.Broker() as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})

Any test style can hold it (pytest, unittest, asyncio, trio, a plain script): the broker runs on a thread
of its own, and every call of the handle that touches the core runs on that thread (the core is only ever
touched from its Trio loop), waiting for the answer. Clients reach it over loopback like any broker.

It is ready when the constructor returns, and gone — listener, connections, housekeeper, thread — when
`close()` returns. `restart()` stops it cleanly and starts it again on the same data and port (what a
restart test needs), `kill()` stops it without the clean shutdown (no final producer snapshots, nothing
closed in order: what recovery after `kill -9` sees), `reset()` empties it between tests.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import trio
import trio.lowlevel

from kemu.admin.topics import NewTopic, create_topics
from kemu.broker import meta_properties
from kemu.broker.broker import Broker as CoreBroker
from kemu.broker.broker_configs import apply_properties
from kemu.broker.config import BrokerConfig
from kemu.broker.partition import Partition
from kemu.coordinators import Coordinators
from kemu.log import FetchIsolation
from kemu.server import serve
from kemu.server.hooks import RequestHooks
from kemu.testing.clock import TestClock
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch

T = TypeVar("T")

_START_TIMEOUT_S = 30.0


class BrokerError(Exception):
    """The broker refused what the handle asked (a topic it cannot create, a record it cannot append)."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(f"{code.name}: {message or code.message}")
        self.code = code


@dataclass(frozen=True, slots=True)
class Record:
    """A record as stored, for arranging and asserting."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


class Broker:
    """One in-process broker. `config` takes Kafka broker settings by their names (`{"num.partitions":
    "3"}`); `virtual_clock=True` starts `clock` frozen, so only `clock.advance()` moves broker time."""

    def __init__(self, *, config: Mapping[str, str] | None = None, virtual_clock: bool = False,
                 data_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0,
                 node_id: int = 1) -> None:
        self.clock = TestClock(frozen=virtual_clock)
        self._settings = dict(config or {})
        self._host = host
        self._port = port
        self._node_id = node_id
        self._own_dir = data_dir is None
        self.data_dir = Path(tempfile.mkdtemp(prefix="kemu-test-") if data_dir is None else data_dir)
        # Refuse a bad setting here, in the test's thread, with Kafka's message.
        apply_properties(BrokerConfig(), self._settings)
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._error: BaseException | None = None
        # One set of hooks for the handle's life: what a test registers survives restart() and kill().
        self.hooks = RequestHooks()
        self.core: CoreBroker
        self.coordinators: Coordinators
        self._start()

    # ---- life ----------------------------------------------------------------------------------------
    def _start(self) -> None:
        config = BrokerConfig(node_id=self._node_id, host=self._host, port=self._port, data_dir=str(self.data_dir))
        apply_properties(config, self._settings)
        cluster_id = meta_properties.load_or_format(self.data_dir, config.node_id, None)
        self.core = CoreBroker(config, self.clock, cluster_id)
        self.coordinators = Coordinators(self.core)
        ready = threading.Event()
        self._error = None

        def run() -> None:
            try:
                trio.run(self._main, ready)
            except BaseException as exc:  # reported to the test's thread
                self._error = exc
            finally:
                ready.set()

        self._thread = threading.Thread(target=run, name=f"kemu-broker-{self._node_id}", daemon=True)
        self._thread.start()
        if not ready.wait(_START_TIMEOUT_S) or self._token is None:
            raise RuntimeError("the kemu broker did not start") from self._error
        # A restart comes back on the same port, so clients that knew the broker find it again.
        self._port = self.port

    async def _main(self, ready: threading.Event) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                await nursery.start(lambda task_status: serve(
                    self.core, self._host, self._port, coordinators=self.coordinators, hooks=self.hooks,
                    task_status=task_status))
                ready.set()

    def _stop(self) -> None:
        thread, token, scope = self._thread, self._token, self._scope
        if thread is None:
            return
        if token is not None and scope is not None and thread.is_alive():
            try:
                token.run_sync_soon(scope.cancel)
            except trio.RunFinishedError:
                pass
        thread.join(_START_TIMEOUT_S)
        if thread.is_alive():
            raise RuntimeError("the kemu broker did not stop")
        self._thread = self._token = self._scope = None

    def restart(self) -> None:
        """Stop cleanly and start again on the same data and port: what a broker restart looks like."""
        self._stop()
        self.core.close()
        self._start()

    def kill(self) -> None:
        """Stop without a clean shutdown, then start again on the same data and port: the broker recovers
        what a `kill -9` leaves (no final producer snapshots, logs not closed in order)."""
        self._stop()
        self._start()

    def close(self) -> None:
        self._stop()
        self.core.close()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ---- where clients connect ----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self.core.bound_port or self._port

    @property
    def bootstrap_servers(self) -> str:
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"{host}:{self.port}"

    # ---- the core, on its own thread ----------------------------------------------------------------------
    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the broker's Trio thread and return its result (or raise its exception)."""
        if self._token is None:
            raise RuntimeError("the kemu broker is not running")
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def advance(self, seconds: float) -> None:
        """Move the broker's clock and fire, before returning, everything that fell due."""
        self.clock.advance(seconds)
        self.call(self.core.housekeeping.run_due)

    # ---- arranging and asserting ----------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, config: Mapping[str, str] | None = None) -> None:
        wanted = NewTopic(name, partitions, 1, configs=list((config or {}).items()))
        [outcome] = self.call(lambda: create_topics(self.core, [wanted]))
        if outcome.error is not ErrorCode.NONE:
            raise BrokerError(outcome.error, outcome.message)

    def produce(self, topic: str, value: bytes | str | None, *, key: bytes | str | None = None,
                partition: int = 0, headers: Iterable[tuple[str, bytes | None]] = (),
                timestamp: int | None = None) -> int:
        """Append one record as a client's produce would; returns its offset."""
        def append() -> int:
            target = self._partition(topic, partition)
            record = NewRecord(value=_bytes(value), key=_bytes(key), headers=tuple(headers),
                               timestamp=self.clock.now_ms() if timestamp is None else timestamp)
            try:
                return target.append(build_batch([record])).base_offset
            except Exception as exc:
                raise BrokerError(getattr(exc, "code", ErrorCode.UNKNOWN_SERVER_ERROR), str(exc)) from exc

        return self.call(append)

    def records(self, topic: str, partition: int | None = None, *, read_committed: bool = False) -> list[Record]:
        """Every record a consumer reading from the log start would get (control records left out; with
        `read_committed`, only below the last stable offset and none of an aborted transaction)."""
        def read() -> list[Record]:
            found = self.core.topics.get(topic)
            if found is None:
                raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {topic}")
            indexes = range(len(found.partitions)) if partition is None else [partition]
            out: list[Record] = []
            for index in indexes:
                out.extend(_records_of(self._partition(topic, index), read_committed))
            return out

        return self.call(read)

    def _partition(self, topic: str, index: int) -> Partition:
        found = self.core.partition(topic, index)
        if found is None:
            raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no partition {topic}-{index}")
        return found


def _bytes(value: bytes | str | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def _records_of(partition: Partition, read_committed: bool) -> list[Record]:
    isolation = FetchIsolation.TXN_COMMITTED if read_committed else FetchIsolation.HIGH_WATERMARK
    bound = partition.bound(isolation)
    start = partition.log.log_start_offset
    aborted = partition.aborted_transactions(start, bound) if read_committed else []
    out: list[Record] = []
    for batch in partition.log.batches(start, bound):
        header = batch.header
        if header.is_control:
            continue
        if header.is_transactional and any(a.producer_id == header.producer_id
                                           and a.first_offset <= header.base_offset <= a.last_offset
                                           for a in aborted):
            continue
        for record in batch.records():
            if start <= record.offset < bound:
                out.append(Record(partition.topic, partition.index, record.offset, record.key, record.value,
                                  record.headers, record.timestamp))
    return out
