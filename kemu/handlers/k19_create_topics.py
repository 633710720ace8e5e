"""CreateTopics (key 19), versions 2-7 (Kafka 4 dropped v0-1, KIP-896: a request for them closes the connection).

v1 adds `validate_only` and per-topic error messages; v2 throttle time; v4 lets num_partitions and
replication_factor be -1 (the broker defaults) without a manual assignment — kemu accepts -1 in every
version; v5 is flexible and echoes each created topic's partition count, replication factor and every
topic config with its source; v6 may be throttled (kemu never throttles); v7 returns the topic id.

The checks and messages are the KRaft controller's: illegal or colliding names, TOPIC_ALREADY_EXISTS,
INVALID_CONFIG, then partitions / replication factor / manual assignment; duplicate names in one request
and `__cluster_metadata` are INVALID_REQUEST; more than 10000 partitions in one request is a
POLICY_VIOLATION for every topic, and so is more than 10000 metadata records (kemu.admin.topics.topic_records:
a topic of 10000 partitions is 10001), validate_only or not. `timeout_ms` is moot: creation completes before
the response (the logs are made a few at a time, other connections served in between: kemu.broker.creation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kemu.admin.topics import CreateOutcome, NewTopic, TopicPlan
from kemu.handlers import _authorize as authz
from kemu.handlers._creating import create
from kemu.handlers._pacing import Pacer
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k19_create_topics import (
        CreateTopicsRequest,
        CreateTopicsResponse,
        CreateTopicsResponseTopics,
    )

KEY = 19
VERSIONS = NARROWED[KEY]
# Creations queue one after another and make their logs in steps (kemu.handlers._creating).
SUSPENDS = True


async def handle(ctx: RequestContext, request: Incoming[CreateTopicsRequest]) -> CreateTopicsResponse:
    wanted = [
        NewTopic(
            name=entry["name"],
            num_partitions=entry["num_partitions"],
            replication_factor=entry["replication_factor"],
            assignments=[(a["partition_index"], list(a["broker_ids"])) for a in entry["assignments"]],
            configs=[(c["name"], c["value"]) for c in entry["configs"]],
        )
        for entry in request.body["topics"]
    ]
    # ControllerApis.createTopics adds the refusals after the controller's results, in the order of the
    # HashSet of the request's names.
    refused = {t.name for t in wanted if not authz.may_create_topic(ctx, t.name)}
    denied = [CreateOutcome(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
              for name in (java_hash_map_order(t.name for t in wanted) if refused else ()) if name in refused]
    wanted = [t for t in wanted if t.name not in refused]
    outcomes = await create(ctx.broker, lambda: TopicPlan(ctx.broker, wanted,
                                                          validate_only=request.body["validate_only"]))
    outcomes += denied
    results: list[CreateTopicsResponseTopics] = []
    pacer = Pacer()
    for outcome in outcomes:
        await pacer.tick()  # each result holds every config: let the other connections run
        results.append(_result(outcome))
    return {"topics": results}


def _result(outcome: CreateOutcome) -> CreateTopicsResponseTopics:
    if outcome.error != ErrorCode.NONE:
        return {"name": outcome.name, "error_code": int(outcome.error), "error_message": outcome.message,
                "configs": []}
    return {
        "name": outcome.name,
        "topic_id": outcome.topic_id,
        "error_code": 0,
        "error_message": None,
        "num_partitions": outcome.num_partitions,
        "replication_factor": outcome.replication_factor,
        "configs": [{"name": c.name, "value": None if c.is_sensitive else c.value, "read_only": c.read_only,
                     "config_source": c.source, "is_sensitive": c.is_sensitive} for c in outcome.configs],
    }


error_response = error_responder(KEY, topics=each("topics", name="name"))
