"""A streaming query of Spark's own Kafka source in a process of its own, killed with SIGKILL in the middle of a
micro-batch while a producer keeps writing, and restarted on its checkpoint.

Run as `python -m compat_tests.spark.killed_query CONFIG GENERATION`, this module is the child: a local
SparkSession of its own (kemu.spark.session.local_session, Spark's connector from the KEMU_SPARK_JARS it
inherits) running three queries over the same input, read_committed through `format("kafka")` with a small
`maxOffsetsPerTrigger` and a processingTime trigger, each to its own sink: Spark's FILE sink (parquet), Spark's
Kafka sink and kemu's exactly-once sink (`format("kemu-kafka")`). Each record's value is prefixed, after a
`java_method` sleep in the JVM (no Python worker): a few milliseconds a row, and, in the first generation only,
one record of the input (`STALL`, on partition 0) that never finishes. Every query therefore stops in the
middle of the batch that holds it, with the rest of that batch written: partition 1's task done (a parquet file
the `_spark_metadata` log never names, a kemu-sink transaction committed, Kafka-sink records), partition 0's
row before the stalled one written by Spark's Kafka sink (kemu's sink gets its rows in Arrow batches, which
the stalled row holds back). The child runs
until its stop file appears, then stops its queries, reads the file sink's folder with Spark
(`spark.read.parquet`, which takes only the files of the `_spark_metadata` log) into a JSON file and ends.

`run_killed_query()` is the parent: it produces plain records and committed and aborted transactions on a fixed
schedule, starts the child, waits until every query is stalled with the rest of its batch written, SIGKILLs
every process of the child's session (the Python driver and its JVM, one process group; Spark's Python workers,
groups of their own), keeps producing, restarts
the child on the same checkpoints (the batch runs again, this time to its end), finishes producing, waits until
every query has committed a batch ending at the input's end, stops the child and collects what each sink holds
(`KilledRun`).
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SINKS = ("file", "kafka", "kemu-kafka")
PARTITIONS = 2
PREFIX = b"seen:"
TIMEOUT_S = 120.0
CLIENT_TIMEOUT_S = 60.0
RECORDS_PER_STEP = 4
# The schedule, in steps of RECORDS_PER_STEP records each (plain, committed, aborted in turn): the first ones are
# there before the query starts, the rest are written while it runs, while it is dead and after its restart.
PREFILL_STEPS = 10
# A committed step: its record 2 (partition 0, after record 0) is the one the first generation stalls on. Its
# records turn visible to a read_committed reader on both partitions at once, when its markers are written; a
# plain step's two partitions were two Produce requests, and a trigger falling between them planned a batch
# of partition 0's records alone.
STALL_STEP = 22
KILL_GATE = 25  # steps from here on wait for the kill
RESTART_GATE = 40  # and from here on for the restarted query
TOTAL_STEPS = 55
STEP_PACE_S = 0.25
STEP_KINDS = ("plain", "committed", "aborted")
STALL_MS = 600_000


def step_values(number: int) -> list[bytes]:
    kind = STEP_KINDS[number % len(STEP_KINDS)]
    return [b"%s-%03d-%d" % (kind.encode(), number, n) for n in range(RECORDS_PER_STEP)]


STALL = step_values(STALL_STEP)[2]


@dataclass(frozen=True)
class QueryConfig:
    """What the child needs, as JSON in `work/config.json`."""

    bootstrap: str
    input_topic: str
    kafka_output: str
    kemu_output: str
    work: str
    per_trigger: int = 30
    trigger: str = "200 milliseconds"
    row_delay_ms: int = 20

    def checkpoint(self, sink: str) -> Path:
        return Path(self.work) / sink / "checkpoint"

    @property
    def file_output(self) -> Path:
        return Path(self.work) / "file" / "output"

    def started_file(self, generation: int) -> Path:
        return Path(self.work) / f"started-{generation}.json"

    def stop_file(self, generation: int) -> Path:
        return Path(self.work) / f"stop-{generation}"

    def rows_file(self, generation: int) -> Path:
        return Path(self.work) / f"file-rows-{generation}.json"

    def log_file(self, generation: int) -> Path:
        return Path(self.work) / f"child-{generation}.log"

    def save(self) -> Path:
        path = Path(self.work) / "config.json"
        path.write_text(json.dumps(self.__dict__), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: Path) -> QueryConfig:
        return cls(**json.loads(path.read_text(encoding="utf-8")))


# ---- the child ---------------------------------------------------------------------------------------------


def _start_query(spark: Any, config: QueryConfig, sink: str, generation: int) -> Any:
    from pyspark.sql import functions as F

    from kemu.spark import spark_kafka_options

    stream = (spark.readStream.format("kafka").options(**spark_kafka_options(config.bootstrap))
              .option("subscribe", config.input_topic).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", str(config.per_trigger)).load())
    # java_method runs in the JVM for each row and returns "null" for a void method: never null, so every row
    # passes, a few milliseconds later (the stalled one, in the first generation, once it is killed).
    stall_ms = STALL_MS if generation == 1 else config.row_delay_ms
    slow = F.expr(f"java_method('java.lang.Thread', 'sleep', cast(CASE WHEN value = X'{STALL.hex()}' "
                  f"THEN {stall_ms} ELSE {config.row_delay_ms} END as bigint))")
    rows = stream.select("key", F.when(slow.isNotNull(), F.concat(F.lit(PREFIX), F.col("value"))).alias("value"))
    writer = (rows.writeStream.queryName(sink.replace("-", "_"))
              .option("checkpointLocation", str(config.checkpoint(sink)))
              .trigger(processingTime=config.trigger))
    if sink == "file":
        writer = writer.format("parquet").option("path", str(config.file_output))
    elif sink == "kafka":
        writer = (writer.format("kafka").option("kafka.bootstrap.servers", config.bootstrap)
                  .option("topic", config.kafka_output))
    else:
        writer = writer.format("kemu-kafka").options(**spark_kafka_options(config.bootstrap)) \
            .option("topic", config.kemu_output)
    return writer.start()


def child_main(config_path: Path, generation: int) -> int:
    from kemu.spark.session import local_session

    config = QueryConfig.load(config_path)
    # Six task slots: the two tasks of each query's batch run side by side (they mostly sleep).
    spark, connector = local_session(f"killed-query-{generation}", cores=2 * len(SINKS))
    if not connector.available:
        print(connector.reason, file=sys.stderr)
        return 3
    queries = {sink: _start_query(spark, config, sink, generation) for sink in SINKS}
    config.started_file(generation).write_text(
        json.dumps({"pid": os.getpid(), "queries": {sink: query.id for sink, query in queries.items()}}),
        encoding="utf-8")
    print(f"generation {generation}: queries started", flush=True)
    while not config.stop_file(generation).exists():
        for sink, query in queries.items():
            if not query.isActive:
                raise RuntimeError(f"the {sink} query ended by itself: {query.exception()}")
        time.sleep(0.2)
    for query in queries.values():
        query.stop()
    rows = spark.read.parquet(str(config.file_output)).select("key", "value").collect()
    config.rows_file(generation).write_text(
        json.dumps([[bytes(row.key).hex(), bytes(row.value).hex()] for row in rows]), encoding="utf-8")
    spark.stop()
    print(f"generation {generation}: stopped with {len(rows)} rows in the file sink", flush=True)
    return 0


# ---- the parent: the child process -------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """A process of the child's session."""

    pid: int
    group: int
    name: str


