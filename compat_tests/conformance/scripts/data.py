"""Records: Produce at every version (and what Kafka refuses), Fetch at every version, ListOffsets,
OffsetForLeaderEpoch, DeleteRecords and DescribeProducers."""

from __future__ import annotations

from typing import Any

from compat_tests.conformance.scripts import (
    COORDINATOR_SETTLING,
    TIMESTAMP,
    batch,
    create_topic,
    produce,
    step,
    versions,
)
from compat_tests.conformance.steps import Script

TOPIC = "conf-data-{run}"


def _fetch(version: int, offset: int = 0, *, partition: int = 0, topic: str = TOPIC, max_wait_ms: int = 0,
           isolation: int = 0, partition_max_bytes: int = 1 << 20) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 24,
            "isolation_level": isolation, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": topic, "topic_id": "{$topic_id}" if version >= 13 else "AAAAAAAAAAAAAAAAAAAAAA",
                        "partitions": [{"partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
                                        "last_fetched_epoch": -1, "log_start_offset": -1,
                                        "partition_max_bytes": partition_max_bytes}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def produce_scripts() -> list[Script]:
    sweep = create_topic(TOPIC, partitions=2)
    for version in versions(0):
        sweep.append(produce(TOPIC, [f"v{version}-a", f"v{version}-b"], version, name=f"v{version}"))
    errors = create_topic(TOPIC, partitions=1)
    errors += [
        produce(TOPIC, ["one"], acks=1, name="acks 1"),
        produce(TOPIC, ["x"], acks=2, name="acks 2"),
        produce(TOPIC, ["x"], acks=-2, name="acks -2"),
        produce("conf-produce-missing-{run}", ["x"], name="unknown topic"),
        produce(TOPIC, ["x"], partition=3, name="unknown partition"),
        step("v13 unknown topic id", 0, 13, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
                {"name": "", "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ",
                 "partition_data": [{"index": 0, "records": [batch(["x"])]}]}]}),
        produce(TOPIC, ["s1"], producer_id=12345, producer_epoch=0, base_sequence=0,
                name="unknown producer id"),
        step("bad crc", 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": TOPIC, "partition_data": [{"index": 0, "records": [batch(["x"]) | {"corrupt_crc": True}]}]}]}),
        step("transactional id without a transaction", 0, 9, {
            "transactional_id": "conf-notxn-{run}", "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": [batch(["x"])]}]}]}),
        step("two batches", 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
            {"name": TOPIC, "partition_data": [{"index": 0, "records": [batch(["p"]), batch(["q", "r"])]}]}]}),
        step("empty topic data", 0, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                                         "topic_data": []}),
        step("fetch all", 1, 12, _fetch(12)),
    ]
    big = create_topic("conf-big-{run}", configs={"max.message.bytes": "200"})
    big += [produce("conf-big-{run}", ["y" * 300], name="too large"),
            produce("conf-big-{run}", ["small"], name="fits")]
    return [Script("produce.versions", sweep), Script("produce.errors", errors),
            Script("produce.message_too_large", big)]


