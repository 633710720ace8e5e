"""Fixtures for the compat tests: a real `kemu serve` child process and the external clients."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from compat_tests.external_clients import Kafkajs, Kcat, find_kafkajs, find_kcat
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.reference.fixtures import (  # noqa: F401 - fixtures
    reference_kafka,
    reference_kafka_cluster,
    reference_kafka_tv1,
)


@pytest.fixture(scope="session")
def kemu_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    """One `kemu serve` shared by the whole session; tests keep apart by using their own topic names."""
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("kemu-session-data")))


@pytest.fixture
def fresh_kemu_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KemuServeProcess]:
    """A `kemu serve` of this test's own, on an empty data dir: for restarts, kills and global state."""
    yield from running(KemuServeProcess(tmp_path_factory.mktemp("kemu-data")))


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic name no other test uses (and that is legal in Kafka: [a-zA-Z0-9._-], at most 249)."""
    test_name = "".join(c if c.isalnum() else "-" for c in request.node.name)[:80]
    return f"compat-{test_name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def kcat() -> Kcat:
    return find_kcat()


@pytest.fixture(scope="session")
def kafkajs() -> Kafkajs:
    return find_kafkajs()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the server's recent output to a failed test's report."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for value in getattr(item, "funcargs", {}).values():
        if isinstance(value, KemuServeProcess):
            report.sections.append((f"kemu serve output ({value.data_dir})", value.output(last=200)))
