"""`kemu serve --data-dir` restarted with transactions in every state, ending as Kafka's recovery ends them:
completed ones stay as they were, one left in PrepareCommit is committed at start-up (its markers written
with the new coordinator epoch), one left open is aborted once its timeout passes.

The PrepareCommit state is reached by starting the server with KEMU_HOLD_TXN_MARKERS=1 (it then writes no
markers) and killing it (SIGKILL) right after the commit was acknowledged.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import IsolationLevel

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from compat_tests.test_transactions_confluent import TIMEOUT_S, latest, transactional
from compat_tests.test_transactions_support import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    create_topics,
    read_until_end,
    unique,
    write_end_records,
)
from kemu.coordinators.txn_service import HOLD_MARKERS_ENV
from tests.server.kafka_socket import KafkaSocket

PARTITIONS = 4
DESCRIBE_TRANSACTIONS = 65


def states(server: KemuServeProcess, *transactional_ids: str) -> dict[str, str]:
    with KafkaSocket((server.host, server.port)) as conn:
        body = conn.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": list(transactional_ids)})
    return {s["transactional_id"]: s["transaction_state"] for s in body["transaction_states"]}


def produce(producer: Any, topic: str, partition: int, prefix: str, count: int = 2) -> list[tuple[str, int, str]]:
    values = [(topic, partition, f"{prefix}-{n}") for n in range(count)]
    for _, _, value in values:
        producer.produce(topic, value=value.encode(), partition=partition)
    assert producer.flush(TIMEOUT_S) == 0
    return values


def test_restart_ends_transactions_as_kafkas_recovery_does(fresh_kemu_server: KemuServeProcess,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    server = fresh_kemu_server
    bootstrap = server.bootstrap
    topic = unique("recovery")
    create_topics(bootstrap, [topic], partitions=PARTITIONS)
    ids = {name: unique(f"recovery-{name}") for name in ("committed", "aborted", "prepared", "ongoing")}

    # A committed and an aborted transaction, completed before any restart.
    committed = transactional(bootstrap, ids["committed"])
    committed.begin_transaction()
    committed_values = produce(committed, topic, 0, "committed")
    committed.commit_transaction(TIMEOUT_S)
    aborted = transactional(bootstrap, ids["aborted"])
    aborted.begin_transaction()
    aborted_values = produce(aborted, topic, 1, "aborted")
    aborted.abort_transaction(TIMEOUT_S)

    # Restarted holding markers: a commit stays in PrepareCommit; another transaction is left open.
    monkeypatch.setenv(HOLD_MARKERS_ENV, "1")
    server.restart()
    prepared = transactional(bootstrap, ids["prepared"])
    prepared.begin_transaction()
    prepared_values = produce(prepared, topic, 2, "prepared")
    prepared.commit_transaction(TIMEOUT_S)
    ongoing = transactional(bootstrap, ids["ongoing"], **{"transaction.timeout.ms": 10000})
    ongoing.begin_transaction()
    ongoing_values = produce(ongoing, topic, 3, "ongoing")
    assert states(server, *ids.values()) == {ids["committed"]: "CompleteCommit", ids["aborted"]: "CompleteAbort",
                                             ids["prepared"]: "PrepareCommit", ids["ongoing"]: "Ongoing"}
    assert latest(bootstrap, topic, 2, IsolationLevel.READ_COMMITTED) == 0  # no marker yet

    server.kill()
    monkeypatch.delenv(HOLD_MARKERS_ENV)
    server.start()

    # Start-up recovery commits the prepared transaction; the open one waits for its timeout.
    wait_for(lambda: latest(bootstrap, topic, 2, IsolationLevel.READ_COMMITTED) == 3,
             what="the recovered commit's marker on partition 2")
    found = states(server, *ids.values())
    assert found[ids["prepared"]] == "CompleteCommit"
    assert found[ids["committed"]] == "CompleteCommit" and found[ids["aborted"]] == "CompleteAbort"
    assert found[ids["ongoing"]] == "Ongoing"  # recovered as it was; holding partition 3 back
    assert latest(bootstrap, topic, 3, IsolationLevel.READ_COMMITTED) == 0
    wait_for(lambda: states(server, ids["ongoing"])[ids["ongoing"]] == "CompleteAbort",
             what="the open transaction aborted after its timeout", timeout=30)

    write_end_records(bootstrap, [topic], PARTITIONS)
    assert read_until_end(bootstrap, [topic], READ_COMMITTED, PARTITIONS) == sorted(
        committed_values + prepared_values)
    assert read_until_end(bootstrap, [topic], READ_UNCOMMITTED, PARTITIONS) == sorted(
        committed_values + aborted_values + prepared_values + ongoing_values)
    # The ids live on with their producer ids: a new producer for one of them initialises normally.
    again = transactional(bootstrap, ids["committed"])
    again.begin_transaction()
    produce(again, topic, 0, "again", count=1)
    again.commit_transaction(TIMEOUT_S)
