"""Metadata (key 3), versions 0-13.

v0: an empty topic list means all topics (v1+: null means all, empty means none). v1 adds racks, the
controller id and is_internal; v2 the cluster id; v3 throttle time; v4 `allow_auto_topic_creation`
(earlier versions always allow it); v5 offline replicas; v7 leader epochs; v8 authorized operations (what
the authorizer allows; every operation without one); v9 flexible; v10 topic ids in responses, but requests
may not use them (nor null names) before v12, where topics can be looked up by id (UNKNOWN_TOPIC_ID if unknown);
v13 a top-level error code, for the REBOOTSTRAP_REQUIRED of KIP-1102, which a broker never sends: it is 0
but in an error response, which carries the error there too (MetadataRequest.getErrorResponse).

A missing topic is auto-created when both `auto.create.topics.enable` and the request allow it; like Kafka
4.3 (AutoTopicCreationManager), that first answer is UNKNOWN_TOPIC_OR_PARTITION, and the topic appears in a
later one. The controller id is a live broker (a KRaft broker names one, not the unreachable quorum). Every
node of a cluster answers the same: its live brokers, and each partition's leader, replicas, ISR and offline
replicas; a partition whose every in-sync replica is offline has no leader (-1) and LEADER_NOT_AVAILABLE.

With an authorizer (KafkaApis.handleTopicMetadataRequest): a topic the client may not DESCRIBE is left out
of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED when named; auto-creation needs CREATE on
the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED; the cluster's authorized operations are 0
unless it may DESCRIBE the cluster.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from kemu.broker.errors import ApiError
from kemu.broker.partition import NO_LEADER
from kemu.broker.topic_names import invalid_name_reason, is_internal
from kemu.broker.topics import Topic
from kemu.handlers import _authorize as authz
from kemu.handlers._pacing import Pacer
from kemu.handlers.context import RequestContext
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k03_metadata import (
        MetadataRequest,
        MetadataRequestTopics,
        MetadataResponse,
        MetadataResponseTopics,
    )

KEY = 3
# Auto-creating a topic waits its turn behind other creations (kemu.handlers._creating).
SUSPENDS = True

ZERO_UUID = uuid.UUID(int=0)


async def handle(ctx: RequestContext, request: Incoming[MetadataRequest]) -> MetadataResponse:
    broker, body, version = ctx.broker, request.body, request.version
    requested: list[MetadataRequestTopics] | None = body["topics"]
    all_topics = requested is None or (version == 0 and not requested)
    if requested and version < 12:
        for entry in requested:
            if entry["name"] is None:
                raise ApiError(ErrorCode.INVALID_REQUEST, f"Topic name can not be null for version {version}")
            if entry["topic_id"] != ZERO_UUID:
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               f"Topic IDs are not supported in requests for version {version}")
    elif requested and any(e["name"] is None and e["topic_id"] == ZERO_UUID for e in requested):
        # A topic named by neither name nor id: Kafka 4.3 takes its null name on to the topic lookups, which
        # throw, and answers the request's error response, UNKNOWN_SERVER_ERROR (recorded, with and without
        # an authorizer: conformance metadata and authorizer.denied).
        raise ApiError(ErrorCode.UNKNOWN_SERVER_ERROR)

    unknown_ids: list[uuid.UUID] = []
    if all_topics:
        names: list[str | None] = [topic.name for topic in broker.topics]
    else:
        assert requested is not None
        ids = list(dict.fromkeys(e["topic_id"] for e in requested if e["topic_id"] != ZERO_UUID))
        if ids:
            names = []
            for topic_id in ids:
                found = broker.topics.by_id(topic_id)
                if found is None:
                    unknown_ids.append(topic_id)
                else:
                    names.append(found.name)
        else:
            names = [e["name"] for e in requested]
        names = list(dict.fromkeys(names))
    describable = authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, (n for n in names if n is not None))
    if all_topics:  # topics the client may not describe are not there for it
        names = [name for name in names if name in describable]
    may_create = (broker.config.auto_create_topics_enable and body["allow_auto_topic_creation"]
                  and not all_topics)

    present: list[MetadataResponseTopics] = []
    missing: list[MetadataResponseTopics] = []
    to_create: list[str] = []
    # Looked up before the first yield: the answer names the topics as they were when it began, as Kafka's
    # answers from one image of its metadata, though a request deletes or creates some in between.
    looked_up = [(name, broker.topics.get(name) if name is not None else None) for name in names]
    pacer = Pacer()  # 2,000 topics held the loop for ~50 ms: others are served in between
    for name, topic in looked_up:
        await pacer.tick()
        if name is not None and name not in describable:
            missing.append(_missing(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        elif topic is not None:
            present.append(_topic(topic))
        elif name is None or invalid_name_reason(name) is not None:
            missing.append(_missing(name, ErrorCode.INVALID_TOPIC_EXCEPTION))
        elif may_create:
            if authz.may_create_topic(ctx, name):
                to_create.append(name)
            else:
                missing.append(_missing(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        else:
            missing.append(_missing(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
    if to_create:
        # Topic creation's machinery loads with the first topic a Metadata creates: a broker's first
        # Metadata is often a client's bootstrap, asking for nothing to be made.
        from kemu.admin.topics import plan_auto_creation
        from kemu.handlers._creating import create

        created = await create(broker, lambda: plan_auto_creation(broker, to_create))
        missing.extend(_missing(name, created[name]) for name in to_create)
    topics = present + missing
    if body["include_topic_authorized_operations"]:
        for listed in topics:
            await pacer.tick()
            if listed["error_code"] != ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                # No entry here lacks a name (a topic of neither name nor id is refused above, unknown ids are
                # added below, without operations); the type allows None.
                listed["topic_authorized_operations"] = authz.operations(ctx, authz.TOPIC, listed["name"] or "")
    for topic_id in unknown_ids:
        topics.append({"error_code": int(ErrorCode.UNKNOWN_TOPIC_ID), "name": None, "topic_id": topic_id,
                       "partitions": []})

    return {
        "brokers": [{"node_id": node.node_id, "host": node.host, "port": node.port, "rack": node.rack}
                    for node in broker.brokers(ctx.client.listener_name)],
        "cluster_id": broker.cluster_id,
        "controller_id": broker.controller_id,
        "topics": topics,
        "cluster_authorized_operations": authz.cluster_operations(ctx, body["include_cluster_authorized_operations"]),
    }


def _topic(topic: Topic) -> MetadataResponseTopics:
    return {
        "error_code": 0,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.is_internal,
        "partitions": [
            {"error_code": int(ErrorCode.LEADER_NOT_AVAILABLE if p.leader_id == NO_LEADER else ErrorCode.NONE),
             "partition_index": p.index, "leader_id": p.leader_id, "leader_epoch": p.leader_epoch,
             "replica_nodes": list(p.replicas), "isr_nodes": list(p.isr),
             "offline_replicas": list(p.offline_replicas)}
            for p in topic.partitions
        ],
    }


def _missing(name: str | None, code: ErrorCode) -> MetadataResponseTopics:
    return {"error_code": int(code), "name": name, "topic_id": ZERO_UUID,
            "is_internal": name is not None and is_internal(name), "partitions": []}


def error_response(request: Incoming[MetadataRequest], code: ErrorCode, message: str | None) -> MetadataResponse:
    """Kafka's MetadataRequest.getErrorResponse: the error on every requested topic and, from v13, at the top."""
    return {
        "error_code": int(code),
        "topics": [{"error_code": int(code), "name": entry["name"] if entry["name"] is not None else "",
                    "topic_id": entry["topic_id"], "is_internal": False, "partitions": []}
                   for entry in request.body["topics"] or []],
    }
