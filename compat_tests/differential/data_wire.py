"""Raw data-path requests for the differential tests (Produce, Fetch, ListOffsets, DeleteRecords, topics), and
the observations made of their answers: a partition's fetch state and its batches, header and records.

Everything goes through kemu's codec (Target.request / KafkaSocket), so Kafka and kemu are asked exactly the
same bytes. Observations are keyed by natural ids (topic name, partition, offset) so a missing partition or
batch is one difference, not a shifted list.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from compat_tests.differential.compare import check
from compat_tests.differential.normalise import kind_of
from compat_tests.differential.targets import Pair, Target
from compat_tests.polling import wait_for
from kemu.wire.records import iter_batches

PRODUCE, FETCH, LIST_OFFSETS, METADATA, CREATE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID = 0, 1, 2, 3, 19, 21, 22
INCREMENTAL_ALTER_CONFIGS, TOPIC_RESOURCE = 44, 2
PRODUCE_VERSION, FETCH_VERSION, LIST_OFFSETS_VERSION = 13, 18, 10
"""The newest versions both brokers serve (kemu's ranges are issue 31's). From Produce v13 and Fetch v13 topics
go by id: `produce` and `fetch` look each name's id up, and show the answers by name again."""
PRODUCE_TOPIC_ID_VERSION = 13
EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -2, -1, -3, -4
READ_UNCOMMITTED, READ_COMMITTED = 0, 1
BASE_TIME = 1_700_000_000_000

_counter = itertools.count()


def unique_topic(prefix: str) -> str:
    """A topic name no earlier test of this session (on either broker) used."""
    return f"{prefix}-{os.getpid()}-{next(_counter)}-{uuid.uuid4().hex[:6]}"


# --- topics ---------------------------------------------------------------------------------------------

def create_topic(target: Target, name: str, *, partitions: int = 1,
                 configs: Mapping[str, str] | None = None) -> None:
    """CreateTopics, then wait until every partition has a leader that answers ListOffsets."""
    body = target.request(CREATE_TOPICS, 7, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}],
        "timeout_ms": 30000, "validate_only": False})
    [topic] = body["topics"]
    if topic["error_code"] != 0:
        raise AssertionError(f"{target.name}: creating {name} failed: {topic}")

    def ready() -> bool:
        answer = list_offsets(target, {(name, p): LATEST for p in range(partitions)})
        return all(part["error_code"] == 0 for part in answer.values())

    wait_for(ready, what=f"{target.name}: {name}'s leaders")


def alter_topic(target: Target, name: str, configs: Mapping[str, str]) -> None:
    """IncrementalAlterConfigs: set these configs of the topic."""
    body = target.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [{
        "resource_type": TOPIC_RESOURCE, "resource_name": name,
        "configs": [{"name": key, "config_operation": 0, "value": value} for key, value in configs.items()]}],
        "validate_only": False})
    [resource] = body["responses"]
    if resource["error_code"] != 0:
        raise AssertionError(f"{target.name}: altering {name} failed: {resource}")