def session_members(sid: int) -> list[Member]:
    """Every live process of the session `sid` (from /proc): the child, the JVM it started, and Spark's Python
    workers, which the JVM starts as daemons in process groups of their own (pyspark.daemon), in the session."""
    found: list[Member] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, _, rest = stat.partition("(")[2].rpartition(")")
        # state ppid pgrp session ...; a zombie has let go of everything already.
        fields = rest.split()
        if len(fields) > 3 and int(fields[3]) == sid and fields[0] != "Z":
            found.append(Member(int(entry.name), int(fields[2]), name))
    return found


class Child:
    """One generation of the child, in a session of its own (`start_new_session`): the JVM it starts is in its
    process group, Spark's Python workers in groups of their own, all of them in its session."""

    def __init__(self, config: QueryConfig, config_path: Path, generation: int) -> None:
        self.config, self.config_path, self.generation = config, config_path, generation
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               "PYTHONUNBUFFERED": "1"}
        with self.config.log_file(self.generation).open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "compat_tests.spark.killed_query", str(self.config_path),
                 str(self.generation)],
                cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)

    def log_tail(self, lines: int = 60) -> str:
        path = self.config.log_file(self.generation)
        text = path.read_text(errors="replace") if path.is_file() else ""
        return f"--- {path} ---\n" + "\n".join(text.splitlines()[-lines:])

    def _require(self) -> subprocess.Popen[bytes]:
        assert self.process is not None, "the child was never started"
        return self.process

    def check_alive(self) -> None:
        code = self._require().poll()
        if code is not None:
            raise AssertionError(f"the child (generation {self.generation}) exited with {code}\n{self.log_tail()}")

    def wait_started(self) -> dict[str, str]:
        def started() -> dict[str, str] | None:
            self.check_alive()
            path = self.config.started_file(self.generation)
            return json.loads(path.read_text())["queries"] if path.is_file() else None

        return wait_until(started, f"the child's queries to start (generation {self.generation})", self)

    def kill(self) -> list[Member]:
        """SIGKILL to every process group of the child's session, its own first (the driver and the JVM, at
        once), then the Python workers'; returns what was there. Fails unless all of it is gone afterwards."""
        process = self._require()
        members = session_members(process.pid)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(CLIENT_TIMEOUT_S)

        def gone() -> bool:
            for group in {member.group for member in session_members(process.pid)}:
                try:
                    os.killpg(group, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            return not session_members(process.pid)

        wait_until(gone, "every process of the killed child's session to be gone", self)
        return members

    def stop(self) -> int:
        """Ask the child to stop its queries and end; its exit code."""
        process = self._require()
        self.config.stop_file(self.generation).touch()
        try:
            return process.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise AssertionError(f"the child did not stop within {TIMEOUT_S:.0f} s\n{self.log_tail()}") from None

    def ensure_gone(self) -> None:
        """After a failure: nothing of the child left running."""
        if self.process is not None and (self.process.poll() is None or session_members(self.process.pid)):
            self.kill()


def wait_until(condition: Callable[[], Any], what: str, child: Child | None = None, timeout: float = TIMEOUT_S,
          pause: float = 0.05, waiting: list[str] | None = None) -> Any:
    """compat_tests.polling.wait_for, checking every `pause` seconds at most; its failure says what `waiting`
    last held and ends with the tail of the child's log."""
    from compat_tests.polling import wait_for

    def throttled() -> Any:
        time.sleep(max(0.0, pause - 0.05))
        return condition()

    try:
        return wait_for(throttled if pause > 0.05 else condition, what=what, timeout=timeout)
    except AssertionError as failure:
        seen = f" ({'; '.join(waiting)})" if waiting else ""
        tail = f"\n{child.log_tail()}" if child is not None else ""
        raise AssertionError(f"{failure}{seen}{tail}") from None


# ---- the parent: checkpoints -------------------------------------------------------------------------------


def batch_ids(checkpoint: Path, log: str) -> list[int]:
    """The batches of a checkpoint's `offsets` (planned) or `commits` (done) log: Spark writes each file under a
    temporary name and renames it, so a name of digits is a whole entry."""
    folder = checkpoint / log
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit()) if folder.is_dir() else []


