"""Produce and Fetch, Kafka against kemu: every codec and timestamp type, through raw batches and through
confluent-kafka, read back with raw Fetch at several versions; Produce's errors; Fetch's edge cases."""

from __future__ import annotations

from typing import Any

import pytest

from compat_tests.differential.data_wire import (
    BASE_TIME,
    FETCH_VERSION,
    PRODUCE,
    PRODUCE_VERSION,
    compare,
    create_topic,
    delete_records,
    fetch,
    keyed_produce,
    produce,
    produce_one,
    produce_request,
    topic_ids_for,
    unique_topic,
    without_sizes,
)
from compat_tests.differential.targets import Pair, Target
from kemu.wire.compression import CompressionType
from kemu.wire.records import ATTRIBUTES_OFFSET, CRC_OFFSET, MAGIC_OFFSET, NewRecord, TimestampType, build_batch, crc_of

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
TIMESTAMP_TYPES = ["CreateTime", "LogAppendTime"]
FETCH_VERSIONS = [4, 11, 13, 17, FETCH_VERSION]


def sample_records(first: int = 0, count: int = 3) -> list[NewRecord]:
    """Records with the shapes that matter: a null key, an empty value, a null value, headers (one null)."""
    shapes = [
        NewRecord(b"value", key=b"key", headers=[("h1", b"x"), ("h2", None)]),
        NewRecord(b"", key=None),
        NewRecord(None, key=b"tombstone"),
        NewRecord(b"v" * 300, key=b"k", headers=[("", b"")]),
    ]
    return [shapes[(first + i) % len(shapes)]._replace(timestamp=BASE_TIME + first + i) for i in range(count)]


def fetch_all_versions(target: Target, name: str, partitions: int, offset: int = 0) -> dict[str, Any]:
    return {f"v{version}": fetch(target, [(name, p, offset) for p in range(partitions)], version=version)
            for version in FETCH_VERSIONS}


def confluent_produce(target: Target, name: str, partition: int, codec: str, count: int) -> list[Any]:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": target.bootstrap, "compression.type": codec, "linger.ms": 1000,
                         "enable.idempotence": True, "acks": "all"})
    reports: list[Any] = []
    for record in sample_records(0, count):
        producer.produce(name, value=record.value, key=record.key, headers=list(record.headers),
                         partition=partition, timestamp=record.timestamp,
                         on_delivery=lambda err, msg: reports.append((err, msg.offset())))
    assert producer.flush(30) == 0
    return [(str(err) if err else None, offset) for err, offset in reports]


@pytest.mark.parametrize("timestamp_type", TIMESTAMP_TYPES)
@pytest.mark.parametrize("codec", CODECS)
def test_codecs_and_timestamp_types(pair: Pair, codec: str, timestamp_type: str) -> None:
    name = unique_topic(f"pf-{codec}-{timestamp_type}")
    compression = CompressionType[codec.upper()]

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, partitions=2, configs={"message.timestamp.type": timestamp_type})
        raw = [produce_one(target, name, build_batch(sample_records(0, 3), compression=compression)),
               produce_one(target, name, build_batch(sample_records(3, 1), compression=compression))]
        client = confluent_produce(target, name, 1, codec, 4)
        return {"raw_produce": raw, "client_produce": client, "fetch": fetch_all_versions(target, name, 2)}

    compare(pair, f"produce_fetch.codec.{codec}.{timestamp_type}", observe)


def test_fetch_from_the_middle_of_a_batch(pair: Pair) -> None:
    """A fetch offset inside a batch returns the whole batch (the consumer skips the records before it)."""
    name = unique_topic("pf-middle")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name)
        produce_one(target, name, build_batch(sample_records(0, 4), compression=CompressionType.LZ4))
        produce_one(target, name, build_batch(sample_records(0, 2)))
        return {str(offset): fetch(target, [(name, 0, offset)]) for offset in (1, 3, 4, 5, 6)}

    compare(pair, "produce_fetch.fetch_inside_batch", observe)


# --- Produce errors -------------------------------------------------------------------------------------

def corrupt_crc(data: bytes) -> bytes:
    broken = bytearray(data)
    broken[CRC_OFFSET] ^= 0xFF
    return bytes(broken)


def wrong_magic(data: bytes, magic: int) -> bytes:
    broken = bytearray(data)
    broken[MAGIC_OFFSET] = magic
    return bytes(broken)


def recrc(data: bytes) -> bytes:
    fixed = bytearray(data)
    fixed[CRC_OFFSET:CRC_OFFSET + 4] = crc_of(data).to_bytes(4, "big")
    return bytes(fixed)