def fetch_scripts() -> list[Script]:
    sweep = [*create_topic(TOPIC, partitions=2), produce(TOPIC, ["a", "b", "c"]), produce(TOPIC, ["d"]),
             produce(TOPIC, ["p1"], partition=1)]
    for version in versions(1):
        sweep.append(step(f"v{version}", 1, version, _fetch(version)))
    sweep += [
        step("from offset 2", 1, 12, _fetch(12, 2)),
        step("from the end", 1, 12, _fetch(12, 4, max_wait_ms=50)),
        step("past the end", 1, 12, _fetch(12, 99)),
        step("negative offset", 1, 12, _fetch(12, -5)),
        step("partition 1", 1, 16, _fetch(16, partition=1)),
        step("unknown partition", 1, 12, _fetch(12, partition=9)),
        step("unknown topic", 1, 12, _fetch(12, topic="conf-fetch-missing-{run}")),
        step("unknown topic id", 1, 13, _fetch(13) | {"topics": [{"topic_id": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [
            {"partition": 0, "fetch_offset": 0, "current_leader_epoch": -1, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]}),
        step("read committed", 1, 12, _fetch(12, isolation=1)),
        step("bad isolation level", 1, 12, _fetch(12, isolation=5)),
        step("tiny max bytes", 1, 12, _fetch(12, partition_max_bytes=10)),
        step("current leader epoch ahead", 1, 12, _fetch(12) | {"topics": [{"topic": TOPIC, "partitions": [
            {"partition": 0, "fetch_offset": 0, "current_leader_epoch": 5, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}]}),
        step("session bad epoch", 1, 12, _fetch(12) | {"session_id": 0, "session_epoch": 3}),
        step("unknown session", 1, 12, _fetch(12) | {"session_id": 424242, "session_epoch": 1}),
    ]
    return [Script("fetch.versions", sweep)]


def offsets_scripts() -> list[Script]:
    def list_offsets(timestamp: int, *, topic: str = TOPIC, partition: int = 0, isolation: int = 0) -> dict[str, Any]:
        return {"replica_id": -1, "isolation_level": isolation, "timeout_ms": 30000, "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "current_leader_epoch": -1,
                                            "timestamp": timestamp}]}]}

    listing = [*create_topic(TOPIC), produce(TOPIC, ["a", "b", "c"])]
    for version in versions(2):
        listing.append(step(f"latest v{version}", 2, version, list_offsets(-1)))
        listing.append(step(f"earliest v{version}", 2, version, list_offsets(-2)))
    for version in (7, 10, 11):
        listing.append(step(f"max timestamp v{version}", 2, version, list_offsets(-3)))
    listing += [
        step("by timestamp", 2, 9, list_offsets(TIMESTAMP + 1)),
        step("timestamp after all", 2, 9, list_offsets(TIMESTAMP + 99)),
        step("earliest local v9", 2, 9, list_offsets(-4)),
        step("latest tiered v9", 2, 9, list_offsets(-5)),
        step("earliest pending upload v11", 2, 11, list_offsets(-6)),
        step("bad timestamp", 2, 9, list_offsets(-7)),
        step("unknown topic", 2, 9, list_offsets(-1, topic="conf-lo-missing-{run}")),
        step("unknown partition", 2, 9, list_offsets(-1, partition=4)),
        step("read committed", 2, 9, list_offsets(-1, isolation=1)),
    ]
    epochs = [*create_topic(TOPIC), produce(TOPIC, ["a", "b"])]
    for version in versions(23):
        epochs.append(step(f"epoch 0 v{version}", 23, version, {"replica_id": -1, "topics": [
            {"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}))
    epochs += [
        step("epoch ahead", 23, 4, {"replica_id": -1, "topics": [
            {"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 7}]}]}),
        step("fenced current epoch", 23, 4, {"replica_id": -1, "topics": [
            {"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": 9, "leader_epoch": 0}]}]}),
        step("unknown topic", 23, 4, {"replica_id": -1, "topics": [
            {"topic": "conf-ofle-missing-{run}", "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                                 "leader_epoch": 0}]}]}),
    ]
    deleting = [*create_topic(TOPIC), produce(TOPIC, [str(i) for i in range(6)])]
    for offset, version in enumerate(versions(21), start=1):
        deleting.append(step(f"to {offset} v{version}", 21, version, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "offset": offset}]}]}))
    deleting += [
        step("to the high watermark", 21, 2, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "offset": -1}]}]}),
        step("beyond", 21, 2, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 0, "offset": 50}]}]}),
        step("unknown partition", 21, 2, {"timeout_ms": 30000, "topics": [
            {"name": TOPIC, "partitions": [{"partition_index": 3, "offset": 1}]}]}),
        step("unknown topic", 21, 2, {"timeout_ms": 30000, "topics": [
            {"name": "conf-dr-missing-{run}", "partitions": [{"partition_index": 0, "offset": 1}]}]}),
        step("earliest after", 2, 9, list_offsets(-2)),
        step("fetch below the start", 1, 12, _fetch(12, 0)),
    ]
    producers = [
        *create_topic(TOPIC),
        step("init idempotent", 22, 4, {"transactional_id": None, "transaction_timeout_ms": -1, "producer_id": -1,
                                        "producer_epoch": -1},
             capture={"pid": "producer_id", "epoch": "producer_epoch"}, retry_on=COORDINATOR_SETTLING,
             why="a fresh broker hands out producer ids once its first block of them is allocated"),
        produce(TOPIC, ["i0", "i1"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=0,
                name="idempotent"),
        produce(TOPIC, ["i0", "i1"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=0,
                name="duplicate"),
        produce(TOPIC, ["i5"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=5,
                name="sequence gap"),
        produce(TOPIC, ["i2"], producer_id="{$pid}", producer_epoch="{$epoch}", base_sequence=2, name="in order"),
        step("describe producers", 61, 0, {"topics": [{"name": TOPIC, "partition_indexes": [0, 4]}]},
             varying={"last_timestamp": "timestamp"}, why="the producer's last write time"),
        step("describe producers unknown topic", 61, 0,
             {"topics": [{"name": "conf-dp-missing-{run}", "partition_indexes": [0]}]}),
        step("fetch", 1, 12, _fetch(12)),
    ]
    return [Script("list_offsets.cases", listing), Script("offset_for_leader_epoch.cases", epochs),
            Script("delete_records.cases", deleting), Script("idempotence.cases", producers)]


def scripts() -> list[Script]:
    return [*produce_scripts(), *fetch_scripts(), *offsets_scripts()]