def topic_id(target: Target, name: str) -> uuid.UUID:
    body = target.request(METADATA, 12, {"topics": [{"name": name, "topic_id": uuid.UUID(int=0)}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})
    [topic] = body["topics"]
    found = topic["topic_id"]
    return found if isinstance(found, uuid.UUID) else uuid.UUID(str(found))


# --- Produce --------------------------------------------------------------------------------------------

def produce_request(records: Mapping[tuple[str, int], bytes | None], *, acks: int = -1,
                    transactional_id: str | None = None, timeout_ms: int = 10000,
                    topic_ids: Mapping[str, uuid.UUID] | None = None) -> dict[str, Any]:
    """A Produce request; with `topic_ids` (Produce v13+) each topic goes by its id."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (name, index), data in records.items():
        topics.setdefault(name, []).append({"index": index, "records": data})
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": timeout_ms,
            "topic_data": [{"name": name, **({"topic_id": topic_ids[name]} if topic_ids is not None else {}),
                            "partition_data": parts} for name, parts in topics.items()]}


def topic_ids_for(target: Target, names: Iterable[str], version: int) -> dict[str, uuid.UUID] | None:
    """Each topic's id on this broker (the zero id for one it lacks) where Produce `version` names topics by
    id, else None."""
    if version < PRODUCE_TOPIC_ID_VERSION:
        return None
    return {name: topic_id(target, name) for name in dict.fromkeys(names)}


def produce(target: Target, records: Mapping[tuple[str, int], bytes | None], *, version: int = PRODUCE_VERSION,
            acks: int = -1, transactional_id: str | None = None) -> dict[str, Any]:
    """Produce; the answer keyed `{topic: {partition: response}}` with the top-level fields beside."""
    ids = topic_ids_for(target, (name for name, _ in records), version)
    body = target.request(PRODUCE, version, produce_request(records, acks=acks, transactional_id=transactional_id,
                                                            topic_ids=ids))
    return keyed_produce(body, ids)


def keyed_produce(body: dict[str, Any], topic_ids: Mapping[str, uuid.UUID] | None = None) -> dict[str, Any]:
    """The answer by topic name: from v13 the ids are named again through `topic_ids`."""
    names = {topic: name for name, topic in (topic_ids or {}).items()}
    answer = {key: value for key, value in body.items() if key != "responses"}
    answer["topics"] = {
        names.get(topic["topic_id"], str(topic["topic_id"])) if topic_ids is not None else topic["name"]:
            {str(part["index"]): part for part in topic["partition_responses"]}
        for topic in body.get("responses", [])}
    return answer


def produce_one(target: Target, name: str, data: bytes, *, partition: int = 0, version: int = PRODUCE_VERSION,
                acks: int = -1) -> dict[str, Any]:
    """Produce one partition's records; its partition response."""
    answer = produce(target, {(name, partition): data}, version=version, acks=acks)
    return dict(answer["topics"][name][str(partition)])


# --- Fetch ----------------------------------------------------------------------------------------------

def fetch_request(partitions: Iterable[tuple[Any, int, int]], *, version: int = FETCH_VERSION,
                  max_bytes: int = 50 * 1024 * 1024, partition_max_bytes: int = 1024 * 1024,
                  isolation_level: int = READ_UNCOMMITTED, max_wait_ms: int = 0, min_bytes: int = 1,
                  current_leader_epoch: int = -1, last_fetched_epoch: int = -1) -> dict[str, Any]:
    """A sessionless Fetch for [(topic name, or id from v13, partition, offset)]."""
    topic_key = "topic_id" if version >= 13 else "topic"
    topics: list[dict[str, Any]] = []
    for topic, index, offset in partitions:
        entry = {"partition": index, "current_leader_epoch": current_leader_epoch, "fetch_offset": offset,
                 "last_fetched_epoch": last_fetched_epoch,
                 "log_start_offset": -1, "partition_max_bytes": partition_max_bytes}
        if topics and topics[-1][topic_key] == topic:
            topics[-1]["partitions"].append(entry)
        else:
            topics.append({topic_key: topic, "partitions": [entry]})
    return {"cluster_id": None, "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes,
            "max_bytes": max_bytes, "isolation_level": isolation_level, "session_id": 0, "session_epoch": -1,
            "topics": topics, "forgotten_topics_data": [], "rack_id": ""}


def fetch(target: Target, partitions: Iterable[tuple[Any, int, int]], *, version: int = FETCH_VERSION,
          names: Mapping[Any, str] | None = None, **options: Any) -> dict[str, Any]:
    """Fetch [(topic, partition, offset)]; the answer keyed `{topic: {partition: observed partition}}`.

    From v13 a topic given by name is sent as its id (and shown by name again); a UUID is sent as it is and
    shown through `names`, or as itself."""
    names = dict(names or {})
    asked = []
    for topic, index, offset in partitions:
        if version >= 13 and isinstance(topic, str):
            name, topic = topic, topic_id(target, topic)
            names[topic] = name
        asked.append((topic, index, offset))
    body = target.request(FETCH, version, fetch_request(asked, version=version, **options))
    topic_key = "topic_id" if version >= 13 else "topic"
    answer = {key: value for key, value in body.items() if key != "responses"}
    answer["topics"] = {}
    for topic in body["responses"]:
        name = names.get(topic[topic_key], str(topic[topic_key]))
        answer["topics"][name] = {str(part["partition_index"]): fetched_partition(part)
                                  for part in topic["partitions"]}
    return answer


def fetched_partition(part: dict[str, Any]) -> dict[str, Any]:
    """A Fetch partition response with its records bytes replaced by their batches, keyed by base offset.

    The raw size of the records is kept too: where both brokers return the same batches it is equal, and it
    shows a trailing partial batch that the decoding ignores."""
    observed = {key: value for key, value in part.items() if key != "records"}
    records = part.get("records") or b""
    observed["records_bytes"] = len(records)
    observed["batches"] = batches(records)
    return observed


def batches(records: bytes | bytearray | memoryview) -> dict[str, Any]:
    """Every whole batch: its header fields, its records' offsets, timestamps, keys, values and headers."""
    found: dict[str, Any] = {}
    for batch in iter_batches(records):
        header = batch.header
        entry: dict[str, Any] = {
            "batch_length": header.batch_length,
            "partition_leader_epoch": header.partition_leader_epoch,
            "magic": header.magic,
            "crc_valid": batch.is_valid(),
            "attributes": header.attributes,
            "last_offset_delta": header.last_offset_delta,
            "base_timestamp": header.base_timestamp,
            "max_timestamp": header.max_timestamp,
            "producer_id": header.producer_id,
            "producer_epoch": header.producer_epoch,
            "base_sequence": header.base_sequence,
            "records_count": header.records_count,
        }
        try:
            entry["records"] = {str(record.offset): {"timestamp": record.timestamp, "key": record.key,
                                                     "value": record.value, "headers": list(record.headers),
                                                     "attributes": record.attributes}
                                for record in batch.records()}
        except ValueError as exc:  # a batch a broker kept that cannot be decoded: that is what it returned
            entry["records"] = f"<undecodable: {type(exc).__name__}>"
        found[str(header.base_offset)] = entry
    return found


def broker_times(observation: Any, since_ms: int) -> Any:
    """The observation with every timestamp the broker's clock gave (a value of a timestamp field at or after
    `since_ms`, the test's start) replaced by "<broker clock>".

    Under LogAppendTime two appends fall in the same millisecond or not depending on the machine's speed,
    so numbering those values (normalise.py) would compare timings; that the broker stamped its own clock,
    and where, is what both must agree on. Timestamps a test chose (BASE_TIME onwards) are kept."""
    if isinstance(observation, dict):
        return {key: "<broker clock>" if (kind_of(str(key)) == "timestamp" and isinstance(value, int)
                                          and value >= since_ms) else broker_times(value, since_ms)
                for key, value in observation.items()}
    if isinstance(observation, list):
        return [broker_times(item, since_ms) for item in observation]
    if isinstance(observation, str):
        # An error message's range of acceptable timestamps around the broker's clock: its width is kept.
        return _CLOCK_RANGE.sub(lambda m: f"[<broker clock>, <broker clock>+{int(m[2]) - int(m[1])}]"
                                if int(m[1]) >= since_ms - 10**10 else m[0], observation)
    return observation


_CLOCK_RANGE = re.compile(r"\[(\d{13}), (\d{13})\]")


def both(pair: Pair, observe: Callable[[Target], Any]) -> tuple[Any, Any]:
    """pair.both(observe), with the broker-clock timestamps of both observations made equal (broker_times)."""
    since = int(time.time() * 1000) - 1
    kafka, kemu = pair.both(observe)
    return broker_times(kafka, since), broker_times(kemu, since)


def compare(pair: Pair, scenario: str, observe: Callable[[Target], Any],
            shown: Callable[[Any], Any] = lambda observation: observation) -> None:
    """Observe both brokers (both()) and check what `shown` keeps of each against the other."""
    kafka, kemu = both(pair, observe)
    check(scenario, shown(kafka), shown(kemu))


def without_sizes(observation: Any) -> Any:
    """The observation without `batch_length`/`records_bytes`: for compressed batches, whose compressed size
    depends on the codec library's version and level (Kafka's Java codecs against kemu's Python ones)."""
    if isinstance(observation, dict):
        return {key: without_sizes(value) for key, value in observation.items()
                if key not in ("batch_length", "records_bytes")}
    if isinstance(observation, list):
        return [without_sizes(item) for item in observation]
    return observation


def consume(target: Target, name: str, partition: int = 0, *, isolation: str = "read_uncommitted",
            timeout_s: float = 30.0) -> list[dict[str, Any]]:
    """What confluent-kafka's consumer reads of the partition, from the beginning up to its latest offset."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    end = list_offsets(target, {(name, partition): LATEST})[(name, partition)]["offset"]
    consumer = Consumer({"bootstrap.servers": target.bootstrap, "group.id": unique_topic("data-reader"),
                         "enable.auto.commit": False, "isolation.level": isolation})
    read: list[dict[str, Any]] = []
    try:
        consumer.assign([TopicPartition(name, partition, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout_s
        while (not read or read[-1]["offset"] < end - 1) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                read.append({"offset": -1, "error": str(message.error())})
                break
            read.append({"offset": message.offset(), "key": message.key(), "value": message.value(),
                         "headers": message.headers() or []})
    finally:
        consumer.close()
    return read


# --- ListOffsets, DeleteRecords -------------------------------------------------------------------------

def list_offsets(target: Target, queries: Mapping[tuple[str, int], int], *, version: int = LIST_OFFSETS_VERSION,
                 isolation_level: int = READ_UNCOMMITTED, current_leader_epoch: int = -1,
                 ) -> dict[tuple[str, int], dict[str, Any]]:
    """ListOffsets for {(topic, partition): timestamp}; the partition answers keyed the same way."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (name, index), timestamp in queries.items():
        topics.setdefault(name, []).append({"partition_index": index, "current_leader_epoch": current_leader_epoch,
                                            "timestamp": timestamp, "max_num_offsets": 1})
    body = target.request(LIST_OFFSETS, version, {
        "replica_id": -1, "isolation_level": isolation_level, "timeout_ms": 30000,
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()]})
    return {(topic["name"], part["partition_index"]): part
            for topic in body["topics"] for part in topic["partitions"]}


def delete_records(target: Target, offsets: Mapping[tuple[str, int], int], *, version: int = 2,
                   ) -> dict[str, Any]:
    """DeleteRecords for {(topic, partition): offset}; the answers keyed `{topic: {partition: answer}}`."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (name, index), offset in offsets.items():
        topics.setdefault(name, []).append({"partition_index": index, "offset": offset})
    body = target.request(DELETE_RECORDS, version, {
        "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()], "timeout_ms": 30000})
    return {topic["name"]: {str(part["partition_index"]): part for part in topic["partitions"]}
            for topic in body["topics"]}


def init_producer_id(target: Target, transactional_id: str | None = None, *, version: int = 4,
                     producer_id: int = -1, producer_epoch: int = -1) -> dict[str, Any]:
    return target.request(INIT_PRODUCER_ID, version, {
        "transactional_id": transactional_id, "transaction_timeout_ms": 60000,
        "producer_id": producer_id, "producer_epoch": producer_epoch})