PRODUCE_ERROR_VERSIONS = [3, 6, 7, 8, 11, 12, PRODUCE_VERSION]


def with_attributes(data: bytes, attributes: int) -> bytes:
    changed = bytearray(data)
    changed[ATTRIBUTES_OFFSET:ATTRIBUTES_OFFSET + 2] = attributes.to_bytes(2, "big")
    return recrc(bytes(changed))


def patched(data: bytes, offset: int, value: int, size: int = 4) -> bytes:
    """The batch with a header field overwritten (and its CRC made right again)."""
    changed = bytearray(data)
    changed[offset:offset + size] = value.to_bytes(size, "big", signed=True)
    return recrc(bytes(changed))


def two(**options: Any) -> bytes:
    return build_batch(sample_records(0, 2), **options)


RECORDS_COUNT_OFFSET, LAST_OFFSET_DELTA_OFFSET = 57, 23
TIMESTAMP_LIMITS = {"message.timestamp.before.max.ms": "3600000", "message.timestamp.after.max.ms": "3600000"}
# case -> (the records of partition 0, or of several partitions when a dict; topic configs; acks)
PRODUCE_ERRORS: dict[str, tuple[Any, dict[str, str], int]] = {
    "message_too_large": (build_batch([NewRecord(b"x" * 2000, timestamp=BASE_TIME)]), {}, -1),
    "unknown_topic": ({"-absent": two()}, {}, -1),
    "unknown_partition": ({7: two()}, {}, -1),
    "acks_2": (two(), {}, 2),
    "acks_minus_2": (two(), {}, -2),
    "acks_1": (two(), {}, 1),
    "corrupt_crc": (corrupt_crc(two()), {}, -1),
    "magic_0": (recrc(wrong_magic(two(), 0)), {}, -1),
    "magic_1": (recrc(wrong_magic(two(), 1)), {}, -1),
    "magic_3": (recrc(wrong_magic(two(), 3)), {}, -1),
    "timestamp_too_old": (build_batch([NewRecord(b"a", timestamp=BASE_TIME)] * 2), TIMESTAMP_LIMITS, -1),
    "timestamp_too_new": (build_batch([NewRecord(b"a", timestamp=10**13)] * 2), TIMESTAMP_LIMITS, -1),
    "timestamp_negative": (build_batch([NewRecord(b"a", timestamp=-5)]), {}, -1),
    "empty_records": (b"", {}, -1),
    "truncated_batch": (two()[:-3], {}, -1),
    "two_batches": (two() + two(), {}, -1),
    "one_good_one_bad_partition": ({0: two(), 1: corrupt_crc(two())}, {}, -1),
    "codec_7": (with_attributes(two(), 7), {}, -1),
    "client_log_append_time": (two(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=BASE_TIME + 9),
                               {}, -1),
    "client_control_batch": (two(control=True), {}, -1),
    "transactional_without_id": (two(transactional=True, producer_id=5, producer_epoch=0, base_sequence=0), {}, -1),
    "producer_id_without_sequence": (two(producer_id=5, producer_epoch=0), {}, -1),
    "base_offset_not_zero": (two(base_offset=1234), {}, -1),
    "leader_epoch_set": (two(partition_leader_epoch=7), {}, -1),
    "zstd_v3_to_v6": (two(compression=CompressionType.ZSTD), {}, -1),
    "compacted_without_key": (build_batch([NewRecord(b"no key", timestamp=BASE_TIME)]),
                              {"cleanup.policy": "compact"}, -1),
    "min_insync_replicas": (two(), {"min.insync.replicas": "2"}, -1),
    "records_count_too_high": (patched(two(), RECORDS_COUNT_OFFSET, 3), {}, -1),
    "records_count_too_low": (patched(two(), RECORDS_COUNT_OFFSET, 1), {}, -1),
    "last_offset_delta_too_high": (patched(two(), LAST_OFFSET_DELTA_OFFSET, 5), {}, -1),
    "last_offset_delta_negative": (patched(two(), LAST_OFFSET_DELTA_OFFSET, -1), {}, -1),
    "trailing_garbage": (two() + b"\0" * 5, {}, -1),
    "gzip_garbage": (with_attributes(two(), 1), {}, -1),
    "header_claims_a_record_more": (patched(patched(two(), RECORDS_COUNT_OFFSET, 3), LAST_OFFSET_DELTA_OFFSET, 2),
                                    {}, -1),
    "min_insync_replicas_acks_1": (two(), {"min.insync.replicas": "2"}, 1),
    "log_append_time_ignores_limits": (build_batch([NewRecord(b"a", timestamp=BASE_TIME)]),
                                       {**TIMESTAMP_LIMITS, "message.timestamp.type": "LogAppendTime"}, -1),
    "too_large_once_recompressed": (build_batch([NewRecord(b"z" * 3000, timestamp=BASE_TIME)],
                                                compression=CompressionType.GZIP),
                                    {"compression.type": "uncompressed"}, -1),
}


