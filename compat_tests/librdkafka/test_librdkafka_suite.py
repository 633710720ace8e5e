"""Entries of librdkafka's own test suite (compat_tests/librdkafka/suite.py) against `kemu serve`, as librdkafka's
CI runs them against a Kafka cluster:

- 0081 (admin): CreateTopics, DeleteTopics, CreatePartitions, the ACL calls, AlterConfigs and
  IncrementalAlterConfigs, DescribeConfigs of topics, brokers and groups, DeleteRecords, the consumer-group
  listing, describing, deleting and offset calls, DescribeTopics, DescribeCluster, ListOffsets and the SCRAM
  credential calls, each checked by the test against what it asked for. One broker, with the StandardAuthorizer
  and allow.everyone.if.no.acl.found, as the suite's ACL steps need. Quick mode (`-Q`): the calls through a
  producer handle, not again through a consumer's.
- 0101 (fetch from follower, KIP-392): three brokers in racks RACK1-3 with the RackAwareReplicaSelector; a
  consumer with client.rack set to a follower's rack must read the most bytes from that follower (the test reads
  each broker's broker.rack with DescribeConfigs first, and skips unless there are three)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compat_tests.external_clients import tool_missing
from compat_tests.kemu_process import KemuServeProcess, running
from compat_tests.librdkafka.suite import SuiteUnavailable, built_suite, run_suite_test

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def suite() -> Path:
    try:
        return built_suite()
    except SuiteUnavailable as missing:
        tool_missing(f"librdkafka's test suite is not built: {missing}")


def _overrides(*settings: str) -> tuple[str, ...]:
    return tuple(arg for setting in ("group.initial.rebalance.delay.ms=0", *settings)
                 for arg in ("--override", setting))


@pytest.fixture
def admin_kemu(tmp_path: Path) -> Iterator[KemuServeProcess]:
    yield from running(KemuServeProcess(tmp_path / "data", extra_args=_overrides(
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found=true")))


@pytest.fixture
def racked_kemu(tmp_path: Path) -> Iterator[KemuServeProcess]:
    yield from running(KemuServeProcess(tmp_path / "data", extra_args=(
        "--brokers", "3", "--rack", "RACK1,RACK2,RACK3",
        *_overrides("replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector"))))


def test_0081_admin(suite: Path, admin_kemu: KemuServeProcess, tmp_path: Path) -> None:
    run = run_suite_test(suite, "0081", admin_kemu.bootstrap, quick=True, work=tmp_path)
    assert (run.returncode, run.results.get("0081_admin")) == (0, "PASSED"), run.tail()
    passed = [line for line in run.output.splitlines() if ": PASS (" in line]
    # Every sub-test it ran passed; the ones it skipped need SASL-authenticated principals.
    skipped = [line for line in run.output.splitlines() if ": SKIP: " in line]
    assert len(passed) >= 35 and all("requires authorization" in line for line in skipped), run.tail()


def test_0101_fetch_from_follower(suite: Path, racked_kemu: KemuServeProcess, tmp_path: Path) -> None:
    run = run_suite_test(suite, "0101", racked_kemu.bootstrap, work=tmp_path)
    assert (run.returncode, run.results.get("0101_fetch_from_follower")) == (0, "PASSED"), run.tail()
    assert "(preferred replica)" in run.output, run.tail()
