"""Disk faults (issue 16, item 5): a write to one partition's files fails — the disk is full, the write
half done. That partition answers KAFKA_STORAGE_ERROR to Produce and Fetch, as Kafka's do once their log dir
is offline, until the broker restarts; the other partitions keep serving; nothing acknowledged is lost, and
after the fault is gone and the broker restarted on its data the partition is whole and writable again.

The fault is injected at the file layer: os.write, for the file descriptors of the faulty partition only,
writes half of what it is given and then fails with ENOSPC."""

from __future__ import annotations

import dataclasses
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kemu.testing.harness import InProcessBroker
from kemu.wire.errors import ErrorCode
from tests.handlers import data_plane
from tests.handlers.config_wire import create_topic
from tests.handlers.data_plane import fetch_body, fetch_partitions, produce, topic_id, values_of
from tests.handlers.harness import broker_config

FAULTY, HEALTHY = "full", "fine"


class FullDisk:
    """os.write that fails for the files under one partition's directory, after writing half."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.real = os.write
        self.failed = 0

    def write(self, fd: int, data: bytes | memoryview) -> int:  # the signature of os.write
        try:
            path = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            path = ""
        if f"/{self.directory}/" not in path:
            return self.real(fd, data)
        self.failed += 1
        if self.failed == 1 and len(data) > 1:
            return self.real(fd, memoryview(data)[:len(data) // 2])  # a torn write, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def batch(*values: bytes) -> bytes:
    # Stamped now: records of 2023 would be past retention.ms when the restarted broker first checks.
    return data_plane.batch(*values, timestamp=int(time.time() * 1000))


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[str]:
    yield str(tmp_path / "data")


def fetch(conn: object, broker: InProcessBroker, name: str) -> tuple[int, list[bytes | None]]:
    body = conn.request(1, 12, fetch_body([(name, 0, 0)], version=12))  # type: ignore[attr-defined]
    [(_, partition)] = fetch_partitions(body, 12)
    return partition["error_code"], values_of(partition["records"])


def test_a_full_disk_takes_one_partition_offline_and_loses_nothing(
        data_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = dataclasses.replace(broker_config(), data_dir=data_dir)
    acked = [b"a%d" % i for i in range(3)]
    with InProcessBroker(config) as broker, broker.connect() as conn:
        create_topic(conn, FAULTY)
        create_topic(conn, HEALTHY)
        for value in acked:
            assert produce(conn, FAULTY, batch(value))["error_code"] == 0
        fault = FullDisk(f"{FAULTY}-0")
        monkeypatch.setattr(os, "write", fault.write)

        assert produce(conn, FAULTY, batch(b"x" * 10_000))["error_code"] == ErrorCode.KAFKA_STORAGE_ERROR
        assert fault.failed >= 1
        assert produce(conn, HEALTHY, batch(b"still served"))["error_code"] == 0
        assert fetch(conn, broker, HEALTHY) == (0, [b"still served"])
        assert fetch(conn, broker, FAULTY)[0] == ErrorCode.KAFKA_STORAGE_ERROR

        monkeypatch.setattr(os, "write", fault.real)  # space freed: still offline until the restart
        assert produce(conn, FAULTY, batch(b"later"))["error_code"] == ErrorCode.KAFKA_STORAGE_ERROR
        assert topic_id(broker, FAULTY) is not None

    with InProcessBroker(config) as broker, broker.connect() as conn:
        assert fetch(conn, broker, FAULTY) == (0, acked)  # the torn tail is gone, every acked record whole
        assert produce(conn, FAULTY, batch(b"after"))["base_offset"] == len(acked)
        assert fetch(conn, broker, FAULTY) == (0, [*acked, b"after"])
        assert fetch(conn, broker, HEALTHY) == (0, [b"still served"])


def test_an_fsync_that_fails_in_the_periodic_flush_takes_the_partition_offline(
        data_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = dataclasses.replace(broker_config(), data_dir=data_dir)
    with InProcessBroker(config) as broker, broker.connect() as conn:
        create_topic(conn, FAULTY, configs={"flush.ms": "0"})
        create_topic(conn, HEALTHY, configs={"flush.ms": "0"})
        assert produce(conn, FAULTY, batch(b"acked"))["error_code"] == 0
        assert produce(conn, HEALTHY, batch(b"fine"))["error_code"] == 0
        real_fsync = os.fsync

        def failing_fsync(fd: int) -> None:
            if f"/{FAULTY}-0/" in os.readlink(f"/proc/self/fd/{fd}"):
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", failing_fsync)
        for name in (FAULTY, HEALTHY):
            partition = broker.broker.partition(name, 0)
            assert partition is not None
            broker.call(partition.maintain)  # what the log-retention housekeeping task runs
        assert produce(conn, FAULTY, batch(b"later"))["error_code"] == ErrorCode.KAFKA_STORAGE_ERROR
        assert fetch(conn, broker, FAULTY)[0] == ErrorCode.KAFKA_STORAGE_ERROR
        assert produce(conn, HEALTHY, batch(b"on"))["error_code"] == 0
        monkeypatch.setattr(os, "fsync", real_fsync)
    with InProcessBroker(config) as broker, broker.connect() as conn:
        assert fetch(conn, broker, FAULTY) == (0, [b"acked"])
        assert fetch(conn, broker, HEALTHY) == (0, [b"fine", b"on"])