@pytest.mark.parametrize("case", sorted(PRODUCE_ERRORS))
# Not here: null records. Kafka 4.3 fails on them with a NullPointerException and never answers.
def test_produce_errors(pair: Pair, case: str) -> None:
    name = unique_topic(f"pf-err-{case}")
    data, configs, acks = PRODUCE_ERRORS[case]
    records: dict[tuple[str, int], bytes | None]
    if isinstance(data, dict):
        records = {(name + key, 0) if isinstance(key, str) else (name, key): value for key, value in data.items()}
    else:
        records = {(name, 0): data}

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, partitions=2, configs={"max.message.bytes": "1000", **configs})
        answers = {}
        for version in PRODUCE_ERROR_VERSIONS:
            answers[f"v{version}"] = produce(target, records, version=version, acks=acks)
        return {"produce": answers, "after": fetch(target, [(name, 0, 0), (name, 1, 0)])}

    compare(pair, f"produce_fetch.produce_error.{case}", observe)


@pytest.mark.parametrize("case", ["unknown_topic", "corrupt_crc"])
def test_produce_acks_0_failing_closes_the_connection(pair: Pair, case: str) -> None:
    """acks=0 gets no answer: a failed one closes the connection instead, so the producer notices."""
    name = unique_topic(f"pf-acks0-{case}")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name)
        records = ({(name + "-absent", 0): two()} if case == "unknown_topic" else {(name, 0): corrupt_crc(two())})
        ids = topic_ids_for(target, (topic for topic, _ in records), PRODUCE_VERSION)
        with target.connect() as connection:
            connection.send(PRODUCE, PRODUCE_VERSION, produce_request(records, acks=0, topic_ids=ids))
            closed = connection.closed_by_peer()
        return {"closed": closed, "fetch": fetch(target, [(name, 0, 0)])}

    compare(pair, f"produce_fetch.acks_0_fails.{case}", observe)


def test_produce_acks_0_is_answered_by_nothing(pair: Pair) -> None:
    """acks=0: no response; the records are appended all the same (seen by the next fetch)."""
    name = unique_topic("pf-acks0")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name)
        ids = topic_ids_for(target, [name], PRODUCE_VERSION)
        with target.connect() as connection:
            connection.send(PRODUCE, PRODUCE_VERSION,
                            produce_request({(name, 0): build_batch(sample_records(0, 2))}, acks=0, topic_ids=ids))
            connection.send(PRODUCE, PRODUCE_VERSION,
                            produce_request({(name, 0): build_batch(sample_records(2, 1))}, acks=1, topic_ids=ids))
            correlation, answer = connection.receive(PRODUCE, PRODUCE_VERSION)
        if ids is not None:  # by name again, as the other answers are shown
            answer = keyed_produce(answer, ids)
        return {"first_answer_correlation": correlation, "answer": answer, "fetch": fetch(target, [(name, 0, 0)])}

    compare(pair, "produce_fetch.acks_0", observe)


@pytest.mark.parametrize(("topic_codec", "producer_codec", "timestamp_type"), [
    ("gzip", "lz4", "CreateTime"),
    ("zstd", "none", "CreateTime"),
    ("uncompressed", "snappy", "CreateTime"),
    ("producer", "zstd", "CreateTime"),
    ("lz4", "lz4", "LogAppendTime"),
    ("snappy", "gzip", "LogAppendTime"),
])
def test_topic_compression_differs_from_the_producers(pair: Pair, topic_codec: str, producer_codec: str,
                                                      timestamp_type: str) -> None:
    """The broker recompresses to the topic's compression.type (and keeps the producer's when "producer")."""
    name = unique_topic(f"pf-recompress-{topic_codec}-{producer_codec}")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, configs={"compression.type": topic_codec,
                                            "message.timestamp.type": timestamp_type})
        produced = [produce_one(target, name, build_batch(sample_records(0, 4),
                                                          compression=CompressionType[producer_codec.upper()])),
                    produce_one(target, name, build_batch(sample_records(1, 2)))]
        return {"produce": produced, "fetch": fetch(target, [(name, 0, 0)])}

    # The recompressed bytes are the codec library's own (Java's against Python's): sizes are left out.
    compare(pair, f"produce_fetch.recompress.{topic_codec}.{producer_codec}", observe, without_sizes)


# --- Fetch edge cases -----------------------------------------------------------------------------------

