"""Produce and consume with every client: keys, headers and timestamps in order per partition, each
compression codec, null versus empty keys and values, a ~900 KB record, and max.message.bytes.

Records written by each client are read back by every client (by assignment, without a consumer group).
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pytest

from compat_tests.kemu_process import KemuServeProcess
from compat_tests.record_clients import (
    CLIENTS,
    Client,
    KcatClient,
    ProduceFailed,
    Received,
    Record,
    create_topic,
    require_codec,
)

PARTITIONS = 3
PER_PARTITION = 20
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
# What each client calls the broker's MESSAGE_TOO_LARGE.
TOO_LARGE = {"confluent-kafka": "MSG_SIZE_TOO_LARGE", "kafka-python": "MessageSizeTooLargeError",
             "aiokafka": "MessageSizeTooLargeError", "kafkajs": "MESSAGE_TOO_LARGE",
             "kcat": "Broker: Message size too large"}


@pytest.fixture(params=list(CLIENTS))
def client(request: pytest.FixtureRequest, kemu_server: KemuServeProcess) -> Client:
    return CLIENTS[request.param](kemu_server.bootstrap)


def all_clients(bootstrap: str) -> list[Client]:
    return [cls(bootstrap) for cls in CLIENTS.values()]


def dataset(producer: Client, partition: int) -> list[Record]:
    """Keyed records with headers and (except from kcat, which stamps its own) past timestamps."""
    base = int(time.time() * 1000) - 600_000
    records = []
    for i in range(PER_PARTITION):
        if isinstance(producer, KcatClient):
            records.append(Record(partition, f"key-{i % 4}".encode(), f"{producer.name}-p{partition}-{i}".encode(),
                                  (("source", b"kcat"),)))
        else:
            records.append(Record(partition, f"key-{i % 4}".encode(), f"{producer.name}-p{partition}-{i}".encode(),
                                  (("source", producer.name.encode()), ("seq", str(i).encode())),
                                  base + partition * 1000 + i))
    return records


def assert_read_back(reader: Client, topic: str, partition: int, sent: list[Record], first_offset: int,
                     window: tuple[int, int]) -> None:
    got = reader.read(topic, partition, first_offset, len(sent))
    assert [r.offset for r in got] == list(range(first_offset, first_offset + len(sent))), reader.name
    assert [(r.key, r.value) for r in got] == [(s.key, s.value) for s in sent], reader.name
    assert [dict(r.headers) for r in got] == [dict(s.headers) for s in sent], reader.name
    for received, record in zip(got, sent, strict=True):
        if record.timestamp is not None:
            assert received.timestamp == record.timestamp, reader.name
        else:
            assert window[0] - 1000 <= received.timestamp <= window[1] + 1000, reader.name


def test_keyed_records_in_order_per_partition(client: Client, kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name, PARTITIONS)
    started = int(time.time() * 1000)
    sent = {p: dataset(client, p) for p in range(PARTITIONS)}
    for records in sent.values():
        assert client.produce(topic_name, records) == list(range(PER_PARTITION))
    finished = int(time.time() * 1000)
    for reader in all_clients(kemu_server.bootstrap):
        for partition, records in sent.items():
            assert_read_back(reader, topic_name, partition, records, 0, (started, finished))


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compression(client: Client, codec: str, kemu_server: KemuServeProcess, topic_name: str) -> None:
    require_codec(client, codec)
    create_topic(kemu_server.bootstrap, topic_name)
    records = [Record(0, f"k{i}".encode(), f"{codec} compressed value {i} ".encode() * 20,
                      (("source", client.name.encode()),)) for i in range(50)]
    assert client.produce(topic_name, records, compression=codec)[0] == 0
    # The broker keeps the client's batches as they came: compressed with the client's codec.
    assert codec_ids_on_disk(kemu_server.data_dir / f"{topic_name}-0") == {CODEC_IDS[codec]}
    for reader in all_clients(kemu_server.bootstrap):
        if codec in reader.read_codecs:
            got = reader.read(topic_name, 0, 0, len(records))
            assert [(r.key, r.value) for r in got] == [(s.key, s.value) for s in records], reader.name


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_kcat_compresses_the_old_codecs_as_to_kafka_4(codec: str, kemu_server: KemuServeProcess,
                                                      topic_name: str) -> None:
    """librdkafka before 2.8 decides gzip/snappy/lz4 support from Produce v2, which Kafka 4 serves no longer
    (KIP-896) but still lists in ApiVersions for that reason (KAFKA-18659); kemu lists Produce from v0 as
    Kafka 4.3 does, so kcat compresses as it does against Kafka 4.3 (where it sent them uncompressed while
    kemu listed Produce from v3)."""
    create_topic(kemu_server.bootstrap, topic_name)
    records = [Record(0, f"k{i}".encode(), b"compressible " * 50) for i in range(20)]
    KcatClient(kemu_server.bootstrap).produce(topic_name, records, compression=codec)
    assert codec_ids_on_disk(kemu_server.data_dir / f"{topic_name}-0") == {CODEC_IDS[codec]}
    got = CLIENTS["confluent-kafka"](kemu_server.bootstrap).read(topic_name, 0, 0, len(records))
    assert [r.value for r in got] == [r.value for r in records]


def codec_ids_on_disk(directory: Path) -> set[int]:
    """The compression codec of every batch in the partition's first segment."""
    data = (directory / f"{0:020d}.log").read_bytes()
    codecs, position = set(), 0
    while position + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, position + 8)
        (attributes,) = struct.unpack_from(">h", data, position + 21)
        codecs.add(attributes & 0x07)
        position += 12 + length
    return codecs


