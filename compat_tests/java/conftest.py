"""Fixtures for the Java client tests: the programs compiled once per session, and a `kemu serve` of their own
that writes its transcript, so a test can show which APIs the Java client used."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compat_tests.java.java_client import JavaClient, compile_client
from compat_tests.kemu_process import KemuServeProcess

# What test setups of Kafka set, so that groups form without waiting: no delay before a new classic group's
# first rebalance, and KIP-848 members heartbeating every second (the minimum lowered to allow it).
FAST_GROUPS = ("group.initial.rebalance.delay.ms=0", "group.consumer.heartbeat.interval.ms=1000",
               "group.consumer.min.heartbeat.interval.ms=1000")


class JavaKemu(KemuServeProcess):
    """`kemu serve --transcript FILE`: every exchange, one JSON line each."""

    def __init__(self, data_dir: Path, transcript: Path) -> None:
        overrides = tuple(arg for setting in FAST_GROUPS for arg in ("--override", setting))
        super().__init__(data_dir, extra_args=("--transcript", str(transcript), *overrides))
        self.transcript = transcript

    def exchanges(self, api_key: int) -> list[dict[str, Any]]:
        lines = self.transcript.read_text(encoding="utf-8").splitlines()
        return [entry for entry in map(json.loads, lines) if entry["api_key"] == api_key]


@pytest.fixture(scope="session")
def java(tmp_path_factory: pytest.TempPathFactory) -> JavaClient:
    return compile_client(tmp_path_factory.mktemp("java-classes"))


@pytest.fixture(scope="session")
def java_kemu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaKemu]:
    directory = tmp_path_factory.mktemp("java-kemu")
    server = JavaKemu(directory / "data", directory / "transcript.jsonl")
    server.start()
    try:
        yield server
    finally:
        if server.is_running():
            server.stop_cleanly()