def filled_topic(target: Target, name: str, *, partitions: int = 1) -> None:
    """Three batches of 3, 1 and 2 records in every partition (offsets 0-5)."""
    create_topic(target, name, partitions=partitions)
    for partition in range(partitions):
        for first, count in ((0, 3), (3, 1), (4, 2)):
            produce_one(target, name, build_batch(sample_records(first, count)), partition=partition)


@pytest.mark.parametrize("version", [4, 11, FETCH_VERSION])
def test_fetch_offset_out_of_range(pair: Pair, version: int) -> None:
    name = unique_topic(f"pf-oor-v{version}")

    def observe(target: Target) -> dict[str, Any]:
        filled_topic(target, name)
        deleted = delete_records(target, {(name, 0): 3})
        return {"deleted": deleted,
                **{str(offset): fetch(target, [(name, 0, offset)], version=version)
                   for offset in (0, 2, 3, 6, 7, 100, -1)}}

    compare(pair, f"produce_fetch.fetch_out_of_range.v{version}", observe)


@pytest.mark.parametrize("version", [11, 13, FETCH_VERSION])
def test_fetch_unknown_topic(pair: Pair, version: int) -> None:
    import uuid

    name = unique_topic("pf-unknown")
    # A topic id no broker has; Kafka and kemu must both say so (the id shows as a placeholder).
    absent: Any = uuid.UUID("5f1e5e0b-0000-4000-8000-00000000beef") if version >= 13 else name + "-absent"

    def observe(target: Target) -> dict[str, Any]:
        filled_topic(target, name)
        return {"absent": fetch(target, [(absent, 0, 0)], version=version),
                "absent_partition": fetch(target, [(name, 5, 0)], version=version),
                "mixed": fetch(target, [(name, 0, 0), (absent, 0, 0)], version=version)}

    compare(pair, f"produce_fetch.fetch_unknown_topic.v{version}", observe)


@pytest.mark.parametrize(("max_bytes", "partition_max_bytes"), [
    (1, 1024 * 1024), (100, 1024 * 1024), (250, 1024 * 1024), (10_000, 1), (10_000, 150), (10_000, 300),
    (300, 10_000),
])
def test_fetch_size_limits(pair: Pair, max_bytes: int, partition_max_bytes: int) -> None:
    """A limit smaller than the first batch still returns that batch (only for the first partition with
    data); past it the limits cut the answer, which may end inside a batch."""
    name = unique_topic("pf-limits")

    def observe(target: Target) -> dict[str, Any]:
        filled_topic(target, name, partitions=3)
        limits = {"max_bytes": max_bytes, "partition_max_bytes": partition_max_bytes}
        observed = {f"v{version}": fetch(target, [(name, p, 0) for p in range(3)], version=version, **limits)
                    for version in (4, 11)}
        observed["from_inside"] = fetch(target, [(name, 0, 1), (name, 1, 4), (name, 2, 6)], **limits)
        return observed

    compare(pair, f"produce_fetch.fetch_limits.{max_bytes}.{partition_max_bytes}", observe)


def test_fetch_a_zstd_topic_at_old_versions(pair: Pair) -> None:
    """A topic whose compression.type is zstd, read at Fetch versions from before zstd (v10) and after."""
    name = unique_topic("pf-zstd-topic")

    def observe(target: Target) -> dict[str, Any]:
        create_topic(target, name, configs={"compression.type": "zstd"})
        produce_one(target, name, build_batch(sample_records(0, 3)))
        return {f"v{version}": fetch(target, [(name, 0, 0)], version=version) for version in (4, 9, 10, 11)}

    # The broker's zstd bytes are the codec library's own: sizes are left out.
    compare(pair, "produce_fetch.zstd_topic_old_fetch", observe, without_sizes)


def test_fetch_odd_requests(pair: Pair) -> None:
    """A negative partition_max_bytes, a partition asked twice, a wait on an empty partition."""
    name = unique_topic("pf-odd")

    def observe(target: Target) -> dict[str, Any]:
        filled_topic(target, name, partitions=2)
        create_topic(target, name + "-empty")
        return {"negative_limit": fetch(target, [(name, 0, 0)], partition_max_bytes=-1),
                "twice": fetch(target, [(name, 0, 0), (name, 0, 3)], version=11),
                "waiting_on_nothing": fetch(target, [(name + "-empty", 0, 0)], max_wait_ms=100, min_bytes=1000),
                "min_bytes_unmet": fetch(target, [(name, 1, 0)], max_wait_ms=100, min_bytes=100_000)}

    compare(pair, "produce_fetch.fetch_odd", observe)
