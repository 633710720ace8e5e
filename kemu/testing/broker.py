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

The broker runs as a task of a `BrokerLoop` (a Trio loop on a thread of its own): of the handle's own, for the
handle's life, or one it is given, which outlives it: the pytest plugin's `kemu_broker` brokers share one for
the session, so that each test's broker starts without a thread and a Trio loop of its own.

The calls of the handle are safe from an asyncio or Trio test function too: each hands its work to the
broker's loop and waits for it, which takes a few tens of microseconds (benchmarks/testing.py measures
it), so the test's own loop is held no longer than by any other short synchronous call.
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import tempfile
import threading
import uuid
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import trio
import trio.lowlevel

from kemu.admin.topics import NewTopic, create_topics, ensure_internal_topic
from kemu.broker import meta_properties
from kemu.broker.broker import BrokerCore
from kemu.broker.client_quotas import Alteration, Op, entity_of
from kemu.broker.cluster import UnknownNode
from kemu.broker.config import BrokerConfig
from kemu.broker.errors import ApiError
from kemu.broker.partition import Partition
from kemu.broker.topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC
from kemu.coordinators import Coordinators
from kemu.coordinators.crash_points import CrashPoint
from kemu.handlers import Handler
from kemu.handlers.context import RequestContext
from kemu.hashing import key_partition
from kemu.log import FetchIsolation
from kemu.log.log_cleaner import CleanResult
from kemu.server import serve
from kemu.server.hooks import Intervention, RequestHooks
from kemu.server.listener import ServedCore
from kemu.testing.clock import TestClock
from kemu.testing.data_root import data_root
from kemu.testing.faults import BrokerCrashed, Faults
from kemu.testing.options import broker_config, cluster_settings, unknown_settings
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode
from kemu.wire.records import NewRecord, build_batch

if TYPE_CHECKING:
    # The inspector (and the group core it reads) loads on the first inspect(): `kemu serve` starts without it.
    # The checker and the transcript load when first wanted: `kemu serve` with nothing to read them never does.
    from kemu.testing.checker import ExactlyOnceChecker
    from kemu.testing.inspector import Inspection
    from kemu.testing.transcript import Transcript

T = TypeVar("T")

log = logging.getLogger("kemu.testing")

_START_TIMEOUT_S = 30.0
_CALL_PATIENCE_S = 1.0  # how often a waiting call checks that the broker's thread is still there


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


class UnknownConfigWarning(UserWarning):
    """A setting given to a broker names no config Kafka (or kemu) knows: most often a misspelling."""


