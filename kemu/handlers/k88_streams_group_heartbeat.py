"""StreamsGroupHeartbeat (key 88), version 0 (KIP-1071, the "streams" rebalance protocol).

One request joins (member epoch 0, with the application's topology), heartbeats with the tasks the member owns,
reconciles and leaves (epoch -1): the broker configures the topology against the topics, runs Kafka's sticky
task assignor and hands each member its active and standby tasks once the others have revoked them. The internal
topics the topology needs (repartition and changelog topics) are created here when they are missing, with the
partition counts the coordinator decided and the configs the application asked for, as Kafka's KafkaApis hands
them to its auto-topic creation; the heartbeat that finds them missing answers MISSING_INTERNAL_TOPICS, a later
one assigns the tasks.

Checks in KafkaApis.handleStreamsGroupHeartbeat's order: GROUP_AUTHORIZATION_FAILED without READ on the group;
for a topology, STREAMS_INVALID_TOPOLOGY when it names Kafka's internal topics or invalid topic names, then
TOPIC_AUTHORIZATION_FAILED when one of its topics may not be described; the coordinator's INVALID_REQUEST
messages (checked before the group's placement, as Kafka's GroupCoordinatorService checks them), NOT_COORDINATOR
where this broker does not coordinate the group, then the coordinator's answer. Without CREATE on the cluster or
the missing topics, they are not created and the MISSING_INTERNAL_TOPICS status says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from kemu.broker.errors import ApiError
from kemu.broker.topic_names import invalid_name_reason, is_internal
from kemu.groups.errors import GroupError
from kemu.groups.streams_manager import error_response as core_error_response
from kemu.groups.streams_manager import validate
from kemu.groups.streams_topology import CreatableTopic, Status
from kemu.handlers import _authorize as authz
from kemu.handlers._shared import core_context
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import error_responder
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k88_streams_group_heartbeat import (
        StreamsGroupHeartbeatRequest,
        StreamsGroupHeartbeatRequestTopology,
        StreamsGroupHeartbeatResponse,
    )

KEY = 88
SUSPENDS = True  # creating the internal topics waits for the topic creation queue


def _required_topics(topology: StreamsGroupHeartbeatRequestTopology) -> list[str]:
    names: dict[str, None] = {}
    for sub in topology["subtopologies"]:
        names.update(dict.fromkeys(sub["source_topics"]))
        names.update(dict.fromkeys(sub["repartition_sink_topics"]))
        names.update(dict.fromkeys(t["name"] for t in sub["repartition_source_topics"]))
        names.update(dict.fromkeys(t["name"] for t in sub["state_changelog_topics"]))
    return list(names)


async def handle(ctx: RequestContext,
                 request: Incoming[StreamsGroupHeartbeatRequest]) -> StreamsGroupHeartbeatResponse:
    body = request.body
    authz.require(ctx, authz.READ, authz.GROUP, body["group_id"])
    if body["topology"] is not None:
        required = _required_topics(body["topology"])
        prohibited = [t for t in required if is_internal(t)]
        if prohibited:
            return _from_core(core_error_response(ErrorCode.STREAMS_INVALID_TOPOLOGY, f"Use of Kafka internal topics "
                                                  f"{','.join(prohibited)} in a Kafka Streams topology is prohibited."))
        invalid = [t for t in required if invalid_name_reason(t) is not None]
        if invalid:
            return _from_core(core_error_response(ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                                  f"Topic names {','.join(invalid)} are not valid topic names."))
        if set(required) - authz.allowed_names(ctx, authz.DESCRIBE, authz.TOPIC, required):
            raise ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    service = ctx.groups
    error = service.coordinator_error(body["group_id"], ctx.node_id)
    if error is not ErrorCode.NONE:
        try:
            validate(body)
        except GroupError as invalid_request:
            return _from_core(core_error_response(invalid_request.code, invalid_request.message))
        # GroupCoordinatorService's handleOperationException: ApiError.fromThrowable drops a generic message.
        return cast("StreamsGroupHeartbeatResponse", error_response(request, error, None))
    context = core_context(request.version, ctx.client_id, ctx.client.host)
    result = service.run(lambda coordinator: coordinator.streams_group_heartbeat(body, context))
    response = _from_core(result.response)
    if result.topics_to_create:
        await _create_internal_topics(ctx, response, result.topics_to_create)
    return response


def _from_core(answer: dict[str, Any]) -> StreamsGroupHeartbeatResponse:
    """An answer of the groups core's: a dict of this response's fields (kemu.groups speaks dict[str, Any])."""
    return cast("StreamsGroupHeartbeatResponse", answer)


async def _create_internal_topics(ctx: RequestContext, response: StreamsGroupHeartbeatResponse,
                                  topics: Mapping[str, CreatableTopic]) -> None:
    """Create what the coordinator found missing; a refusal goes into the MISSING_INTERNAL_TOPICS status, as
    Kafka appends it there."""
    names = list(topics)
    if authz.allowed(ctx, authz.CREATE, authz.CLUSTER):
        unauthorized: list[str] = []
    else:
        allowed = authz.allowed_names(ctx, authz.CREATE, authz.TOPIC, names)
        unauthorized = [name for name in names if name not in allowed]
    if unauthorized:
        _add_to_status(response, f"Unauthorized to CREATE on topics {', '.join(unauthorized)}.")
        return
    # Topic creation's machinery loads with the first streams group that needs topics made.
    from kemu.admin.topics import NewTopic, plan_topics
    from kemu.handlers._creating import create

    broker = ctx.broker
    wanted = [NewTopic(t.name, t.num_partitions, t.replication_factor, configs=list(t.configs))
              for t in topics.values()]
    outcomes = await create(broker, lambda: plan_topics(broker, wanted))
    failed = [o for o in outcomes if o.error not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS)]
    if failed:
        # Kafka reports creation errors on a later heartbeat (it creates in the background); kemu creates at once
        # and reports them on this one, in Kafka's words.
        listed = ", ".join(f"{o.name} ({o.message or o.error.message})" for o in failed[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        _add_to_status(response, f"Creation failed: {listed}{more}.", append=True)


def _add_to_status(response: StreamsGroupHeartbeatResponse, detail: str, append: bool = False) -> None:
    statuses = response.get("status") or []  # the core's answers carry a list
    for entry in statuses:
        if entry["status_code"] == Status.MISSING_INTERNAL_TOPICS:
            entry["status_detail"] = f"{entry['status_detail']}; {detail}"
            return
    if not append:
        response["status"] = [*statuses, {"status_code": int(Status.MISSING_INTERNAL_TOPICS), "status_detail": detail}]


error_response = error_responder(KEY)
