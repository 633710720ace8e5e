"""The control endpoint of a real `kemu serve --control-port`, driven the ways a test in another language
would: curl creates a topic, arms a fault that a confluent-kafka producer retries through, and reads the
inspection (and `kemu inspect` prints it); kafkajs in node leaves a transaction open, asks the endpoint to
advance the clock 61 s, and its read_committed consumer moves past the aborted records; a crash point armed
over HTTP stops the broker inside a client's commit and `POST /restart` completes it. The OpenAPI checks of
tests/testing/test_control_openapi.py run here too, against the process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import Producer

from compat_tests.external_clients import Kafkajs, require_executable
from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from tests.testing.support import InBackground
from tests.testing.test_control_openapi import (
    ARRANGED_TOPIC,
    Operation,
    check_errors,
    check_routes_documented,
    check_success,
    operations,
    send,
    wait_until_crashed,
)

CONTROL_LINE = re.compile(r"^kemu control on (\S+):(\d+)$", re.MULTILINE)
SERVING_LINE = re.compile(r"^kemu serving on \S+:\d+$", re.MULTILINE)


@dataclass
class Controlled:
    server: KemuServeProcess
    control: str  # host:port

    @property
    def url(self) -> str:
        return f"http://{self.control}"


def _control_address(server: KemuServeProcess) -> str:
    # Printed right after the banner the harness waits for; the reader thread may not have it yet.
    match = wait_for(lambda: CONTROL_LINE.search(server.output()), what="the 'kemu control on' line", timeout=10)
    return f"{match[1]}:{match[2]}"


def _started(data_dir: Path) -> Iterator[Controlled]:
    # Two brokers, so that the cluster operations' examples (stop broker 2) have a broker to act on.
    server = KemuServeProcess(data_dir, extra_args=("--control-port", "0", "--brokers", "2"))
    server.start()
    try:
        yield Controlled(server, _control_address(server))
    finally:
        if server.is_running():
            server.stop_cleanly()


@pytest.fixture(scope="module")
def controlled_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Controlled]:
    yield from _started(tmp_path_factory.mktemp("kemu-control-module"))


@pytest.fixture
def controlled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Controlled]:
    yield from _started(tmp_path_factory.mktemp("kemu-control"))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def curl(url: str, method: str = "GET", body: object = None) -> tuple[int, str]:
    argv = [require_executable("curl"), "-sS", "-X", method, "-w", "\n%{http_code}"]
    if body is not None:
        argv += ["-H", "Content-Type: application/json", "--data", json.dumps(body)]
    completed = subprocess.run([*argv, url], capture_output=True, text=True, timeout=60, check=True)
    text, _, status = completed.stdout.rpartition("\n")
    return int(status), text


def kemu_inspect(control: str, *args: str) -> str:
    completed = subprocess.run([sys.executable, "-m", "kemu", "inspect", "--control", control, *args],
                               capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


class ClientCrash:
    """Arms a crash point over HTTP and commits a confluent-kafka transaction into it, on a thread (the commit
    waits for the broker, dead until restarted); `finish` waits for those commits once it is back."""

    def __init__(self, controlled: Controlled, topic: str = ARRANGED_TOPIC) -> None:
        self.controlled = controlled
        self.topic = topic
        self.commits: list[threading.Thread] = []

    def __call__(self) -> None:
        tid = unique("crashing")
        status, _ = curl(f"{self.controlled.url}/faults", "POST", {"crash": "after-prepare", "transactional_id": tid})
        assert status == 201
        producer = Producer({"bootstrap.servers": self.controlled.server.bootstrap, "transactional.id": tid})
        producer.init_transactions(20)
        producer.begin_transaction()
        producer.produce(self.topic, b"in-flight", partition=0)
        producer.flush(20)
        commit = threading.Thread(target=producer.commit_transaction, args=(60,), daemon=True)
        commit.start()
        self.commits.append(commit)

    def finish(self) -> None:
        # The producer goes with its thread, so none is left retrying against a server that is gone.
        for commit in self.commits:
            commit.join(60)
        self.commits.clear()


# ---- the process ----------------------------------------------------------------------------------------------
def test_serve_prints_the_control_line_after_the_banner(controlled: Controlled,
                                                        kemu_server: KemuServeProcess) -> None:
    output = controlled.server.output()
    serving, control = SERVING_LINE.search(output), CONTROL_LINE.search(output)
    assert serving is not None and control is not None and serving.start() < control.start()
    assert send(controlled.url, "GET", "/").json()["bootstrap_servers"] == controlled.server.bootstrap
    assert CONTROL_LINE.search(kemu_server.output()) is None  # off by default


# ---- the document, against the process ------------------------------------------------------------------------
@pytest.mark.parametrize("operation", operations(), ids=lambda op: op.id)
def test_each_operation_answers_as_documented(controlled_module: Controlled, operation: Operation) -> None:
    check_success(controlled_module.url, operation)


@pytest.mark.parametrize("operation", [op for op in operations() if op.errors()], ids=lambda op: op.id)
def test_each_documented_error_is_answered_as_documented(controlled_module: Controlled,
                                                         operation: Operation) -> None:
    crash = ClientCrash(controlled_module)
    try:
        check_errors(controlled_module.url, operation, crash)
    finally:
        if send(controlled_module.url, "GET", "/").json()["crashed"]:
            send(controlled_module.url, "POST", "/restart")
        crash.finish()


def test_every_route_is_documented(controlled_module: Controlled) -> None:
    check_routes_documented(controlled_module.url)


# ---- curl ---------------------------------------------------------------------------------------------------------
def test_curl_creates_a_topic_arms_a_fault_and_reads_the_inspection(controlled: Controlled) -> None:
    url, topic = controlled.url, unique("curl")
    status, body = curl(f"{url}/topics", "POST", {"name": topic, "partitions": 1})
    assert (status, json.loads(body)) == (201, {"name": topic, "partitions": 1, "config": {}})
    status, body = curl(f"{url}/faults", "POST", {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
                                                   "topic": topic, "count": 1})
    assert status == 201
    fault = json.loads(body)

    producer = Producer({"bootstrap.servers": controlled.server.bootstrap, "linger.ms": 0})
    delivered: list[object] = []
    producer.produce(topic, b"through the fault", on_delivery=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0 and delivered == [None]  # retried through the refusal

    status, body = curl(f"{url}/faults/{fault['id']}")
    assert (status, json.loads(body)["hits"]) == (200, 1)
    status, body = curl(f"{url}/inspect")
    inspection = json.loads(body)
    [partition] = [p for p in inspection["partitions"] if p["topic"] == topic]
    assert (partition["high_watermark"], inspection["violations"]) == (1, [])
    status, body = curl(f"{url}/inspect/text")
    assert status == 200 and topic in body
    status, body = curl(f"{url}/topics/{topic}/records")
    assert [r["value"] for r in json.loads(body)["records"]] == ["through the fault"]
    status, body = curl(f"{url}/transcript?last=50")
    assert any(e["api"] == "Produce" and e["fault"] for e in json.loads(body)["entries"])

    # `kemu inspect` is the same inspection, as tables or JSON.
    tables = kemu_inspect(controlled.control)
    assert topic in tables
    as_json = json.loads(kemu_inspect(controlled.control, "--json"))
    assert [p["high_watermark"] for p in as_json["partitions"] if p["topic"] == topic] == [1]


def test_kemu_inspect_says_when_nothing_answers() -> None:
    completed = subprocess.run([sys.executable, "-m", "kemu", "inspect", "--control", "127.0.0.1:9"],
                               capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 1 and "cannot reach the control endpoint" in completed.stderr


# ---- kafkajs ------------------------------------------------------------------------------------------------------
def test_kafkajs_advances_the_clock_past_a_stalled_transaction(controlled: Controlled, kafkajs: Kafkajs) -> None:
    result = kafkajs.run("control", controlled.server.bootstrap, "stalled-then-advance", controlled.url,
                         unique("js-control"), unique("js-stalled"), timeout=90)
    assert result["before"] == []  # held back at the open transaction
    assert result["after"] == ["after"]  # past the aborted records, to what came after
    assert result["advancedMs"] >= 61_000
    assert result["readCommitted"] == ["after"]


# ---- a crash point over HTTP ----------------------------------------------------------------------------------------
def test_a_crash_point_armed_over_http_then_restart_completes_the_commit(controlled: Controlled) -> None:
    url, topic, tid = controlled.url, unique("crash"), unique("tx")
    assert curl(f"{url}/topics", "POST", {"name": topic, "partitions": 2})[0] == 201
    assert curl(f"{url}/faults", "POST", {"crash": "partial-markers", "transactional_id": tid})[0] == 201
    producer = Producer({"bootstrap.servers": controlled.server.bootstrap, "transactional.id": tid})
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce(topic, b"p0", partition=0)
    producer.produce(topic, b"p1", partition=1)
    producer.flush(20)
    committing = InBackground(lambda: producer.commit_transaction(60)).start()
    wait_until_crashed(url)
    assert controlled.server.is_running()  # the broker stopped dead, not the process
    assert curl(f"{url}/topics")[0] == 503
    status, body = curl(f"{url}/restart", "POST")
    assert (status, json.loads(body)["crashed"]) == (200, False)
    assert committing.join(60) == [None]
    committed = json.loads(curl(f"{url}/topics/{topic}/records?read_committed=true")[1])["records"]
    assert sorted(r["value"] for r in committed) == ["p0", "p1"]
    [transaction] = [t for t in json.loads(curl(f"{url}/inspect")[1])["transactions"]
                     if t["transactional_id"] == tid]
    assert transaction["state"] == "CompleteCommit"
