"""The benchmark runner's argument parsing, report table and pure helpers (no broker is started here)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from benchmarks.brokers import on_cpu_seconds, runqueue_wait_seconds
from benchmarks.latency import RECORD_SIZE as LATENCY_RECORD_SIZE
from benchmarks.latency import check_received, parse_value, value_for
from benchmarks.profiling import format_top, top_entries
from benchmarks.report import Cell, Column, Row, format_table, to_json
from benchmarks.run import parse_args, workload_metrics, workloads_for
from benchmarks.throughput import PhaseResult, Workload, record_values, rounds
from benchmarks.txn_latency import percentile

ALL = [Column("kemu", "kemu", "kemu"), Column("tansu", "Tansu 0.6.0", "Tansu"),
       Column("mock", "librdkafka mock", "mock")]


def table_lines(rows: list[Row], columns: list[Column] = ALL) -> list[list[str]]:
    text = format_table(rows, columns)
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|")]


def test_ratio_columns_divide_kemu_by_each_peer() -> None:
    row = Row("produce msgs/s", {"kemu": Cell(50_000.0), "tansu": Cell(200_000.0), "mock": Cell(25_000.0)})
    header, _divider, body = table_lines([row])
    assert header == ["metric", "kemu", "Tansu 0.6.0", "librdkafka mock", "kemu/Tansu", "kemu/mock"]
    assert body == ["produce msgs/s", "50,000", "200,000", "25,000", "0.25×", "2.00×"]


def test_a_failed_cell_shows_failed_with_one_note_per_distinct_reason() -> None:
    rows = [Row(f"metric {i}", {"kemu": Cell.failed("the broker offers no Produce"), "tansu": Cell(1.0),
                                "mock": Cell.absent("not installed")}) for i in range(3)]
    text = format_table(rows, ALL, ["a footnote"])
    body = table_lines(rows)[2:]
    assert all(line[1] == "FAILED [1]" and line[3] == "n/a [2]" and line[4:] == ["—", "—"] for line in body)
    assert "[1] kemu: the broker offers no Produce" in text.splitlines()
    assert "[2] librdkafka mock: not installed" in text.splitlines()
    assert text.splitlines()[-1] == "- a footnote"
    assert text.count("[1] kemu") == 1


def test_without_kemu_there_are_no_ratio_columns() -> None:
    row = Row("start-up ms", {"tansu": Cell(9.5), "mock": Cell(52.0)})
    header, _divider, body = table_lines([row], ALL[1:])
    assert header == ["metric", "Tansu 0.6.0", "librdkafka mock"]
    assert body == ["start-up ms", "9.50", "52.0"]


def test_json_keeps_values_failures_and_ratios() -> None:
    row = Row("m", {"kemu": Cell(2.0), "tansu": Cell(4.0), "mock": Cell.failed("read 3 of 4 records")})
    [entry] = to_json([row], ALL)
    assert entry["values"] == {"kemu": 2.0, "tansu": 4.0, "mock": None}
    assert entry["failed"] == {"mock": "read 3 of 4 records"}
    assert entry["ratio_kemu_over"] == {"tansu": 0.5, "mock": None}


def test_default_arguments() -> None:
    args = parse_args([])
    assert args.mode == "throughput"
    assert args.brokers == ["kemu", "kafka", "kfake", "tansu", "mock"]
    assert args.partitions == [1, 8]
    assert [(w.record_size, w.records, w.partitions, w.idempotent) for w in workloads_for(args)] == [
        (100, 200_000, 1, False), (100, 200_000, 8, False), (1024, 50_000, 1, False), (1024, 50_000, 8, False),
        (100, 200_000, 1, True)]
    assert args.profile is None


def test_broker_subset_keeps_the_canonical_order_and_counts_are_flags() -> None:
    args = parse_args(["--brokers", "mock,kfake,kemu,kafka", "--records-100b", "10", "--records-1kib", "0",
                       "--partitions", "4", "--mode", "txn", "--json", "out.json"])
    assert args.brokers == ["kemu", "kafka", "kfake", "mock"]
    assert args.mode == "txn" and args.json == "out.json"
    assert [(w.record_size, w.records, w.partitions, w.idempotent) for w in workloads_for(args)] == [
        (100, 10, 4, False), (100, 10, 1, True)]
    assert parse_args(["--mode", "all", "--profile", "kemu.txt"]).profile == "kemu.txt"
    assert parse_args(["--mode", "load", "--load-seconds", "5"]).load_seconds == 5.0


@pytest.mark.parametrize("argv", [["--brokers", "redpanda"], ["--brokers", ","], ["--partitions", "x"],
                                  ["--partitions", "0"], ["--repeats", "0"], ["--mode", "soak"],
                                  ["--latency-count", "0"], ["--load-seconds", "0"]])
def test_bad_arguments_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)


def test_metric_names_say_size_count_and_partitions() -> None:
    names = workload_metrics(Workload(1024, 50_000, 8))
    assert names["consume MB/s"] == "consume 1 KiB × 50,000, 8 partitions, MB/s"
    assert workload_metrics(Workload(100, 7, 1))["produce msgs/s"] == "produce 100 B × 7, 1 partition, msgs/s"
    assert workload_metrics(Workload(100, 7, 1, idempotent=True))["produce msgs/s"] == \
        "produce 100 B × 7, 1 partition, idempotent, msgs/s"
    assert Workload(100, 7, 1, idempotent=True).topic != Workload(100, 7, 1).topic


def test_rounds_cover_every_record_once_and_cap_each_partition() -> None:
    workload = Workload(record_size=100, records=200_003, partitions=8)
    spans = rounds(workload, round_bytes=3 * 1024 * 1024)
    assert spans[0][0] == 0 and spans[-1][1] == workload.records
    assert all(end == next_start for (_, end), (next_start, _) in pairwise(spans))
    for start, end in spans:
        per_partition = Workload(100, end, 8).records_on(0) - Workload(100, start, 8).records_on(0)
        assert per_partition * workload.record_size <= 3 * 1024 * 1024


def test_record_values_carry_their_sequence_and_size() -> None:
    values = record_values(Workload(record_size=100, records=3, partitions=1))
    assert [len(v) for v in values] == [100, 100, 100]
    assert [int.from_bytes(v[:8], "big") for v in values] == [0, 1, 2]


def test_median_of_repeats_or_the_first_failure() -> None:
    runs = [PhaseResult(10, 1000, seconds) for seconds in (3.0, 1.0, 2.0)]
    assert PhaseResult.median_of(runs).seconds == 2.0
    failed = PhaseResult(10, 1000, None, "read 9 of 10 records")
    assert PhaseResult.median_of([runs[0], failed]).failure == "read 9 of 10 records"
    assert failed.msgs_per_s is None and runs[1].msgs_per_s == 10.0 and runs[1].mb_per_s == 0.001


def test_nearest_rank_percentile() -> None:
    samples = [float(n) for n in range(1, 501)]
    assert percentile(samples, 0.99) == 495.0
    assert percentile(samples, 0.5) == 250.0
    assert percentile([7.0], 0.99) == 7.0


def test_latency_values_carry_sequence_and_send_time_and_are_checked_in_order() -> None:
    value = value_for(41, 123_456_789)
    assert len(value) == LATENCY_RECORD_SIZE
    assert parse_value(value) == (41, 123_456_789)
    assert check_received([0, 1, 2], 3) is None
    assert check_received([0, 2, 1], 3) is not None
    assert check_received([0, 1, 1, 2], 3) is not None


def test_profile_top_entries_rank_self_time_and_count_a_function_once_per_stack() -> None:
    collapsed = "\n".join([
        "main (a.py:1);loop (a.py:5);work (b.py:10) 6",
        "main (a.py:1);loop (a.py:6);work (b.py:12) 2",
        "main (a.py:1);loop (a.py:5);loop (a.py:9) 2",
        "not a stack line",
    ])
    samples, entries = top_entries(collapsed)
    assert samples == 10
    assert [(e.function, e.self_samples, e.total_samples) for e in entries] == [
        ("work (b.py)", 8, 8), ("loop (a.py)", 2, 10)]
    assert "| 80.0 | 80.0 | `work (b.py)` |" in format_top("t", collapsed)


def test_runqueue_wait_and_time_on_cpu_sum_their_schedstat_field_over_every_live_thread(tmp_path: Path) -> None:
    # schedstat: time on the CPU, time runnable but waiting for one, timeslices run (nanoseconds, count)
    tasks = tmp_path / "42" / "task"
    for tid, line in (("42", "900000000 250000000 17\n"), ("43", "5 1500000000 2\n")):
        (tasks / tid).mkdir(parents=True)
        (tasks / tid / "schedstat").write_text(line, encoding="ascii")
    (tasks / "44").mkdir()  # a thread that exited between the listing and the read
    assert runqueue_wait_seconds(42, proc=tmp_path) == pytest.approx(1.75)
    assert on_cpu_seconds(42, proc=tmp_path) == pytest.approx(0.900000005)


def test_a_producer_waits_until_its_next_send_or_its_end_and_never_a_negative_time() -> None:
    from benchmarks.load import poll_timeout

    assert poll_timeout(now=10.0, next_send=10.025, end=30.0) == pytest.approx(0.025)
    assert poll_timeout(now=29.99, next_send=30.015, end=30.0) == pytest.approx(0.01)
    # The run ended between the loop's check and `now`: confluent-kafka waits forever on a negative timeout.
    assert poll_timeout(now=30.001, next_send=30.02, end=30.0) == 0.0


def test_each_phase_has_its_cpu_rows_and_a_failure_fills_them_all() -> None:
    from benchmarks.run import BROKER_CORES, BROKER_PER_RECORD, CLIENT_CORES, phase_cells
    from benchmarks.throughput import CpuMeter

    names = workload_metrics(Workload(100, 7, 1))
    assert names[f"consume {BROKER_CORES}"] == "consume 100 B × 7, 1 partition, broker CPU, cores"
    assert len(names) == 10
    measured = PhaseResult(10, 1000, 2.0, cpu=CpuMeter(broker=0.5, client=3.0, thread=1.5))
    cells = phase_cells(measured, "produce")
    assert (cells[f"produce {BROKER_CORES}"].value, cells[f"produce {CLIENT_CORES}"].value) == (0.25, 1.5)
    assert cells[f"produce {BROKER_PER_RECORD}"].value == pytest.approx(50_000.0)  # 0.5 s over 10 records
    assert set(cells) == {key for key in names if key.startswith("produce ")}
    failed = phase_cells(PhaseResult(10, 1000, None, "read 9 of 10"), "consume")
    assert set(failed) == {key for key in names if key.startswith("consume ")}
    assert all(cell.failure == "consume: read 9 of 10" for cell in failed.values())
