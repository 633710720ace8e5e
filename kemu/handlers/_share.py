"""What ShareFetch (78) and ShareAcknowledge (79) share: the share session a request runs in, its
acknowledgements applied partition by partition, and the answer's topics grouped by topic id."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from kemu.coordinators.share_fetch import ShareFetchManager, TopicPartition
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages.k78_share_fetch import (
        ShareFetchRequest,
        ShareFetchRequestTopics,
        ShareFetchResponseResponsesPartitionsCurrentLeader,
    )
    from kemu.wire.messages.k79_share_acknowledge import ShareAcknowledgeRequest, ShareAcknowledgeRequestTopics

PartitionAnswer = TypeVar("PartitionAnswer")

MAX_MEMBER_ID_LENGTH = 36  # KafkaApis.isMemberIdValid


def requesting_member(ctx: RequestContext,
                      body: ShareFetchRequest | ShareAcknowledgeRequest) -> tuple[str, str] | ErrorCode:
    """The group and member ids that key the request's session, or the error KafkaApis' first checks refuse it
    with: a group id (null refused, "" allowed), READ on the group, then a member id of 1 to 36 characters.
    Kafka's answer to these carries no message (getErrorResponse keeps only the code)."""
    group_id, member_id = body["group_id"], body["member_id"]
    if group_id is None:
        return ErrorCode.INVALID_REQUEST
    if not authz.allowed(ctx, authz.READ, authz.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    if not member_id or len(member_id) > MAX_MEMBER_ID_LENGTH:
        return ErrorCode.INVALID_REQUEST
    return group_id, member_id


def topic_names(ctx: RequestContext, topic_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str | None]:
    broker = ctx.broker
    names: dict[uuid.UUID, str | None] = {}
    for topic_id in topic_ids:
        topic = broker.topics.by_id(topic_id)
        names[topic_id] = None if topic is None else topic.name
    return names


def refusal(ctx: RequestContext, names: dict[uuid.UUID, str | None], tp: TopicPartition) -> ErrorCode:
    """A partition's error before it is read or acknowledged: an unknown topic id, a partition it lacks, no
    READ on the topic."""
    topic_id, index = tp
    name = names.get(topic_id)
    if name is None:
        return ErrorCode.UNKNOWN_TOPIC_ID
    topic = ctx.broker.topics.get(name)
    if topic is None or not 0 <= index < len(topic.partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if not authz.allowed(ctx, authz.READ, authz.TOPIC, name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return ErrorCode.NONE


def acknowledge_all(ctx: RequestContext, manager: ShareFetchManager, group_id: str, member_id: str,
                    topics: list[ShareFetchRequestTopics] | list[ShareAcknowledgeRequestTopics],
                    names: dict[uuid.UUID, str | None],
                    renew: bool) -> dict[TopicPartition, tuple[ErrorCode, str | None]]:
    outcomes: dict[TopicPartition, tuple[ErrorCode, str | None]] = {}
    for topic in topics:
        for p in topic["partitions"]:
            batches = p["acknowledgement_batches"]
            if not batches:
                continue
            tp = (topic["topic_id"], p["partition_index"])
            refused = refusal(ctx, names, tp)
            if refused is not ErrorCode.NONE:
                outcomes[tp] = (refused, None)
                continue
            outcome = manager.acknowledge(group_id, member_id, tp[0], tp[1], batches, renew_allowed=renew)
            outcomes[tp] = (outcome.error, outcome.message)
    return outcomes


def by_topic(partitions: dict[TopicPartition, PartitionAnswer]) -> dict[uuid.UUID, list[PartitionAnswer]]:
    """The partitions' answers grouped by topic id, in the order the topics first come."""
    grouped: dict[uuid.UUID, list[PartitionAnswer]] = {}
    for (topic_id, _), data in partitions.items():
        grouped.setdefault(topic_id, []).append(data)
    return grouped


def current_leader() -> ShareFetchResponseResponsesPartitionsCurrentLeader:
    """A partition's current_leader: Kafka fills it only for NOT_LEADER_OR_FOLLOWER, which a single kemu
    never answers; otherwise it is the message's default, leader 0 at epoch 0. (ShareAcknowledge's struct has
    the same fields.)"""
    return {"leader_id": 0, "leader_epoch": 0}