def batch_end(checkpoint: Path, batch: int, topic: str) -> dict[int, int]:
    """The input offsets a batch ends at: offsets/N is "v1", the batch's metadata, then one line per source."""
    lines = (checkpoint / "offsets" / str(batch)).read_text(encoding="utf-8").splitlines()
    return {int(p): int(o) for p, o in json.loads(lines[2])[topic].items()}


# ---- the parent: the producer ------------------------------------------------------------------------------


@dataclass
class Feed:
    """The input, written on a fixed schedule: step n is RECORDS_PER_STEP records of STEP_KINDS[n % 3], plain
    ones by an idempotent producer, the others in one transaction each, committed or aborted (a commit the
    broker makes the producer abort counts as aborted); a record's key is its value, record i of a step goes to
    partition i % 2. `prefill()` writes the first steps; `start()` the rest, `pace` seconds apart, on a thread
    that waits for `gates[n]` before step n and calls `hooks[n]` before it."""

    bootstrap: str
    topic: str
    client: Mapping[str, str] = field(default_factory=dict)
    prefill_steps: int = PREFILL_STEPS
    total_steps: int = TOTAL_STEPS
    pace: float = STEP_PACE_S
    gates: dict[int, threading.Event] = field(default_factory=dict)
    hooks: dict[int, Callable[[], None]] = field(default_factory=dict)
    plain: list[bytes] = field(default_factory=list)
    committed: list[bytes] = field(default_factory=list)
    aborted: list[bytes] = field(default_factory=list)
    done: int = 0
    failure: BaseException | None = None
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        from confluent_kafka import Producer

        base = {"bootstrap.servers": self.bootstrap, **self.client}
        self._plain = Producer({**base, "enable.idempotence": True})
        self._txn = Producer({**base, "transactional.id": f"{self.topic}-feed-{uuid.uuid4().hex[:6]}"})
        self._txn.init_transactions(CLIENT_TIMEOUT_S)

    @property
    def visible(self) -> list[bytes]:
        return self.plain + self.committed

    def step(self, number: int) -> None:
        kind = STEP_KINDS[number % len(STEP_KINDS)]
        values = step_values(number)
        producer = self._plain if kind == "plain" else self._txn
        if kind != "plain":
            self._txn.begin_transaction()
        for n, value in enumerate(values):
            producer.produce(self.topic, value, key=value, partition=n % PARTITIONS)
        if kind == "plain":
            assert producer.flush(CLIENT_TIMEOUT_S) == 0, "plain records not delivered"
        elif not self._end(kind == "committed"):
            kind = "aborted"
        {"plain": self.plain, "committed": self.committed, "aborted": self.aborted}[kind].extend(values)
        self.done = number + 1

    def _end(self, commit: bool) -> bool:
        """Commit or abort the open transaction, as the transactional API asks through a moved coordinator or
        a stopped broker: a retriable error is retried, an abortable one on commit aborts. Whether it committed."""
        from confluent_kafka import KafkaException

        while True:
            try:
                (self._txn.commit_transaction if commit else self._txn.abort_transaction)(CLIENT_TIMEOUT_S)
                return commit
            except KafkaException as exc:
                error = exc.args[0]
                if error.retriable():
                    continue
                if commit and error.txn_requires_abort():
                    commit = False
                    continue
                raise

    def prefill(self) -> None:
        for number in range(self.prefill_steps):
            self.step(number)

    def _run(self) -> None:
        try:
            for number in range(self.prefill_steps, self.total_steps):
                if number in self.hooks:
                    self.hooks[number]()
                if number in self.gates:
                    self.gates[number].wait(TIMEOUT_S * 2)
                self.step(number)
                time.sleep(self.pace)
        except BaseException as exc:  # noqa: BLE001 - reported by finish()
            self.failure = exc

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"feed-{self.topic}", daemon=True)
        self._thread.start()

    def finish(self) -> None:
        assert self._thread is not None
        for gate in self.gates.values():
            gate.set()
        self._thread.join(TIMEOUT_S * 3)
        assert not self._thread.is_alive(), "the producer did not finish its schedule"
        if self.failure is not None:
            raise self.failure


