"""Spark's own Kafka source in a process of its own, SIGKILLed mid-stream (the driver, its JVM and Spark's Python
workers: every process of the child's session) while a producer keeps writing plain records and committed and
aborted transactions, and restarted on its checkpoints (compat_tests/spark/killed_query.py): three queries over
the same input, one per sink, each killed in the middle of the same batch (the stalled step).

- Spark's file sink is exactly once: what `spark.read.parquet` reads (the files of the `_spark_metadata` log)
  is the committed input, record by record; the killed batch's finished file is in the folder and left out.
- Spark's Kafka sink is at least once: it had written the killed batch but for the stalled row, and the
  restarted query writes the whole batch again. Its output holds the committed input, nothing aborted, and
  exactly those records twice.
- kemu's sink (`format("kemu-kafka")`) is exactly once, read read_committed, although one task of the killed
  batch had committed its part, and the replay may hand that part to the other task number.

Each run goes against kemu (a `kemu serve` child) and against Apache Kafka 4.3, and the outputs of the two are the
same. The figures of each run are recorded as the tests' properties (user_properties; `--junitxml` with
`-o junit_family=legacy` writes them) and printed (`pytest -s`)."""

from __future__ import annotations

import collections
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.reference.kafka import ReferenceKafka
from compat_tests.spark.killed_query import PREFIX, STALL_STEP, KilledRun, run_killed_query, step_values
from kemu.spark.session import CONNECTOR_JAR, JARS_VARIABLE, jars_to_add, listed_jars

BROKERS = ("kemu", "kafka")
# The batch every query was killed in, as written: the stalled step's records (record n on partition n % 2).
STALLED_STEP = [PREFIX + value for value in step_values(STALL_STEP)]
PARTITION_1 = STALLED_STEP[1::2]
PARTITION_0_BEFORE_THE_STALL = [STALLED_STEP[0]]  # record 2, on partition 0 too, is STALL
pytestmark = pytest.mark.timeout(600)


def _require_connector() -> None:
    """The child starts its own session with the KEMU_SPARK_JARS it inherits: the connector must be there."""
    listed = listed_jars(os.environ.get(JARS_VARIABLE, ""))
    if not any(CONNECTOR_JAR.search(jar) for jar in jars_to_add([j for j in listed if Path(j).is_file()])):
        tool_missing(f"Spark's Kafka connector jars are not in {JARS_VARIABLE}: the killed query needs them")


def _report(run: KilledRun) -> None:
    stall = run.stall
    batches = {sink: batch.batch_id for sink, batch in stall.batches.items()}
    print(f"\n{run.broker}: steps {run.steps}; seconds {({k: round(v, 1) for k, v in run.seconds.items()})}; "
          f"killed {sorted(m.name for m in run.killed)}; batches killed {batches}; Spark's Kafka sink had "
          f"{stall.kafka_before} + {run.written_by_the_killed_batch} records; kemu's sink markers "
          f"{stall.kemu_markers}, {stall.kemu_open} offsets behind an open transaction; the file sink "
          f"{len(stall.orphans)} files not in its log")


