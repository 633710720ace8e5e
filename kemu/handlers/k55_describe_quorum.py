"""DescribeQuorum (key 55), versions 0-2, flexible throughout: the KRaft quorum of the metadata log, as the
controller's KafkaRaftClient answers it (a broker forwards the request to the controller, which first requires
DESCRIBE on the cluster).

kemu is a single-voter quorum: its controller (the node Metadata names, the first live one) is the one voter
and leads it at epoch 1, with a static voter set (kraft.version 0: no directory ids, as a node started with
`controller.quorum.voters` reports); the other brokers of a many-broker kemu are its observers, always caught
up. Kafka's reference is one combined broker-and-controller node: one voter, no observers. The voter's listener
(v2 `nodes`) is named CONTROLLER, as Kafka's controller listener is, at the node's own address: kemu serves
no separate controller listener. kemu keeps no metadata log, so its offsets are those of one that gains a
no-op record every `metadata.max.idle.interval.ms` (500 ms) since the broker started, as a quiet KRaft log
does. The leader reports the request's time as its own last fetch and catch-up (v1).

Only `__cluster_metadata` partition 0, alone in the request, is described; any other request is answered
UNKNOWN_TOPIC_OR_PARTITION (with its message from v2) for every partition it names, at leader 0, epoch 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.kafka_defaults import int_default
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode
from kemu.wire.schema import ZERO_UUID

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k55_describe_quorum import (
        DescribeQuorumRequest,
        DescribeQuorumResponse,
        DescribeQuorumResponseTopicsPartitionsCurrentVoters,
    )

KEY = 55

METADATA_TOPIC = "__cluster_metadata"
LEADER_EPOCH = 1
NO_OP_INTERVAL_MS = int_default("metadata.max.idle.interval.ms")  # a quiet KRaft leader appends a NoOpRecord this often
CONTROLLER_LISTENER = "CONTROLLER"


async def handle(ctx: RequestContext, request: Incoming[DescribeQuorumRequest]) -> DescribeQuorumResponse:
    authz.require_cluster(ctx, authz.DESCRIBE)
    topics = request.body["topics"]
    if not (len(topics) == 1 and topics[0]["topic_name"] == METADATA_TOPIC
            and [p["partition_index"] for p in topics[0]["partitions"]] == [0]):
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return {"error_code": 0, "nodes": [], "topics": [
            {"topic_name": topic["topic_name"], "partitions": [
                {"partition_index": p["partition_index"], "error_code": int(code), "error_message": code.message,
                 "leader_id": 0, "leader_epoch": 0, "high_watermark": 0, "current_voters": [], "observers": []}
                for p in topic["partitions"]]}
            for topic in topics]}
    broker = ctx.broker
    now = broker.clock.now_ms()
    end = max(0, now - broker.started_ms) // NO_OP_INTERVAL_MS
    leader = broker.controller_id

    # An observer's struct has the voters' fields: the one type is the other's.
    def state(node_id: int) -> DescribeQuorumResponseTopicsPartitionsCurrentVoters:
        return {"replica_id": node_id, "replica_directory_id": ZERO_UUID, "log_end_offset": end,
                "last_fetch_timestamp": now, "last_caught_up_timestamp": now}

    host, port = broker.advertised_endpoint(leader, ctx.client.listener_name)
    return {
        "error_code": 0,
        "topics": [{"topic_name": METADATA_TOPIC, "partitions": [{
            "partition_index": 0, "error_code": 0, "leader_id": leader, "leader_epoch": LEADER_EPOCH,
            "high_watermark": end, "current_voters": [state(leader)],
            "observers": [state(node_id) for node_id in broker.live_broker_ids() if node_id != leader]}]}],
        "nodes": [{"node_id": leader, "listeners": [{"name": CONTROLLER_LISTENER, "host": host, "port": port}]}],
    }


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """DescribeQuorumRequest.getErrorResponse: the top-level error and its message, nothing else."""
    return {"error_code": int(code), "error_message": code.message if message is None else message,
            "topics": [], "nodes": []}
