"""The transaction state table: Kafka's validPreviousStates, and the coordinator held to it."""

from __future__ import annotations

import ast
import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest

import kemu.txn.coordinator
import kemu.txn.state
from kemu.clock import VirtualClock
from kemu.txn.coordinator import TransactionCoordinator
from kemu.txn.producer_ids import ProducerIdAllocator
from kemu.txn.state import VALID_PREVIOUS, IllegalStateError, TxnMetadata, TxnState
from kemu.wire.errors import ErrorCode

# Written out by Kafka's names, as Kafka 4.3's TransactionState.VALID_PREVIOUS_STATES lists them, rather than
# derived from the table under test (transactions version 2 added Empty, CompleteCommit and CompleteAbort to
# PrepareAbort's).
KAFKA_VALID_PREVIOUS: dict[str, set[str]] = {
    "Empty": {"Empty", "CompleteCommit", "CompleteAbort"},
    "Ongoing": {"Ongoing", "Empty", "CompleteCommit", "CompleteAbort"},
    "PrepareCommit": {"Ongoing"},
    "PrepareAbort": {"Ongoing", "PrepareEpochFence", "Empty", "CompleteCommit", "CompleteAbort"},
    "CompleteCommit": {"PrepareCommit"},
    "CompleteAbort": {"PrepareAbort"},
    "Dead": {"Empty", "CompleteAbort", "CompleteCommit"},
    "PrepareEpochFence": {"Ongoing"},
}


class Journal(list[tuple[str, "dict[str, Any] | None"]]):
    def __call__(self, tid: str, value: dict[str, Any] | None) -> None:
        self.append((tid, value))


def test_table_is_kafkas() -> None:
    table = {to.kafka_name: {prev.kafka_name for prev in prevs} for to, prevs in VALID_PREVIOUS.items()}
    assert table == KAFKA_VALID_PREVIOUS


def test_table_cannot_be_changed_at_run_time() -> None:
    with pytest.raises(TypeError):
        VALID_PREVIOUS[TxnState.DEAD] = frozenset(TxnState)  # type: ignore[index]


@pytest.mark.parametrize(("current", "target"), list(itertools.product(TxnState, TxnState)),
                         ids=lambda state: str(state.kafka_name))
def test_every_pair_is_allowed_exactly_when_the_table_says(current: TxnState, target: TxnState) -> None:
    txn = TxnMetadata("t", 7, producer_epoch=3, state=current, partitions={("a", 0)})
    if current.kafka_name in KAFKA_VALID_PREVIOUS[target.kafka_name]:
        nxt = txn.prepare_transition(target)
        assert nxt.state is target and nxt is not txn
        # The copy is the caller's to change; the current metadata stays as it was until installed.
        nxt.partitions.add(("b", 1))
        assert txn.state is current and txn.partitions == {("a", 0)}
    else:
        with pytest.raises(IllegalStateError, match=f"{current.kafka_name} -> {target.kafka_name}"):
            txn.prepare_transition(target)
        with pytest.raises(IllegalStateError):
            txn.check_transition(target)
        assert txn.state is current


def test_a_copy_carries_every_field_and_a_partition_set_of_its_own() -> None:
    # Each field gets a value unlike its default and unlike the others', so a field the copy drops or
    # swaps with another shows.
    values: dict[str, Any] = {}
    for number, spec in enumerate(dataclasses.fields(TxnMetadata)):
        values[spec.name] = {"transactional_id": "t", "state": TxnState.PREPARE_ABORT,
                             "partitions": {("a", 0), ("b", 1)}}.get(spec.name, 1000 + number)
    txn = TxnMetadata(**values)
    copied = txn.copy()
    assert {spec.name: getattr(copied, spec.name) for spec in dataclasses.fields(TxnMetadata)} == values
    copied.partitions.add(("c", 2))
    assert txn.partitions == {("a", 0), ("b", 1)}


