"""A `kemu serve` whose data directory is on a full filesystem (a 16 MiB tmpfs, filled up after the broker started):
every request that must write answers as a Kafka broker answers a KafkaStorageException, with no traceback in the
log and nothing half-made, and once room is freed the same requests succeed. confluent-kafka's admin gets
KAFKA_STORAGE_ERROR for CreateTopics and the topic does not exist; a transactional producer's FindCoordinator gets
COORDINATOR_NOT_AVAILABLE (retried by the client) while `__transaction_state` cannot be made; a partition whose
append failed is offline until the broker restarts, as a Kafka log dir is; a record acknowledged before the disk
filled is read back.

The tmpfs needs root (mount); without it the test skips, and fails under CI=true."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess, running

SIZE = "16m"


@contextlib.contextmanager
def small_filesystem(where: Path) -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0:
        tool_missing("mounting a small tmpfs for the full-disk test needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        tool_missing(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def fill(filesystem: Path) -> Path:
    filler = filesystem / "filler"
    with filler.open("wb") as out:
        with contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 65536)
                out.flush()
    assert os.statvfs(filesystem).f_bavail == 0
    return filler


def create(admin: AdminClient, name: str) -> KafkaError | None:
    [future] = admin.create_topics([NewTopic(name, 3, 1)]).values()
    try:
        future.result(15)
    except KafkaException as refused:
        error: KafkaError = refused.args[0]
        return error
    return None


@pytest.fixture
def full_disk_kemu(tmp_path: Path) -> Iterator[tuple[KemuServeProcess, Path]]:
    with small_filesystem(tmp_path / "small") as filesystem:
        for process in running(KemuServeProcess(filesystem / "data")):
            yield process, filesystem


def test_a_full_disk_answers_kafka_storage_error_and_recovers(
        full_disk_kemu: tuple[KemuServeProcess, Path]) -> None:
    kemu, filesystem = full_disk_kemu
    bootstrap = kemu.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    assert create(admin, "before") is None
    early = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    early.produce("before", b"acknowledged", partition=0)
    assert early.flush(15) == 0
    filler = fill(filesystem)

    refused = create(admin, "while-full")
    assert refused is not None and refused.code() == KafkaError.KAFKA_STORAGE_ERROR, refused
    assert "No space left on device" in refused.str()
    assert "while-full" not in admin.list_topics(timeout=10).topics
    transactional = Producer({"bootstrap.servers": bootstrap, "transactional.id": "full-disk-tx"})
    with pytest.raises(KafkaException) as timed_out:
        transactional.init_transactions(3)
    assert timed_out.value.args[0].code() == KafkaError._TIMED_OUT
    errors: list[KafkaError] = []
    idempotent = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "message.timeout.ms": 3000})
    idempotent.produce("before", b"lost with the disk", partition=1, on_delivery=lambda e, _m: errors.append(e))
    idempotent.flush(10)
    # Never acknowledged: the partition's log went offline (as a Kafka log dir does), until the broker restarts.
    assert len(errors) == 1 and errors[0] is not None, errors

    filler.unlink()
    assert create(admin, "while-full") is None
    transactional.init_transactions(30)
    transactional.begin_transaction()
    transactional.produce("while-full", b"after", partition=0)
    transactional.commit_transaction(30)
    kemu.restart()
    idempotent.produce("before", b"after the restart", partition=1)
    assert idempotent.flush(30) == 0, kemu.output(40)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "full-disk-check",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition("before", 0, 0), TopicPartition("before", 1, 0),
                     TopicPartition("while-full", 0, 0)])
    seen: set[bytes] = set()
    for _ in range(40):
        seen |= {m.value() or b"" for m in consumer.consume(10, 0.5) if m.error() is None}
        if len(seen) == 3:
            break
    consumer.close()
    assert seen == {b"acknowledged", b"after the restart", b"after"}

    # One line per failed write, never a traceback.
    output = kemu.output()
    assert "Traceback" not in output and "UNKNOWN_SERVER_ERROR" not in output
    assert "cannot create the log of while-full-0" in output and "could not create __transaction_state" in output