NULL_AND_EMPTY = [(None, None), (b"", b""), (None, b""), (b"", None), (b"k", None), (None, b"v")]


def test_null_and_empty_keys_and_values_stay_distinct(client: Client, kemu_server: KemuServeProcess,
                                                      topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name)
    if isinstance(client, KcatClient):
        # kcat writes empty keys and values, or with -Z nulls instead: one of each.
        client.produce(topic_name, [Record(0, b"", b"")])
        client.produce(topic_name, [Record(0, None, None)], null_empty=True)
        expected = [(b"", b""), (None, None)]
    else:
        expected = [pair for pair in NULL_AND_EMPTY if client.allows_null_key_and_value or pair != (None, None)]
        client.produce(topic_name, [Record(0, key, value) for key, value in expected])
    for reader in all_clients(kemu_server.bootstrap):
        if isinstance(reader, KcatClient):
            continue  # kcat -J cannot tell null from empty in every field; checked on its own below
        got = reader.read(topic_name, 0, 0, len(expected))
        assert [(r.key, r.value) for r in got] == expected, reader.name


def test_kcat_reads_null_and_empty_apart(kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name)
    CLIENTS["confluent-kafka"](kemu_server.bootstrap).produce(
        topic_name, [Record(0, key, value) for key, value in NULL_AND_EMPTY])
    got: list[Received] = KcatClient(kemu_server.bootstrap).read(topic_name, 0, 0, len(NULL_AND_EMPTY))
    assert [(r.key, r.value) for r in got] == NULL_AND_EMPTY


def test_a_900_kb_record_is_accepted(client: Client, kemu_server: KemuServeProcess, topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name)
    # Random text, so no codec could shrink it (kcat needs text).
    value = os.urandom(450 * 1024).hex().encode()
    [offset] = client.produce(topic_name, [Record(0, b"big", value)])
    [got] = client.read(topic_name, 0, offset, 1)
    assert (got.key, len(got.value or b""), got.value == value) == (b"big", len(value), True)


def test_a_record_over_max_message_bytes_is_refused(client: Client, kemu_server: KemuServeProcess,
                                                    topic_name: str) -> None:
    create_topic(kemu_server.bootstrap, topic_name, configs={"max.message.bytes": "100000"})
    with pytest.raises(ProduceFailed) as refused:
        client.produce(topic_name, [Record(0, b"k", os.urandom(100_000).hex().encode())])
    assert TOO_LARGE[client.name] in refused.value.error
    # The partition is still usable and nothing was written.
    assert client.produce(topic_name, [Record(0, b"k", b"small")]) == [0]
