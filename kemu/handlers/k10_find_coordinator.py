"""FindCoordinator (key 10), versions 0-6.

v0 finds group coordinators only; v1 adds `key_type` (0 group, 1 transaction), throttle time and an error
message (Kafka sends "NONE" on success: Java's `Errors.NONE.message()`); v3 is flexible; v4 batches keys
(`coordinator_keys` in, `coordinators[]` out, each error message "": Kafka never sets it); v6 adds key type 2
(share groups, KIP-932).

The coordinator of a group is the leader of `__consumer_offsets` partition `partition_for(group id)`; of a
transactional id, the leader of `__transaction_state` partition `partition_for(id)`. The first lookup of
either kind creates its internal topic with Kafka's layout; Kafka answers COORDINATOR_NOT_AVAILABLE until
the creation completes, kemu creates it at once and answers with the coordinator.

A share coordinator (key type 2, from v6; INVALID_REQUEST below) is asked for by brokers: a client without
CLUSTER_ACTION on the cluster is refused first, the whole request. Its key is a share-partition,
"groupId:topicId:partition" as SharePartitionKey parses it (a malformed one INVALID_REQUEST), and its
coordinator the leader of the `__share_group_state` partition its canonical form hashes to, the topic made
on the first lookup as the others are. An unknown key type refuses the whole request with INVALID_REQUEST.
Before v4 an error answer carries no coordinator (-1, "", -1) and the error's message, as Kafka's
getErrorResponse does.
"""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

from kemu.admin.topics import ensure_internal_topic
from kemu.broker.errors import ApiError
from kemu.broker.topic_names import GROUP_METADATA_TOPIC, SHARE_GROUP_STATE_TOPIC, TRANSACTION_STATE_TOPIC
from kemu.handlers import _authorize as authz
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, Fixed, each, error_responder
from kemu.hashing import partition_for
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k10_find_coordinator import (
        FindCoordinatorRequest,
        FindCoordinatorResponse,
        FindCoordinatorResponseCoordinators,
    )

KEY = 10

GROUP, TRANSACTION, SHARE = 0, 1, 2
FIRST_BATCHED_VERSION = 4
FIRST_SHARE_VERSION = 6
_NO_NODE = (-1, "", -1)


async def handle(ctx: RequestContext, request: Incoming[FindCoordinatorRequest]) -> FindCoordinatorResponse:
    body, version = request.body, request.version
    key_type = body["key_type"]
    if key_type not in (GROUP, TRANSACTION, SHARE):
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown coordinator type received: {key_type}")
    if version >= FIRST_BATCHED_VERSION:
        coordinators: list[FindCoordinatorResponseCoordinators] = []
        for key in body["coordinator_keys"]:
            error, (node_id, host, port) = coordinator_for(ctx, key_type, key, version)
            # KafkaApis sets no message on a v4+ coordinator: the schema's default, "".
            coordinators.append({"key": key, "node_id": node_id, "host": host, "port": port,
                                 "error_code": error, "error_message": ""})
        return {"coordinators": coordinators}
    error, (node_id, host, port) = coordinator_for(ctx, key_type, body["key"], version)
    return {"error_code": error, "error_message": _message(error), "node_id": node_id, "host": host, "port": port}


def coordinator_for(ctx: RequestContext, key_type: int, key: str,
                    version: int) -> tuple[ErrorCode, tuple[int, str, int]]:
    if key_type == SHARE:
        if version < FIRST_SHARE_VERSION:
            return ErrorCode.INVALID_REQUEST, _NO_NODE
        # KafkaApis.getCoordinator: a share coordinator's key is asked for by brokers, which need CLUSTER_ACTION;
        # without it the whole request is refused (its error response, every key CLUSTER_AUTHORIZATION_FAILED).
        authz.require_cluster(ctx, authz.CLUSTER_ACTION)
        share_key = share_coordinator_key(key)
        if share_key is None:
            return ErrorCode.INVALID_REQUEST, _NO_NODE
        key, topic_name = share_key, SHARE_GROUP_STATE_TOPIC
        created = ensure_internal_topic(ctx.broker, topic_name)
    else:
        denied = authz.denied_code(ctx, authz.DESCRIBE,
                                   authz.GROUP if key_type == GROUP else authz.TRANSACTIONAL_ID, key)
        if denied is not ErrorCode.NONE:
            return denied, _NO_NODE
        topic_name = GROUP_METADATA_TOPIC if key_type == GROUP else TRANSACTION_STATE_TOPIC
        if key_type == GROUP:
            created = ctx.groups.ensure_offsets_topic()
        else:
            created = ensure_internal_topic(ctx.broker, topic_name)
    broker = ctx.broker
    topic = broker.topics.get(topic_name)
    if not created or topic is None or not topic.partitions:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, _NO_NODE
    partition = topic.partitions[partition_for(key, len(topic.partitions))]
    for node in broker.brokers(ctx.client.listener_name):
        if node.node_id == partition.leader_id:
            return ErrorCode.NONE, (node.node_id, node.host, node.port)
    return ErrorCode.COORDINATOR_NOT_AVAILABLE, _NO_NODE


def share_coordinator_key(key: str) -> str | None:
    """SharePartitionKey.getInstance(key).asCoordinatorKey(): "groupId:topicId:partition" with the topic id and
    partition written canonically, or None where Kafka's parsing throws. Java's split drops trailing empty
    tokens, the group id is every token before the last two, and it must not be blank by String.trim."""
    tokens = key.split(":")
    while tokens and not tokens[-1]:
        tokens.pop()
    if len(tokens) < 3:
        return None
    group_id, topic_text, partition_text = ":".join(tokens[:-2]), tokens[-2], tokens[-1]
    if not group_id.strip(_JAVA_TRIMMED):
        return None
    # Uuid.fromString: Base64's URL alphabet, 16 bytes (22 characters, or 24 with the padding).
    if not _BASE64_UUID.fullmatch(topic_text) or not _JAVA_INT.fullmatch(partition_text):
        return None
    partition = int(partition_text)
    if not -(1 << 31) <= partition < 1 << 31:
        return None
    topic_id = base64.urlsafe_b64encode(base64.urlsafe_b64decode(topic_text[:22] + "==")).rstrip(b"=").decode()
    return f"{group_id}:{topic_id}:{partition}"


# String.trim removes every character up to the space; Integer.parseInt takes a sign and decimal digits (any
# script's, as Character.digit and Python's int both read them).
_JAVA_TRIMMED = "".join(chr(code) for code in range(0x21))
_JAVA_INT = re.compile(r"[+-]?\d+")
# Java's decoder ignores the last character's 4 unused bits, as Python's does: the canonical form re-encodes.
_BASE64_UUID = re.compile(r"[A-Za-z0-9_-]{22}(==)?")


def _message(error: ErrorCode) -> str:
    # Java's Errors.message(): the exception's default message, or the enum name for NONE.
    return error.message if error is not ErrorCode.NONE else "NONE"


_no_node = error_responder(KEY, node_id=Fixed(-1), port=Fixed(-1), coordinators=each(
    "coordinator_keys", key=ITEM, node_id=Fixed(-1), port=Fixed(-1)))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's FindCoordinatorRequest.getErrorResponse: the error for the one key, or for every key, with
    Errors.message() whatever was raised."""
    return _no_node(request, code, _message(code))