class Broker:
    """One in-process broker. `config` takes Kafka broker settings by their names (`{"num.partitions":
    "3"}`); `virtual_clock=True` starts `clock` frozen, so only `clock.advance()` moves broker time.
    `observe=False` leaves the transcript and the exactly-once checker unfed: for `kemu serve` with neither
    a control endpoint nor a transcript file, where nothing could read them and every request would pay.
    `loop`: a `BrokerLoop` to run in, shared with other handles, rather than a thread and loop of its own."""

    # A broker in a test's process leaves Python's collector alone (kemu.server.gc_policy); `kemu serve`'s
    # handle (kemu.testing.served) manages it, its process being the broker's own.
    _manage_gc = False

    def __init__(self, *, config: Mapping[str, str] | None = None, virtual_clock: bool = False,
                 data_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0,
                 node_id: int = 1, brokers: int = 1, racks: Sequence[str | None] = (),
                 observe: bool = True, loop: BrokerLoop | None = None) -> None:
        if brokers < 1:
            raise ValueError("brokers must be at least 1")
        self.clock = TestClock(frozen=virtual_clock, settle=self._settle)
        self._virtual_clock = virtual_clock
        # A cluster's internal topics are replicated as a Kafka cluster of that size has them.
        self._settings = cluster_settings(config or {}, brokers)
        self._host = host
        self._port = port
        self._listener_ports: dict[str, int] = {}  # each listener's bound port, kept across restarts
        self._node_id = node_id
        self._brokers = brokers
        self._node_ports: dict[int, int] = {}
        self._racks = tuple(racks)
        # Refuse a bad setting here, in the test's thread, with Kafka's message (and before making a directory);
        # a name Kafka does not know is warned about, as Kafka logs it, so a misspelt setting is not silent.
        for name in unknown_settings(self._settings):
            warnings.warn(UnknownConfigWarning(f"The configuration '{name}' was supplied but isn't a known config."),
                          stacklevel=2)
        self._own_dir = data_dir is None
        self.data_dir = Path(tempfile.mkdtemp(prefix="kemu-test-", dir=data_root()) if data_dir is None else data_dir)
        # Without a shared loop, one of the handle's own for its life: a restart or kill only restarts the broker's
        # task in it.
        self._own_loop = loop is None
        self._loop = BrokerLoop(f"kemu-broker-{node_id}") if loop is None else loop
        self._thread: threading.Thread | None = None  # the thread the broker's loop runs on
        self._done = threading.Event()  # set once the broker's loop (or its task, in a shared loop) has ended
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._error: BaseException | None = None
        self._served: ServedCore | None = None
        self._nursery: trio.Nursery | None = None
        self._janitor = _Janitor(f"kemu-janitor-{node_id}")
        self._spare: Future[_Spare] | None = None
        # One set of hooks for the handle's life: what a test registers survives restart() and kill().
        self.hooks = RequestHooks()
        self.faults = Faults()
        self._transcript: Transcript | None = None
        self._checker: ExactlyOnceChecker | None = None
        self._crashed = False
        self._crash: BrokerCrashed | None = None
        self.hooks.intercept(self._intercept)
        if observe:
            self.hooks.observe(self.transcript.observe)
            # One checker for the handle's life: a violation seen before a restart is still reported after.
            self.hooks.observe(self.checker.observe)
        self.core: BrokerCore
        self._coordinators: Coordinators
        try:
            self._start()
        except BaseException:
            if self._own_loop:
                self._loop.close()
            raise

    # ---- life ----------------------------------------------------------------------------------------
    def _start(self) -> None:
        config = self._config(self.data_dir)
        cluster_id = meta_properties.load_or_format(self.data_dir, config.node_id, None)
        self.core = BrokerCore(config, self.clock, cluster_id)
        # Every broker of a cluster comes back on its own port too, not on the ones after the first's.
        for node in self.core.cluster:
            node.port = self._node_ports.get(node.node_id)
        if self._checker is not None:
            self._checker.attach(self.core)
        self._coordinators = Coordinators(self.core, crash_hook=self._crash_point)
        self._served = ServedCore(self.core, self._coordinators)
        ready = threading.Event()
        self._done = done = threading.Event()
        self._error = None
        self._crashed = False

        async def hosted() -> None:
            try:
                await self._main(ready)
            except BaseException as exc:  # reported to the test's thread; the loop serves on
                self._error = exc
            finally:
                done.set()
                ready.set()

        self._thread = self._loop.start_soon(hosted)
        if not ready.wait(_START_TIMEOUT_S) or self._token is None:
            raise RuntimeError("the kemu broker did not start") from self._error
        # A restart comes back on the same ports, so clients that knew the broker find it again.
        self._port = self.port
        self._node_ports = {node.node_id: node.port for node in self.core.cluster if node.port}
        self._listener_ports = {name: port for (node, name), port in self.core.bound_ports.items()
                                if node == self._node_id}

    async def _main(self, ready: threading.Event) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                served = self._served
                assert served is not None
                # Served in this task rather than one nursery.start would make: its start and cancellation were
                # a share of each test broker's cost. Listening, it sets `ready`.
                await serve(served, self._host, self._port, hooks=self.hooks, listener_ports=self._listener_ports,
                            manage_gc=self._manage_gc, task_status=_Listening(ready))

    def _config(self, data_dir: Path) -> BrokerConfig:
        return broker_config(self._settings, data_dir, node_id=self._node_id, host=self._host, port=self._port,
                             brokers=self._brokers, racks=self._racks)

    def _stop(self) -> None:
        thread, token, scope, done = self._thread, self._token, self._scope, self._done
        if thread is None:
            return
        if token is not None and scope is not None and not done.is_set():
            try:
                token.run_sync_soon(scope.cancel)
            except trio.RunFinishedError:
                pass
        if not done.wait(_START_TIMEOUT_S):  # the loop's thread serves on
            raise RuntimeError("the kemu broker did not stop")
        self._thread = self._token = self._scope = self._nursery = None

    def restart(self) -> None:
        """Stop cleanly and start again on the same data and port: what a broker restart looks like.
        After a crash point there is nothing left to stop cleanly: the core is left as the crash left it."""
        self._stop()
        if not self._crashed:
            self.core.close()
        else:
            self.core.abandon()
        self._start()
        self._recovered()

    def kill(self) -> None:
        """Stop without a clean shutdown, then start again on the same data and port: the broker recovers
        what a `kill -9` leaves (no final producer snapshots, logs not closed in order)."""
        self._stop()
        self.core.abandon()
        self._start()
        self._recovered()

    def _recovered(self) -> None:
        """Run what the recovery of a restart or kill queued (the markers of a transaction left prepared) before
        it returns, as the housekeeper's first round does a moment later anyway: a test that reads the broker
        right after finds it recovered, however soon the housekeeper's task gets to run."""
        try:
            self._settle()
        except BrokerCrashed:
            pass  # a crash point reached again: the broker is stopped dead, as `crashed` says

    def reset(self) -> None:
        """Empty the broker for the next test, on the same port (a session's clients keep their bootstrap
        address): no topics, groups, transactions, producer state or dynamic configs, a new `clock` (on
        real time unless the broker was made with `virtual_clock`), the same settings. Connections to the
        broker as it was are closed, so a previous test's clients never reach the empty one. Takes well
        under a millisecond: the empty core is made ahead of time on a thread of the handle's own, which
        also closes and deletes the old one's files, off the test's path."""
        spare = self._take_spare()
        old, old_dir, own_dir = self.core, self.data_dir, self._own_dir
        # A subclass may advertise another endpoint than it listens on (kemu serve); the new core must too.
        spare.core.config.advertised_host = old.config.advertised_host
        spare.core.config.advertised_port = old.config.advertised_port
        if self._virtual_clock:
            spare.clock.freeze()  # made running, so that virtual time starts now rather than when it was made

        def swap() -> None:
            assert self._served is not None and self._nursery is not None
            self.core, self._coordinators, self.clock = spare.core, spare.coordinators, spare.clock
            if self._checker is not None:
                self._checker.clear()
                self._checker.attach(spare.core)
            ended = self._served.swap(spare.core, spare.coordinators)
            self._nursery.start_soon(self._retire, old, ended, old_dir, own_dir)

        try:
            self.call(swap)
        except BaseException:
            self._janitor.run(lambda: _discard(spare.core, spare.data_dir, own=True))
            raise
        self.data_dir, self._own_dir = spare.data_dir, True
        self._spare = self._janitor.run(self._make_spare)

    def _make_spare(self) -> _Spare:
        """An empty core, not yet served. Nothing else holds it, so any thread may make it."""
        data_dir = Path(tempfile.mkdtemp(prefix="kemu-test-", dir=data_root()))
        config = self._config(data_dir)
        cluster_id = meta_properties.load_or_format(data_dir, config.node_id, self.core.cluster_id)
        clock = TestClock(settle=self._settle)
        core = BrokerCore(config, clock, cluster_id)
        coordinators = Coordinators(core, crash_hook=self._crash_point)
        # Otherwise made on the broker's thread by the first request (or handle call) that needs them.
        _ = coordinators.groups, coordinators.txn
        return _Spare(core, coordinators, clock, data_dir)

    def _take_spare(self) -> _Spare:
        spare, self._spare = self._spare, None
        if spare is not None and spare.done() and spare.exception() is None:
            return spare.result()
        if spare is not None:
            # Still being made (resets back to back), or failed: making one here is quicker than waiting.
            self._janitor.run(lambda: _forget_spare(spare))
        return self._make_spare()

    async def _retire(self, old: BrokerCore, ended: trio.Event, directory: Path, own: bool) -> None:
        try:
            await ended.wait()
        finally:
            # Also when the broker stops first: its connections are going too, and the files must go.
            self._janitor.run(lambda: _discard(old, directory, own))

    def close(self) -> None:
        try:
            self._stop()
        finally:
            if self._own_loop:
                self._loop.close()
        if self._own_dir:
            # Nothing reads the handle's own directory again: emptied before the core closes, so that its clean
            # shutdown writes no final producer snapshots only for them to be deleted at once.
            _discard(self.core, self.data_dir, own=True)
        else:
            self.core.close()
        spare, self._spare = self._spare, None
        if spare is not None:
            self._janitor.run(lambda: _forget_spare(spare))
        self._janitor.close()

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ---- faults -------------------------------------------------------------------------------------------
    @property
    def coordinators(self) -> Coordinators:
        coordinators = self._coordinators
        if not coordinators.txn_made and self._token is not None and not self._done.is_set() \
                and threading.current_thread() is not self._thread:
            # Made when first needed, which schedules its timers: on the broker's thread. A test that reaches
            # for it from its own thread finds it made, as it did when every start made it.
            self.call(lambda: coordinators.txn)
        return coordinators

    @property
    def crashed(self) -> bool:
        """True once a crash fault has stopped the broker — its thread gone, so the test may read the core
        as the crash left it — until restart() or kill() brings it back."""
        return self._crashed and (self._thread is None or self._done.is_set())

    def _intercept(self, ctx: RequestContext, handler: Handler, request: Request) -> Intervention | None:
        if self._crashed:
            # Stopping dead: a request that arrives while the loop winds down must not reach the core.
            return Intervention(drop_before=True)
        return self.faults.intercept(ctx, handler, request)

    def _crash_point(self, point: CrashPoint, transactional_id: str) -> None:
        if self.faults.crash_at(point, transactional_id) is None:
            return
        log.warning("crash point %s reached for transactional id %r: stopping the broker dead", point.value,
                    transactional_id)
        self._crashed = True
        self._crash = BrokerCrashed(point, transactional_id)
        if self._scope is not None:
            self._scope.cancel()
        raise self._crash

    @property
    def transcript(self) -> Transcript:
        """Every exchange the broker had (kemu.testing.transcript); empty unless the handle observes."""
        if self._transcript is None:
            from kemu.testing.transcript import Transcript

            self._transcript = Transcript(topic_names=self._topic_name)
        return self._transcript

    @transcript.setter
    def transcript(self, transcript: Transcript) -> None:
        # What a test may put in its place (the plugin's report reads whatever is there).
        self._transcript = transcript

    @property
    def checker(self) -> ExactlyOnceChecker:
        """The exactly-once checker over the broker's traffic and logs (kemu.testing.checker)."""
        if self._checker is None:
            from kemu.testing.checker import ExactlyOnceChecker

            self._checker = ExactlyOnceChecker()
            if hasattr(self, "core"):
                self._checker.attach(self.core)
        return self._checker

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        found = self.core.topics.by_id(topic_id)
        return None if found is None else found.name

    # ---- where clients connect ----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self.core.bound_port or self._port

    @property
    def bootstrap_servers(self) -> str:
        """Where clients start: the first broker, then the others of a cluster (a client tries them in turn);
        with `listeners` set, the first listener's address of each."""
        if "listeners" in self.core.config.properties:
            return ",".join(self.bootstrap(node_id=node.node_id) for node in self.core.cluster)
        host = f"[{self._host}]" if ":" in self._host else self._host
        ports = [self.port] + [node.port or 0 for node in self.core.cluster if node.node_id != self._node_id]
        return ",".join(f"{host}:{port}" for port in ports)

    # ---- a cluster's brokers going away and coming back, leaders moving ----------------------------------
    def stop_broker(self, node_id: int) -> None:
        """Stop one broker of the cluster: its listener closes and its connections are cut, its leaderships
        and coordinators move to live in-sync replicas with bumped leader epochs, the ISRs shrink."""
        def stop() -> None:
            assert self._served is not None
            if not self.core.cluster.node(node_id).alive:
                raise ApiError(ErrorCode.INVALID_REQUEST, f"Broker {node_id} is stopped already.")
            self.core.stop_node(node_id)
            self._served.nodes.stop(node_id)

        self._checked(stop)

    def start_broker(self, node_id: int) -> None:
        """Start a stopped broker again on its port: it rejoins the ISRs (leadership stays where it moved)."""
        def start() -> None:
            assert self._served is not None
            self.core.start_node(node_id)
            self._served.nodes.start(node_id)

        self._checked(start)

    def move_leader(self, topic: str, partition: int, node_id: int) -> None:
        """Make `node_id` (a live in-sync replica) the partition's leader, with the next leader epoch."""
        self._checked(lambda: self.core.elect_leader(self._partition_any(topic, partition), node_id))

    def move_coordinator(self, kind: str, key: str, node_id: int) -> None:
        """Move the coordinator of a group (`kind` "group") or a transactional id ("transaction") to
        `node_id`: the leadership of its internal-topic partition moves, as a coordinator does in Kafka."""
        self._checked(lambda: self.core.elect_leader(self._coordinator_partition(kind, key), node_id))

    def coordinator(self, kind: str, key: str) -> int:
        """The node that coordinates the group or transactional id `key` (its internal partition's leader)."""
        return self.call(lambda: self._coordinator_partition(kind, key).leader_id)

    def _coordinator_partition(self, kind: str, key: str) -> Partition:
        if kind == "group":
            self.coordinators.groups.ensure_offsets_topic()
            return self._partition_any(GROUP_METADATA_TOPIC, self.coordinators.groups.partition_of(key))
        if kind == "transaction":
            ensure_internal_topic(self.core, TRANSACTION_STATE_TOPIC)
            return self._partition_any(TRANSACTION_STATE_TOPIC, self.coordinators.txn.partition_of(key))
        raise ValueError(f"kind is 'group' or 'transaction', not {kind!r}")

    def leader(self, topic: str, partition: int) -> int:
        return self.call(lambda: self._partition_any(topic, partition).leader_id)

    def _checked(self, fn: Callable[[], None]) -> None:
        try:
            self.call(fn)
        except ApiError as exc:
            raise BrokerError(exc.code, exc.message) from None
        except UnknownNode as exc:
            raise BrokerError(ErrorCode.BROKER_NOT_AVAILABLE, str(exc)) from None

    def _partition_any(self, topic: str, index: int) -> Partition:
        found = self.core.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no partition {topic}-{index}")
        return found.partitions[index]

    def bootstrap(self, listener: str | None = None, *, node_id: int | None = None) -> str:
        """host:port a client of `listener` (by name, e.g. "SASL_SSL"; default the first) connects to, on
        the first broker or on `node_id`."""
        host, port = self.core.advertised_endpoint(node_id, None if listener is None else listener.upper())
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    # ---- the core, on its own thread ----------------------------------------------------------------------
    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the broker's Trio thread and return its result (or raise its exception)."""
        token, thread, done = self._token, self._thread, self._done
        if token is None or thread is None:
            raise RuntimeError("the kemu broker is not running")
        if done.is_set():
            # Its loop ended (a crash fault), or in a shared loop its task did, while the loop serves others.
            raise RuntimeError("the kemu broker is not running") from self._error
        if threading.current_thread() is thread:
            return fn(*args)  # already on the broker's loop (a hook, a fault script)
        # A handoff that works from any thread, including one running a Trio loop of its own (a trio test),
        # where trio.from_thread refuses.
        answer: Future[T] = Future()

        def run() -> None:
            if done.is_set():  # stopped since: in a shared loop, the callback still runs
                stopped = RuntimeError("the kemu broker is not running")
                stopped.__cause__ = self._error
                answer.set_exception(stopped)
                return
            try:
                answer.set_result(fn(*args))
            except BaseException as exc:  # raised in the caller's thread instead of crashing the loop
                answer.set_exception(exc)

        try:
            token.run_sync_soon(run)
        except trio.RunFinishedError:
            raise RuntimeError("the kemu broker is not running") from self._error
        while True:
            try:
                return answer.result(timeout=_CALL_PATIENCE_S)
            except TimeoutError:
                if done.is_set() and not answer.done():
                    raise RuntimeError("the kemu broker stopped") from self._error

    def inspect(self) -> Inspection:
        """The broker's state and the exactly-once checker's violations, as of now (kemu.testing.inspector)."""
        from kemu.testing.inspector import inspect

        return self.call(lambda: inspect(self.core, self.coordinators))

    def advance(self, seconds: float) -> None:
        """Move the broker's clock and fire, before returning, everything that fell due (`clock.advance`).
        Raises BrokerCrashed when what fell due ran into a crash point."""
        crashed_before = self._crashed
        self.clock.advance(seconds)
        # The housekeeper may have fired it first, woken by the clock, rather than this call's settling.
        if self._crashed and not crashed_before and self._crash is not None:
            raise self._crash

    def _settle(self) -> None:
        if self._token is not None and not self._crashed:
            self.call(self.core.housekeeping.run_due)

    # ---- arranging and asserting ----------------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int | None = None, config: Mapping[str, str] | None = None, *,
                     replication_factor: int | None = None) -> None:
        """Create a topic as CreateTopics does; without `partitions` or `replication_factor`, the broker's
        `num.partitions` and `default.replication.factor` (as a client that sends -1 gets)."""
        wanted = NewTopic(name, -1 if partitions is None else partitions,
                          -1 if replication_factor is None else replication_factor,
                          configs=list((config or {}).items()))
        [outcome] = self.call(lambda: create_topics(self.core, [wanted], describe=False))
        if outcome.error is not ErrorCode.NONE:
            raise BrokerError(outcome.error, outcome.message)

    def produce(self, topic: str, value: bytes | str | None, *, key: bytes | str | None = None,
                partition: int | None = None, headers: Iterable[tuple[str, bytes | None]] = (),
                timestamp: int | None = None) -> int:
        """Append one record as a client's produce would; returns its offset. Without `partition`, a keyed
        record goes where a Kafka producer's default partitioner sends it (murmur2 of the key, modulo the
        topic's partitions), a record without a key to partition 0."""
        def append() -> int:
            encoded_key = _bytes(key)
            chosen = partition
            if chosen is None:
                chosen = 0 if encoded_key is None else key_partition(encoded_key, self._partition_count(topic))
            target = self._partition(topic, chosen)
            record = NewRecord(value=_bytes(value), key=encoded_key, headers=tuple(headers),
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
            # A commit is answered before its markers are written, as Kafka answers EndTxn; what the broker
            # has already queued (those markers) is done first, so a test reading right after a commit sees it.
            self.core.housekeeping.run_due()
            found = self.core.topics.get(topic)
            if found is None:
                raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {topic}")
            indexes = range(len(found.partitions)) if partition is None else [partition]
            out: list[Record] = []
            for index in indexes:
                out.extend(_records_of(self._partition(topic, index), read_committed))
            return out

        return self.call(read)

    def set_client_quota(self, entity: Mapping[str, str | None], **quotas: float | None) -> None:
        """Set client quotas of an entity as AlterClientQuotas does, e.g. `set_client_quota({"client-id": "app"},
        producer_byte_rate=1024)` throttles that client's produce to 1 KiB/s; a None value removes the key, a
        None name is the default entity. Raises BrokerError with Kafka's refusal (INVALID_REQUEST)."""
        def alter() -> None:
            [(_, code, message)] = self.core.client_quotas.alter(
                [Alteration(entity_of(entity), [Op(key, value) for key, value in quotas.items()])])
            self.core.client_quotas_changed()
            if code is not ErrorCode.NONE:
                raise BrokerError(code, message)

        self.call(alter)

    def clean_logs(self, topic: str | None = None) -> list[CleanResult]:
        """Run the log cleaner now over every compacted log (of `topic`) that has anything cleanable, whatever
        its `min.cleanable.dirty.ratio`; what it may not clean (past the last stable offset, the active
        segment, `min.compaction.lag.ms`) stays. Returns one result per log cleaned."""
        return self.call(lambda: self.core.clean_logs(topic))

    def summary(self) -> str:
        """What the broker holds, in a few lines: where it listens, its clock, and each topic's partitions
        with their end offsets (and last stable offsets, where an open transaction holds readers back).
        The pytest plugin adds it to a failed test's report."""
        def collect() -> list[str]:
            lines: list[str] = []
            for topic in sorted(self.core.topics, key=lambda t: (t.is_internal, t.name)):
                opened = [p for p in topic.partitions if p.is_open]
                ends = [p.log_end_offset for p in opened]
                if topic.is_internal:
                    lines.append(f"  {topic.name}: {len(topic.partitions)} partitions, {sum(ends)} records in all")
                    continue
                line = f"  {topic.name}: {len(topic.partitions)} partition{'s' * (len(topic.partitions) != 1)}, " \
                       f"end offsets {', '.join(map(str, ends))}"
                stable = [p.last_stable_offset for p in opened]
                if stable != [p.high_watermark for p in opened]:
                    line += f" (last stable {', '.join(map(str, stable))})"
                lines.append(line)
            return lines

        topics = self.call(collect)
        when = datetime.fromtimestamp(self.clock.now_ms() / 1000, UTC).isoformat(timespec="milliseconds")
        head = f"kemu broker at {self.bootstrap_servers}, data in {self.data_dir}, " \
               f"clock {'frozen' if self.clock.frozen else 'running'} at {when}"
        return "\n".join([head, f"topics ({len(topics)}):" if topics else "no topics", *topics])

    def _partition(self, topic: str, index: int) -> Partition:
        found = self.core.partition(topic, index)
        if found is None:
            raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no partition {topic}-{index}")
        return found

    def _partition_count(self, topic: str) -> int:
        found = self.core.topics.get(topic)
        if found is None:
            raise BrokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {topic}")
        return len(found.partitions)


def _bytes(value: bytes | str | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def _records_of(partition: Partition, read_committed: bool) -> list[Record]:
    isolation = FetchIsolation.TXN_COMMITTED if read_committed else FetchIsolation.HIGH_WATERMARK
    bound = partition.bound(isolation)
    start = partition.log_start_offset
    aborted = partition.aborted_transactions(start, bound) if read_committed else []
    out: list[Record] = []
    for batch in partition.batches(start, bound):
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


class _Listening:
    """The task status `serve` reports to once it listens, when it runs in the handle's own task."""

    def __init__(self, ready: threading.Event) -> None:
        self._ready = ready

    def started(self, value: object = None) -> None:
        self._ready.set()


class BrokerLoop:
    """A Trio loop on a thread of its own that runs brokers as tasks (`Broker(loop=...)`), started with the
    first: what the pytest plugin's per-test brokers share over a session. Starting a thread and a Trio loop
    took ~0.6 ms of each test's broker; every broker in the loop still has a core, data directory, listener,
    connections and housekeeper of its own, all gone when its handle closes. Only the thread and the loop
    outlive it, until `close()`. `clock`: the loop's own (e.g. trio.testing.MockClock), which the Trio waits of
    its brokers (a Fetch's max_wait_ms) run on; by default the real one."""

    def __init__(self, name: str = "kemu-brokers", clock: trio.abc.Clock | None = None) -> None:
        self._name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._error: BaseException | None = None

    def start_soon(self, task: Callable[[], Awaitable[None]]) -> threading.Thread:
        """Run `task` in the loop (starting the loop first if needed); returns the loop's thread. `task` must
        not raise: whatever escaped it would end every other task of the loop."""
        with self._lock:
            thread, token, nursery = self._thread, self._token, self._nursery
            if thread is None or not thread.is_alive() or token is None or nursery is None:
                thread, token, nursery = self._start()
            token.run_sync_soon(nursery.start_soon, task)
            return thread

    def _start(self) -> tuple[threading.Thread, trio.lowlevel.TrioToken, trio.Nursery]:
        ready = threading.Event()
        self._token = self._nursery = self._error = None

        def run() -> None:
            try:
                trio.run(self._host, ready, clock=self._clock)
            except BaseException as exc:
                self._error = exc
            finally:
                self._token = self._nursery = None
                ready.set()

        thread = threading.Thread(target=run, name=self._name, daemon=True)
        thread.start()
        ready.wait(_START_TIMEOUT_S)
        token, nursery = self._token, self._nursery
        if token is None or nursery is None:
            raise RuntimeError("the kemu broker loop did not start") from self._error
        self._thread = thread
        return thread, token, nursery

    async def _host(self, ready: threading.Event) -> None:
        async with trio.open_nursery() as nursery:
            self._token, self._nursery = trio.lowlevel.current_trio_token(), nursery
            ready.set()
            await trio.sleep_forever()

    def close(self) -> None:
        """End the loop and its thread; the brokers in it are stopped dead (their handles should be closed
        first)."""
        with self._lock:
            thread, token, nursery = self._thread, self._token, self._nursery
            self._thread = None
        if thread is None:
            return
        if token is not None and nursery is not None:
            try:
                token.run_sync_soon(nursery.cancel_scope.cancel)
            except trio.RunFinishedError:
                pass
        thread.join(_START_TIMEOUT_S)
        if thread.is_alive():
            raise RuntimeError("the kemu broker loop did not stop")

    def __enter__(self) -> BrokerLoop:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class _Janitor:
    """A thread of the handle's own for the file work a reset leaves behind, started on first use."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, job: Callable[[], T]) -> Future[T]:
        done: Future[T] = Future()

        def step() -> None:
            try:
                done.set_result(job())
            except BaseException as exc:
                done.set_exception(exc)

        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()
            self._jobs.put(step)
        return done

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()

    def close(self) -> None:
        """Finish the jobs queued so far and end the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._jobs.put(None)
        if thread is not None:
            thread.join(_START_TIMEOUT_S)


@dataclass(frozen=True, slots=True)
class _Spare:
    core: BrokerCore
    coordinators: Coordinators
    clock: TestClock
    data_dir: Path


def _forget_spare(spare: Future[_Spare]) -> None:
    if spare.exception() is None:
        made = spare.result()
        _discard(made.core, made.data_dir, own=True)


def _discard(core: BrokerCore, directory: Path, own: bool) -> None:
    """Close a retired core's files and delete its data. Deleted first, so that closing finds no directory
    to write its final producer snapshots into: they would be deleted at once. The handle's own directory
    goes whole, at once; the caller's stays, empty."""
    if own:
        shutil.rmtree(directory, ignore_errors=True)
    else:
        _delete_contents(directory)
    try:
        core.close()
    except OSError:
        pass  # a file it meant to write on the way out had nowhere to go: nothing is kept anyway
    if not own:
        _delete_contents(directory)  # whatever closing wrote


def _delete_contents(directory: Path) -> None:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
