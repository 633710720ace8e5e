"""DeleteTopics (key 20), versions 1-6 (Kafka 4 dropped v0, KIP-896: a request for it closes the connection).

v0-5 name topics in a plain list; v1 adds throttle time; v3 may answer TOPIC_DELETION_DISABLED (earlier
versions get INVALID_REQUEST when `delete.topic.enable` is false); v4 flexible; v5 error messages;
v6 names each topic by name or by id: an unknown name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id
UNKNOWN_TOPIC_ID, both or neither given, duplicates, or a name and an id of the same topic are
INVALID_REQUEST. Like Kafka's controller, results come back shuffled, so their order says nothing.
Deletion completes before the response; `timeout_ms` is moot. The topics leave the registry at once (no
request finds them after); their logs are then deleted a slice at a time, the event loop serving other
connections in between, with no partition creation under way meanwhile (a topic of the same name must not
find its predecessor's files), and the registry is saved when the last is gone.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import trio

from kemu.admin.topics import DeleteOutcome, delete_logs, delete_topics
from kemu.handlers import _authorize as authz
from kemu.handlers._creating import creations_paused
from kemu.handlers._pacing import Pacer
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import ITEM, each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k20_delete_topics import DeleteTopicsRequest, DeleteTopicsResponse

KEY = 20
VERSIONS = NARROWED[KEY]
SUSPENDS = True  # deleting many topics' logs yields to the event loop



async def handle(ctx: RequestContext, request: Incoming[DeleteTopicsRequest]) -> DeleteTopicsResponse:
    body = request.body
    names = body["topic_names"] if request.version < 6 else []
    by_state = [(t["name"], t["topic_id"]) for t in body["topics"]] if request.version >= 6 else []
    # ControllerApis answers an ApiError without a message, so the error's own: "Topic authorization failed.".
    refused = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    asked = [(n, authz.ZERO_UUID) for n in names] + by_state
    refusals = [authz.topic_denied(ctx, authz.DELETE, name, topic_id) for name, topic_id in asked]  # once each
    denied = [DeleteOutcome(name, topic_id, refused, refused.message)
              for (name, topic_id), no in zip(asked, refusals, strict=True) if no]
    deleted, removed = delete_topics(
        ctx.broker,
        names=[n for n, no in zip(names, refusals, strict=False) if not no],
        by_state=[t for t, no in zip(by_state, refusals[len(names):], strict=True) if not no],
        version=request.version,
    )
    if removed:
        async with creations_paused(ctx.broker):
            with trio.CancelScope(shield=True):  # once out of the registry, the logs go whatever the client does
                pacer = Pacer()
                for _ in delete_logs(ctx.broker, removed):
                    await pacer.tick()
    outcomes = deleted + denied
    random.shuffle(outcomes)
    # Kafka's ApiError: an error without a message of its own carries its code's default message.
    return {"responses": [{"name": o.name, "topic_id": o.topic_id, "error_code": int(o.error),
                           "error_message": o.message if o.message is not None or o.error == ErrorCode.NONE
                           else o.error.message} for o in outcomes]}


_by_id = error_responder(KEY, responses=each("topics", name="name", topic_id="topic_id"))
_by_name = error_responder(KEY, responses=each("topic_names", name=ITEM))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's DeleteTopicsRequest.getErrorResponse: the same error for every topic, named as the request
    names it (v6 moved the names into `topics`, beside the ids)."""
    return (_by_id if request.version >= 6 else _by_name)(request, code, message)