def _killed_run(broker: str, bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> KilledRun:
    _require_connector()
    run = run_killed_query(broker, bootstrap, tmp_path_factory.mktemp(f"killed-{broker}"))
    _report(run)
    return run


@pytest.fixture(scope="module")
def kemu_run(kemu_server: KemuServeProcess, tmp_path_factory: pytest.TempPathFactory) -> KilledRun:
    return _killed_run("kemu", kemu_server.bootstrap, tmp_path_factory)


@pytest.fixture(scope="module")
def kafka_run(reference_kafka: ReferenceKafka, tmp_path_factory: pytest.TempPathFactory) -> KilledRun:
    return _killed_run("kafka", reference_kafka.bootstrap, tmp_path_factory)


def _run(request: pytest.FixtureRequest, broker: str) -> KilledRun:
    run: KilledRun = request.getfixturevalue(f"{broker}_run")
    return run


def _record(record_property: Callable[[str, object], None], run: KilledRun, sink: str,
            values: list[bytes]) -> dict[str, int]:
    figures = run.figures(values)
    for name, value in figures.items():
        record_property(f"{sink} {name}", value)
    print(f"\n{run.broker} {sink} sink: {figures}")
    return figures


@pytest.mark.parametrize("broker", BROKERS)
def test_the_kill_took_every_process_of_the_child_mid_batch(request: pytest.FixtureRequest, broker: str) -> None:
    run = _run(request, broker)
    # The Python driver, its JVM and Spark's Python workers were all killed (Child.kill waits until no process
    # of the child's session is left).
    names = {member.name for member in run.killed}
    assert "java" in names and any(name.startswith("python") for name in names), run.killed
    assert len({member.group for member in run.killed}) > 1, "no Python worker (kemu's sink) was running"
    # The input was written before, while and after the query was dead.
    assert run.steps["before start"] < run.steps["by the kill"] < run.steps["by the restart"] < run.steps["in all"]
    # Every query was killed in the batch holding the stalled record, which it had planned but not committed;
    # Spark's Kafka sink had written the rest of that batch, and wrote nothing more before it died.
    # The queries had caught up with the input before the stalled step was written: that step alone was the
    # batch, for each of them.
    for sink, batch in run.stall.batches.items():
        assert batch.holds(*run.stall.stalled_at), sink
        assert run.killed_batch_rows[sink] == set(STALLED_STEP), sink
    assert run.kafka_after_kill == run.stall.kafka_written


def _pairs(values: set[bytes]) -> set[tuple[bytes, bytes]]:
    return {(value.removeprefix(PREFIX), value) for value in values}


@pytest.mark.parametrize("broker", BROKERS)
def test_spark_file_sink_is_exactly_once_after_a_kill(request: pytest.FixtureRequest, broker: str,
                                                      record_property: Callable[[str, object], None]) -> None:
    run = _run(request, broker)
    figures = _record(record_property, run, "file", [value for _key, value in run.file_rows])
    assert collections.Counter(run.file_rows) == run.expected_rows()
    assert (figures["duplicates"], figures["aborted seen"], figures["missing"]) == (0, 0, 0)
    # Spark's read took exactly the files the _spark_metadata log committed; the killed batch's file of
    # partition 1 was in the folder too, with rows of that batch, and was left out.
    assert collections.Counter(run.file_rows_by_log) == collections.Counter(run.file_rows)
    assert sorted(run.orphan_rows) == sorted(_pairs(set(PARTITION_1)))
    record_property("file rows in files the log does not name", len(run.orphan_rows))


@pytest.mark.parametrize("broker", BROKERS)
def test_spark_kafka_sink_writes_a_killed_batch_twice(request: pytest.FixtureRequest, broker: str,
                                                      record_property: Callable[[str, object], None]) -> None:
    run = _run(request, broker)
    figures = _record(record_property, run, "kafka", run.kafka_sink)
    assert set(run.kafka_sink) == set(run.expected())
    assert figures["aborted seen"] == 0
    # What it had written of the batch it was killed in, it wrote again when the batch ran again after the
    # restart: exactly those records are there twice, and nothing else is.
    counted = collections.Counter(run.kafka_sink)
    twice = {value for value, n in counted.items() if n > 1}
    assert max(counted.values()) == 2 and twice <= run.killed_batch_rows["kafka"]
    assert twice == set(PARTITION_1) | set(PARTITION_0_BEFORE_THE_STALL)
    assert figures["duplicates"] == run.written_by_the_killed_batch == len(twice)


@pytest.mark.parametrize("broker", BROKERS)
def test_kemu_sink_is_exactly_once_after_a_kill(request: pytest.FixtureRequest, broker: str,
                                                record_property: Callable[[str, object], None]) -> None:
    run = _run(request, broker)
    figures = _record(record_property, run, "kemu-kafka", run.kemu_sink)
    assert collections.Counter(run.kemu_sink) == run.expected()
    assert (figures["duplicates"], figures["aborted seen"], figures["missing"]) == (0, 0, 0)
    # At the kill, the task of partition 1 had committed its part of the batch and the stalled task had not:
    # the batch ran again, the first task recognised its part as written, the other wrote its own.
    batch = run.stall.batches["kemu-kafka"].batch_id
    assert max(run.stall.kemu_markers) == batch + 1 and min(run.stall.kemu_markers) <= batch
    # What killed attempts wrote and never committed (aborted when the restarted task fenced the transactional
    # id): Spark hands a Python sink its rows in Arrow batches, so the stalled task had likely sent none yet.
    record_property("kemu-kafka records written and left aborted", run.kemu_sink_written - len(run.kemu_sink))


def test_kemu_and_kafka_give_the_same_outputs(kemu_run: KilledRun, kafka_run: KilledRun) -> None:
    # The same schedule, so the same input (topic names aside, which no value carries).
    assert (kemu_run.plain, kemu_run.committed, kemu_run.aborted) == \
        (kafka_run.plain, kafka_run.committed, kafka_run.aborted)
    assert collections.Counter(kemu_run.file_rows) == collections.Counter(kafka_run.file_rows)
    # Spark's Kafka sink: the same records; how many came twice depends on where the kill fell.
    assert set(kemu_run.kafka_sink) == set(kafka_run.kafka_sink)
    assert collections.Counter(kemu_run.kemu_sink) == collections.Counter(kafka_run.kemu_sink)
    assert all(value.startswith(PREFIX) for value in kemu_run.kemu_sink)