# ---- the parent: reading what the sinks hold ---------------------------------------------------------------


def end_offsets(bootstrap: str, topic: str, *, read_committed: bool, client: Mapping[str, str] | None = None
                ) -> dict[int, int]:
    """Each partition's end: the last stable offset read_committed, the high watermark read_uncommitted."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, **(client or {}), "group.id": f"ends-{uuid.uuid4().hex}",
                         "isolation.level": "read_committed" if read_committed else "read_uncommitted"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), CLIENT_TIMEOUT_S, cached=False)[1]
                for p in range(PARTITIONS)}
    finally:
        consumer.close()


def read_with_offsets(bootstrap: str, topic: str, *, read_committed: bool = True,
                      client: Mapping[str, str] | None = None) -> dict[tuple[int, int], bytes]:
    """Every record of `topic` up to its end, by (partition, offset)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, **(client or {}), "group.id": f"read-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": "read_committed" if read_committed else "read_uncommitted"})
    found: dict[tuple[int, int], bytes] = {}
    at_end: set[int] = set()
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])

        def drained() -> bool:
            for message in consumer.consume(500, timeout=0.5):
                error = message.error()
                if error is None:
                    found[(message.partition() or 0, message.offset() or 0)] = message.value() or b""
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(message.partition() or 0)
                else:
                    raise KafkaException(error)
            return len(at_end) == PARTITIONS

        wait_until(drained, f"the end of every partition of {topic}")
        return found
    finally:
        consumer.close()