def test_an_illegal_transition_in_the_coordinator_raises_and_journals_nothing() -> None:
    journal = Journal()
    coord = TransactionCoordinator(VirtualClock(1_000_000), ProducerIdAllocator(None), journal)
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True)
    (job,) = coord.take_marker_jobs()
    # Corrupt the metadata behind the coordinator's back: the commit's markers now land on an abort.
    coord.txns["t"].state = TxnState.PREPARE_ABORT
    written = len(journal)
    with pytest.raises(IllegalStateError, match="PrepareAbort -> CompleteCommit"):
        coord.markers_written(job)
    assert len(journal) == written
    assert coord.txns["t"].state == TxnState.PREPARE_ABORT and coord.take_marker_jobs() == [job]


@pytest.mark.parametrize("removed", list(TxnState), ids=lambda state: str(state.kafka_name))
def test_the_coordinator_consults_the_table_for_each_step(
        monkeypatch: pytest.MonkeyPatch, removed: TxnState) -> None:
    # With one target state made unreachable, the step into it must fail: proof that step is checked.
    table = dict(VALID_PREVIOUS)
    table[removed] = frozenset()
    monkeypatch.setattr(kemu.txn.state, "VALID_PREVIOUS", table)
    clock = VirtualClock(1_000_000)
    coord = TransactionCoordinator(clock, ProducerIdAllocator(None), Journal())

    def run() -> None:
        p = coord.init_producer_id("t", 60000)
        assert coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)]) == ErrorCode.NONE
        assert coord.end_txn("t", p.producer_id, p.producer_epoch, commit=True) == ErrorCode.NONE
        for job in coord.take_marker_jobs():
            coord.markers_written(job)
        # A stalled transaction, fenced and aborted by the timer.
        assert coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)]) == ErrorCode.NONE
        clock.advance(60001)
        assert coord.tick() == ["t"]
        for job in coord.take_marker_jobs():
            coord.markers_written(job)
        # The idle id expires.
        clock.advance(coord.config.id_expiration_ms)
        coord.tick()
        assert "t" not in coord.txns

    with pytest.raises(IllegalStateError, match=f"-> {removed.kafka_name}"):
        run()


def test_the_whole_flow_passes_with_kafkas_table() -> None:
    clock = VirtualClock(1_000_000)
    coord = TransactionCoordinator(clock, ProducerIdAllocator(None), Journal())
    p = coord.init_producer_id("t", 60000)
    coord.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    clock.advance(60001)
    assert coord.tick() == ["t"]
    for job in coord.take_marker_jobs():
        coord.markers_written(job)
    assert coord.txns["t"].state == TxnState.COMPLETE_ABORT
    clock.advance(coord.config.id_expiration_ms)
    coord.tick()
    assert "t" not in coord.txns


def test_replay_sets_states_directly_even_where_no_single_step_leads() -> None:
    # Compaction may leave only the last record of each id, so replay applies what it reads unchecked,
    # as Kafka's loadTransactionMetadata does.
    source = TransactionCoordinator(VirtualClock(1_000_000), ProducerIdAllocator(None), Journal())
    p = source.init_producer_id("t", 60000)
    source.add_partitions("t", p.producer_id, p.producer_epoch, [("a", 0)])
    source.end_txn("t", p.producer_id, p.producer_epoch, commit=False)
    prepare_abort = source.txns["t"].log_value()
    complete_commit = TxnMetadata("t", p.producer_id, producer_epoch=p.producer_epoch,
                                  state=TxnState.COMPLETE_COMMIT).log_value()

    fresh = TransactionCoordinator(VirtualClock(1_000_000), ProducerIdAllocator(None), Journal())
    fresh.replay("t", complete_commit)
    fresh.replay("t", prepare_abort)  # CompleteCommit -> PrepareAbort is no legal step
    fresh.finish_loading()
    assert fresh.txns["t"].state == TxnState.PREPARE_ABORT
    # Recovery goes on from there through checked steps.
    (job,) = fresh.take_marker_jobs()
    fresh.markers_written(job)
    completed = fresh.txns["t"]
    assert completed.state == TxnState.COMPLETE_ABORT


def test_the_coordinator_never_assigns_a_state_itself() -> None:
    # Every change must pass through TxnMetadata.prepare_transition; a direct `x.state = ...` would not.
    tree = ast.parse(Path(kemu.txn.coordinator.__file__).read_text())
    assigned = [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        for sub in ast.walk(target)
        if isinstance(sub, ast.Attribute) and sub.attr == "state"
    ]
    assert assigned == []
