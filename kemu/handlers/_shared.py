"""What several group and transaction handlers share: the client's address as Kafka shows it, the core's
request context, waiting on a JoinGroup/SyncGroup result, splitting a request's topics into hosted and
unknown ones and merging per-topic results back, and PRODUCER_FENCED for versions that predate it."""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import trio

from kemu.broker.broker import BrokerCore
from kemu.groups import GroupRequestContext, Pending
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    # OffsetCommit's per-topic partition errors. TxnOffsetCommit's and OffsetDelete's have the same fields but
    # the topic id, so a list of these is an answer of theirs too (the encoder leaves out the id they lack).
    from kemu.wire.messages.k08_offset_commit import OffsetCommitResponseTopics as TopicErrors
    from kemu.wire.messages.k08_offset_commit import OffsetCommitResponseTopicsPartitions as PartitionError

T = TypeVar("T")
# A request's topic as OffsetCommit, TxnOffsetCommit and OffsetDelete carry it (each its own TypedDict, or a
# copy with the name an id resolves to): `name`, maybe `topic_id`, `partitions` of `partition_index`.
RequestTopic = Mapping[str, Any]
ZERO_UUID = uuid.UUID(int=0)


def client_host(host: str) -> str:
    """The client's address as Kafka shows it (Java's InetAddress.toString of an unresolved address):
    "/127.0.0.1", and "/0:0:0:0:0:0:0:1" for IPv6."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return f"/{host}"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return f"/{address.ipv4_mapped}"  # Java reports a v4-mapped peer as an Inet4Address
        groups = address.exploded.split(":")
        return "/" + ":".join(format(int(group, 16), "x") for group in groups)
    return f"/{address}"


def core_context(api_version: int, client_id: str | None, host: str) -> GroupRequestContext:
    return GroupRequestContext(api_version=api_version, client_id=client_id or "", client_host=client_host(host))


async def wait_for_result(pending: Pending[T], detach: Callable[[], None]) -> T:
    """The result of a JoinGroup/SyncGroup `Pending`: at once if it is done, else after letting the
    connection's next request start (`detach`) and waiting until the coordinator completes it."""
    if not pending.done:
        done = trio.Event()
        pending.add_done_callback(lambda _result: done.set())
        detach()
        await done.wait()
    return pending.result()


def split_hosted(broker: BrokerCore, topics: Sequence[RequestTopic],
                 denied: Collection[str] = ()) -> tuple[list[dict[str, Any]], list[TopicErrors]]:
    """Split a request's topics (each with `name` and `partitions` of `partition_index`) into those this
    broker hosts, with their topic ids, and, in response shape, UNKNOWN_TOPIC_OR_PARTITION for the rest — the
    check Kafka's KafkaApis makes before offsets reach the coordinator — or TOPIC_AUTHORIZATION_FAILED for
    `denied` ones. A topic whose `name` is None was named by an id no topic has (OffsetCommit v10):
    UNKNOWN_TOPIC_ID. The answers keep the request's `topic_id`, which v10 answers by. The hosted topics go to
    the groups core, which speaks dicts."""
    known: list[dict[str, Any]] = []
    unknown: list[TopicErrors] = []
    for topic in topics:
        if topic["name"] is None:
            unknown.append(_refused_topic({**topic, "name": ""}, topic["partitions"], ErrorCode.UNKNOWN_TOPIC_ID))
            continue
        if topic["name"] in denied:
            unknown.append(_refused_topic(topic, topic["partitions"], ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            continue
        found = broker.topics.get(topic["name"])
        hosted = [p for p in topic["partitions"]
                  if found is not None and 0 <= p["partition_index"] < len(found.partitions)]
        missing = [p for p in topic["partitions"] if p not in hosted]
        if hosted:
            assert found is not None
            known.append({**topic, "topic_id": found.topic_id, "partitions": hosted})
        if missing:
            unknown.append(_refused_topic(topic, missing, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    return known, unknown


def _refused_topic(topic: RequestTopic, partitions: Iterable[Mapping[str, Any]], code: ErrorCode) -> TopicErrors:
    return {"name": topic["name"], "topic_id": topic.get("topic_id", ZERO_UUID), "partitions": [
        {"partition_index": p["partition_index"], "error_code": code} for p in partitions]}


def topic_errors(topics: Iterable[RequestTopic], code: ErrorCode) -> list[TopicErrors]:
    """`code` for every partition of a request's topics, in the response's shape (with the topic's id too,
    which OffsetCommit v10 answers by), as the groups core's partition_errors answers them."""
    return [_refused_topic(topic, topic["partitions"], code) for topic in topics]


def merge_topics(first: Sequence[TopicErrors], second: Sequence[TopicErrors],
                 key: Literal["name", "topic_id"] = "name") -> list[TopicErrors]:
    """Per-topic partition results merged as Kafka's response builders do: a topic present in both (the same
    `key`: its name, or its id where the version answers by id) gets the second's partitions appended; the
    others keep their order, first's topics first."""
    merged: list[TopicErrors] = []
    by_key: dict[str | uuid.UUID, list[PartitionError]] = {}
    for topic in first:
        partitions = list(topic["partitions"])
        merged.append({**topic, "partitions": partitions})
        by_key[topic[key]] = partitions
    for topic in second:
        existing = by_key.get(topic[key])
        if existing is None:
            partitions = list(topic["partitions"])
            merged.append({**topic, "partitions": partitions})
            by_key[topic[key]] = partitions
        else:
            existing.extend(topic["partitions"])
    return merged


def fenced_for_version(error: ErrorCode, version: int, first_version: int) -> ErrorCode:
    """PRODUCER_FENCED as an API version before `first_version` knows it: INVALID_PRODUCER_EPOCH, which such
    clients handle the same way (KafkaApis does this for InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn
    and EndTxn)."""
    if error is ErrorCode.PRODUCER_FENCED and version < first_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error