def committed_marker(bootstrap: str, group: str, topic: str) -> int:
    """The offset kemu's sink committed for one task (its group) on partition 0 of its topic: batch id + 1."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        [committed] = consumer.committed([TopicPartition(topic, 0)], timeout=CLIENT_TIMEOUT_S)
        return int(committed.offset)
    finally:
        consumer.close()


def metadata_log_files(folder: Path) -> list[Path]:
    """The files a file sink's `_spark_metadata` log has committed: from the last compacted entry
    (N.compact, every compactInterval batches) and every entry after it; "add" minus "delete"."""
    log = folder / "_spark_metadata"
    entries: dict[int, Path] = {}
    for path in log.iterdir() if log.is_dir() else ():
        stem = path.name.removesuffix(".compact")
        if stem.isdigit():
            entries[int(stem)] = path
    start = max((n for n, p in entries.items() if p.name.endswith(".compact")), default=0)
    files: dict[str, bool] = {}
    for n in sorted(n for n in entries if n >= start):
        lines = entries[n].read_text(encoding="utf-8").splitlines()
        assert lines and lines[0] == "v1", f"{entries[n]} is not a v1 metadata log entry"
        for line in lines[1:]:
            entry = json.loads(line)
            files[entry["path"]] = entry["action"] != "delete"
    return sorted(Path(path.removeprefix("file:")) for path, kept in files.items() if kept)


def orphan_files(folder: Path) -> list[Path]:
    """Whole parquet files in the folder that the log does not name: a task's output of a batch never
    committed (whole: begins and ends with parquet's magic, so its task finished writing it)."""
    named = set(metadata_log_files(folder))
    found = []
    for path in sorted(folder.glob("part-*.parquet")):
        if path in named:
            continue
        data = path.read_bytes()
        if len(data) > 8 and data[:4] == data[-4:] == b"PAR1":
            found.append(path)
    return found


def parquet_rows(paths: list[Path]) -> list[tuple[bytes, bytes]]:
    import pyarrow.parquet as pq

    rows: list[tuple[bytes, bytes]] = []
    for path in paths:
        table = pq.read_table(path, columns=["key", "value"])
        rows.extend(zip(table.column("key").to_pylist(), table.column("value").to_pylist(), strict=True))
    return rows


# ---- the parent: the stall and the kill --------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """A micro-batch of a query: its id and the input offsets [start, end) it reads, per partition."""

    batch_id: int
    start: dict[int, int]
    end: dict[int, int]

    def holds(self, partition: int, offset: int) -> bool:
        return self.start[partition] <= offset < self.end[partition]


def planned_batch(checkpoint: Path, topic: str) -> Batch | None:
    """The query's last planned batch, if it is not committed."""
    planned, done = batch_ids(checkpoint, "offsets"), batch_ids(checkpoint, "commits")
    if not planned or planned[-1] in done:
        return None
    batch = planned[-1]
    start = batch_end(checkpoint, batch - 1, topic) if batch > 0 else dict.fromkeys(range(PARTITIONS), 0)
    return Batch(batch, start, batch_end(checkpoint, batch, topic))


@dataclass
class Stall:
    """Where each query stopped, with what the rest of its batch wrote: what the kill interrupts."""

    batches: dict[str, Batch]
    stalled_at: tuple[int, int]  # STALL's (partition, offset)
    kafka_written: int  # Spark's Kafka sink's records: the batches before, and this one's but the stalled rows
    kafka_before: int  # ... of the batches before
    kemu_markers: list[int]  # kemu's sink's committed batch id + 1, per task
    kemu_open: int  # offsets of its output behind an open transaction (the stalled task's, if it wrote)
    orphans: list[Path]  # the file sink's files of the batch (partition 1's task)


def _stalled(config: QueryConfig, queries: Mapping[str, str], visible: dict[tuple[int, int], bytes]) -> Stall | str:
    """Every query stopped in the batch holding STALL, with the rest of that batch written; or what is not
    there yet."""
    [at] = [where for where, value in visible.items() if value == STALL]
    batches: dict[str, Batch] = {}
    for sink in SINKS:
        batch = planned_batch(config.checkpoint(sink), config.input_topic)
        if batch is None or not batch.holds(*at):
            return f"the {sink} query is not in the batch of {STALL!r} at {at} (planned but not committed: {batch})"
        batches[sink] = batch

    def rows(batch: Batch, keep: Callable[[int, int], bool]) -> int:
        return sum(1 for (p, o) in visible if batch.holds(p, o) and keep(p, o))

    def before_the_stall(p: int, o: int) -> bool:
        return p == 1 or o < at[1]

    # Spark's Kafka sink: every batch before, then partition 1's part of this one and partition 0's rows ahead of
    # the stalled one, each as it was processed.
    kafka = batches["kafka"]
    kafka_before = sum(1 for (p, o) in visible if o < kafka.start[p])
    kafka_written = sum(end_offsets(config.bootstrap, config.kafka_output, read_committed=False).values())
    if kafka_written != kafka_before + rows(kafka, before_the_stall):
        return f"Spark's Kafka sink has {kafka_written} records, not {kafka_before} + {rows(kafka, before_the_stall)}"
    # kemu's sink: the task of partition 1 committed the batch (its marker is batch id + 1); the stalled one has
    # not (Spark numbers the tasks in its own order, not the partitions').
    from kemu.spark.sink import DEFAULT_PREFIX, transactional_id

    kemu = batches["kemu-kafka"]
    markers = [committed_marker(config.bootstrap, transactional_id(DEFAULT_PREFIX, queries["kemu-kafka"], task),
                                config.kemu_output) for task in range(PARTITIONS)]
    if max(markers) != kemu.batch_id + 1 or min(markers) > kemu.batch_id:
        return f"kemu's sink has committed {markers} (batch id + 1, per task), not one task of batch {kemu.batch_id}"
    ends = {kind: sum(end_offsets(config.bootstrap, config.kemu_output, read_committed=kind).values())
            for kind in (True, False)}
    kemu_open = ends[False] - ends[True]
    # The file sink: the task of partition 1 wrote its file, which no log entry names.
    orphans = orphan_files(config.file_output)
    if rows(batches["file"], lambda p, _o: p == 1) and not orphans:
        return "the file sink's task of partition 1 has not written its file"
    return Stall(batches, at, kafka_written, kafka_before, markers, kemu_open, orphans)


def _caught_up(config: QueryConfig) -> bool:
    """Every query has committed a batch ending at the input's end, and planned none after it."""
    ends = end_offsets(config.bootstrap, config.input_topic, read_committed=True)
    for sink in SINKS:
        planned, done = batch_ids(config.checkpoint(sink), "offsets"), batch_ids(config.checkpoint(sink), "commits")
        if not done or planned[-1] != done[-1] or batch_end(config.checkpoint(sink), done[-1],
                                                            config.input_topic) != ends:
            return False
    return True


def _consumed(config: QueryConfig, ends: dict[int, int]) -> dict[str, int] | None:
    """Each sink's last committed batch, once every one ends at the input's end offsets."""
    last: dict[str, int] = {}
    for sink in SINKS:
        done = batch_ids(config.checkpoint(sink), "commits")
        if not done or batch_end(config.checkpoint(sink), done[-1], config.input_topic) != ends:
            return None
        last[sink] = done[-1]
    return last


@dataclass
class KilledRun:
    """What one killed-and-restarted run produced and what its sinks hold (values as the queries wrote them)."""

    broker: str
    plain: list[bytes]
    committed: list[bytes]
    aborted: list[bytes]
    stall: Stall
    killed: list[Member]  # the child's session at the kill
    kafka_after_kill: int  # what Spark's Kafka sink had written once the child was dead
    killed_batch_rows: dict[str, set[bytes]]  # each query's input of the batch it was killed in, as written
    file_rows: list[tuple[bytes, bytes]]  # the file sink read by Spark
    file_rows_by_log: list[tuple[bytes, bytes]]  # its _spark_metadata log's files, read by pyarrow
    orphan_rows: list[tuple[bytes, bytes]]  # the files the log does not name, read by pyarrow
    kafka_sink: list[bytes]  # Spark's Kafka sink's output, read_committed
    kemu_sink: list[bytes]  # kemu's sink's output, read_committed
    kemu_sink_written: int  # kemu's sink's output read_uncommitted: with what killed attempts left aborted
    steps: dict[str, int]  # steps produced before the child started, by the kill, by the restart, in all
    seconds: dict[str, float]

    @property
    def visible(self) -> list[bytes]:
        return self.plain + self.committed

    @property
    def written_by_the_killed_batch(self) -> int:
        """What Spark's Kafka sink wrote of the batch it was killed in."""
        return self.kafka_after_kill - self.stall.kafka_before

    def expected(self) -> collections.Counter[bytes]:
        return collections.Counter(PREFIX + value for value in self.visible)

    def expected_rows(self) -> collections.Counter[tuple[bytes, bytes]]:
        return collections.Counter((value, PREFIX + value) for value in self.visible)

    def figures(self, values: list[bytes]) -> dict[str, int]:
        counted = collections.Counter(values)
        aborted = {PREFIX + value for value in self.aborted}
        return {"input": len(self.plain) + len(self.committed) + len(self.aborted),
                "committed input": len(self.visible), "output": len(values),
                "duplicates": sum(n - 1 for n in counted.values() if n > 1),
                "aborted seen": sum(n for v, n in counted.items() if v in aborted),
                "missing": len(set(self.expected()) - set(counted))}


def run_killed_query(broker: str, bootstrap: str, work: Path) -> KilledRun:
    """The whole run against one broker (see the module's docstring)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from compat_tests.spark.support import read_topic

    began = time.monotonic()
    label = uuid.uuid4().hex[:8]
    config = QueryConfig(bootstrap, f"killed-in-{label}", f"killed-kafka-out-{label}", f"killed-kemu-out-{label}",
                         str(work))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = (config.input_topic, config.kafka_output, config.kemu_output)
    for future in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]).values():
        future.result(CLIENT_TIMEOUT_S)
    config_path = config.save()
    killed_gate, restarted_gate = threading.Event(), threading.Event()
    feed = Feed(bootstrap, config.input_topic, gates={KILL_GATE: killed_gate, RESTART_GATE: restarted_gate})
    feed.prefill()
    steps = {"before start": feed.done}
    seconds: dict[str, float] = {}
    first, second = Child(config, config_path, 1), Child(config, config_path, 2)
    try:
        first.start()
        queries = first.wait_started()
        seconds["started"] = time.monotonic() - began
        # The stalled step is written once every query has caught up with the input: each one's next batch is
        # then that step alone (STALL on partition 0 after one row, two rows on partition 1).
        feed.hooks[STALL_STEP] = lambda: wait_until(lambda: (first.check_alive(), _caught_up(config))[1],
                                                    "every query to catch up before the stalled step", first,
                                                    timeout=TIMEOUT_S * 2, pause=0.1)
        feed.start()
        # The producer stops at the kill gate, STALL written: then every query gets to its batch and stops there.
        wait_until(lambda: feed.done >= KILL_GATE or feed.failure, "the producer to write up to the kill gate", first)
        assert feed.failure is None, feed.failure
        visible = read_with_offsets(bootstrap, config.input_topic)

        waiting: list[str] = []

        def stalled() -> Stall | None:
            first.check_alive()
            found = _stalled(config, queries, visible)
            if isinstance(found, str):
                waiting[:] = [found]
                return None
            return found

        stall = wait_until(stalled, "every query to stop at the stalled record with the rest of its batch written",
                           first, timeout=TIMEOUT_S * 2, pause=0.2, waiting=waiting)
        steps["by the kill"] = feed.done
        killed = first.kill()
        seconds["killed"] = time.monotonic() - began
        kafka_after_kill = sum(end_offsets(bootstrap, config.kafka_output, read_committed=False).values())
        for sink in SINKS:
            assert planned_batch(config.checkpoint(sink), config.input_topic) == stall.batches[sink], sink
        killed_gate.set()
        # Producing on while the query is dead, then the restart.
        wait_until(lambda: feed.done >= KILL_GATE + 2 or feed.failure, "the producer to go on after the kill")
        second.start()
        second.wait_started()
        # The query is back once it has committed the batch it was killed in (it runs that batch again).
        wait_until(lambda: all(stall.batches[sink].batch_id in batch_ids(config.checkpoint(sink), "commits")
                               for sink in SINKS), "the restarted queries to commit the batch they were killed in",
                   second, timeout=TIMEOUT_S * 2)
        steps["by the restart"] = feed.done
        seconds["restarted"] = time.monotonic() - began
        restarted_gate.set()
        feed.finish()
        steps["in all"] = feed.done
        ends = end_offsets(bootstrap, config.input_topic, read_committed=True)
        assert ends == end_offsets(bootstrap, config.input_topic, read_committed=False), "a transaction is open"
        wait_until(lambda: (second.check_alive(), _consumed(config, ends))[1],
                   "every query to commit a batch ending at the input's end", second, timeout=TIMEOUT_S * 2)
        assert second.stop() == 0, second.log_tail()
        seconds["done"] = time.monotonic() - began
    finally:
        first.ensure_gone()
        second.ensure_gone()
    everything = read_with_offsets(bootstrap, config.input_topic)
    killed_batch_rows = {sink: {PREFIX + v for (p, o), v in everything.items() if batch.holds(p, o)}
                         for sink, batch in stall.batches.items()}
    file_rows = [(bytes.fromhex(k), bytes.fromhex(v)) for k, v in json.loads(config.rows_file(2).read_text())]
    return KilledRun(
        broker=broker, plain=feed.plain, committed=feed.committed, aborted=feed.aborted, stall=stall,
        killed=killed, kafka_after_kill=kafka_after_kill, killed_batch_rows=killed_batch_rows,
        file_rows=file_rows, file_rows_by_log=parquet_rows(metadata_log_files(config.file_output)),
        orphan_rows=parquet_rows(stall.orphans),
        kafka_sink=read_topic(bootstrap, config.kafka_output),
        kemu_sink=read_topic(bootstrap, config.kemu_output),
        kemu_sink_written=len(read_topic(bootstrap, config.kemu_output, read_committed=False)),
        steps=steps, seconds=seconds)


if __name__ == "__main__":
    sys.exit(child_main(Path(sys.argv[1]), int(sys.argv[2])))
