"""The transcript with a stock client (confluent-kafka): a transactional run retried through an EndTxn fault
leaves a readable account naming the APIs, the client, the transactional id and the error the client got;
and `kemu serve --transcript FILE` writes the same exchanges as JSON lines a test reads back."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Producer

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.polling import wait_for
from kemu.testing import Broker
from kemu.testing.faults import Fault


def test_the_transcript_of_a_transaction_names_apis_and_errors() -> None:
    with Broker() as broker:
        broker.create_topic("orders", partitions=2)
        broker.faults.add(Fault(api="EndTxn", error="CONCURRENT_TRANSACTIONS", count=1))
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "tx-7",
                             "client.id": "shop"})
        producer.init_transactions(20)
        producer.begin_transaction()
        producer.produce("orders", b"a", partition=0)
        producer.produce("orders", b"b", partition=1)
        producer.commit_transaction(30)

        text = broker.transcript.render()
        for api in ("ApiVersions", "Metadata", "FindCoordinator", "InitProducerId", "AddPartitionsToTxn",
                    "Produce", "EndTxn"):
            assert f"shop {api} v" in text, api
        assert "transactional_id=tx-7" in text
        assert "-> CONCURRENT_TRANSACTIONS" in text and "[fault: error CONCURRENT_TRANSACTIONS]" in text
        ends = [entry for entry in broker.transcript.entries if entry.api == "EndTxn"]
        assert [entry.errors for entry in ends] == [("CONCURRENT_TRANSACTIONS",), ()]
        produced = [entry for entry in broker.transcript.entries if entry.api == "Produce"]
        notes = [note for entry in produced for note in entry.request.partitions]
        assert sorted((note.topic, note.partition) for note in notes) == [("orders", 0), ("orders", 1)]
        assert all(dict(note.fields)["transactional"] is True for note in notes)
        init = next(entry for entry in broker.transcript.entries if entry.api == "InitProducerId")
        assert init.response is not None
        producer_id = dict(init.response.fields)["producer_id"]
        assert all(dict(note.fields)["producer_id"] == producer_id for note in notes)


def test_kemu_serve_writes_the_transcript_as_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    server = KemuServeProcess(tmp_path / "data", port=0, extra_args=("--transcript", str(path)))
    server.start()
    try:
        producer = Producer({"bootstrap.servers": server.bootstrap, "client.id": "writer"})
        producer.produce("auto-created", b"x")
        assert producer.flush(20) == 0

        def produced() -> list[dict[str, object]]:
            lines = [json.loads(line) for line in path.read_text().splitlines()]
            done = any(line["api"] == "Produce" and line["response"] and "errors" not in line["response"]
                       for line in lines)
            return lines if done else []

        lines = wait_for(produced, what="a Produce line in the transcript file")
    finally:
        server.stop_cleanly()
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    apis = {line["api"] for line in lines}
    assert {"ApiVersions", "Metadata", "Produce"} <= apis
    assert all(line["client_id"] == "writer" for line in lines)
    produce = next(line for line in lines if line["api"] == "Produce" and "errors" not in line["response"])
    assert produce["request"]["partitions"][0]["topic"] == "auto-created"
    assert produce["response"]["partitions"][0]["base_offset"] == 0


def test_a_restarted_kemu_serve_appends_to_its_transcript(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    server = KemuServeProcess(tmp_path / "data", port=0, extra_args=("--transcript", str(path)))

    def produce_one(value: bytes) -> None:
        producer = Producer({"bootstrap.servers": server.bootstrap, "client.id": "writer"})
        producer.produce("kept", value)
        assert producer.flush(20) == 0

    def produced(count: int) -> Callable[[], list[dict[str, object]]]:
        def lines() -> list[dict[str, object]]:
            found = [json.loads(line) for line in path.read_text().splitlines()]
            ok = [line for line in found if line["api"] == "Produce" and line["response"]
                  and "errors" not in line["response"]]
            return found if len(ok) >= count else []
        return lines

    server.start()
    try:
        produce_one(b"before")
        wait_for(produced(1), what="the first run's Produce line")
        server.kill()
        server.start()
        produce_one(b"after")
        lines = wait_for(produced(2), what="the second run's Produce line beside the first's")
    finally:
        server.stop_cleanly()
    offsets = [line["response"]["partitions"][0]["base_offset"] for line in lines  # type: ignore[index]
               if line["api"] == "Produce" and "errors" not in line["response"]]  # type: ignore[operator]
    assert offsets == [0, 1]
    assert [line["seq"] for line in lines].count(1) == 2  # each run numbers its exchanges from 1
