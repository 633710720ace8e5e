"""DescribeConfigs (key 32), versions 1-4 (Kafka 4 dropped v0, KIP-896: a request for it closes the connection).

v1 adds `include_synonyms` and each config's source and synonyms (in place of v0's `is_default`); v2 is v1;
v3 adds `include_documentation` and each config's type and documentation (kemu's are one line); v4 is
flexible.

Resources, as Kafka's ConfigHelper answers them:
- TOPIC (2): every topic config with its value in force; the source is the first synonym's — the topic's
  override (DYNAMIC_TOPIC_CONFIG), then the broker synonym's dynamic, static and default layers. An illegal
  name is INVALID_TOPIC_EXCEPTION; a missing topic UNKNOWN_TOPIC_OR_PARTITION.
- BROKER (4): named by the id of the node asked (each broker of a many-broker kemu answers for itself: its
  node.id, broker.id, listener and broker.rack), every broker config kemu knows (see
  kemu.broker.broker_configs); named "", only the dynamic cluster-wide defaults that are set. Another id,
  or a name that is not a number, is INVALID_REQUEST with Kafka's message.
- BROKER_LOGGER (8): the log levels of `root` and the `kemu` loggers; the name must be the node's id.
- GROUP (32): every group config (kemu.broker.group_configs), an override's source GROUP_CONFIG, the broker's
  value DEFAULT_CONFIG; a group need not exist to have configs. Unnamed, INVALID_REQUEST with Kafka's message.
- CLIENT_METRICS (16): a client metrics subscription's metrics, interval.ms and match
  (kemu.broker.client_metrics), a set one's source CLIENT_METRICS_CONFIG, the rest DEFAULT_CONFIG with no
  synonym; a subscription need not exist. Unnamed, INVALID_REQUEST with Kafka's message.
A resource type Kafka does not know fails the whole request, as in Kafka.

`configuration_keys` (null or empty: all) keeps only the named configs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.admin import loggers as broker_loggers
from kemu.admin.configs import RESOURCE_BROKER, RESOURCE_BROKER_LOGGER, RESOURCE_TOPIC
from kemu.broker import broker_configs, client_metrics, group_configs, topic_configs
from kemu.broker.broker_configs import CONFIG_TYPE_IDS, ConfigEntry, ConfigSource, parse_java_int
from kemu.broker.errors import ApiError
from kemu.broker.topic_names import invalid_name_reason
from kemu.handlers import _authorize as authz
from kemu.handlers._pacing import Pacer
from kemu.handlers.context import RequestContext
from kemu.handlers.error_responses import each, error_responder
from kemu.handlers.versions import NARROWED
from kemu.wire.codec import Request
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages import Incoming
    from kemu.wire.messages.k32_describe_configs import (
        DescribeConfigsRequest,
        DescribeConfigsResponse,
        DescribeConfigsResponseResults,
        DescribeConfigsResponseResultsConfigs,
    )

KEY = 32
VERSIONS = NARROWED[KEY]

RESOURCE_CLIENT_METRICS = 16
RESOURCE_GROUP = 32
_KNOWN = {RESOURCE_TOPIC, RESOURCE_BROKER, RESOURCE_BROKER_LOGGER, RESOURCE_CLIENT_METRICS, RESOURCE_GROUP}
# ConfigHelper's first check of those, which kemu makes too.
_UNNAMED = {RESOURCE_CLIENT_METRICS: "Client metrics subscription name must not be empty",
            RESOURCE_GROUP: "Group name must not be empty"}


class _DescribeRefused(Exception):
    def __init__(self, error: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


# A topic described with synonyms and documentation takes about 0.3 ms: a request of 2,000 held the loop for
# 0.6 s before it yielded between them (kemu.handlers._pacing).
SUSPENDS = True  # a request of many resources yields to the event loop between slices


async def handle(ctx: RequestContext, request: Incoming[DescribeConfigsRequest]) -> DescribeConfigsResponse:
    body = request.body
    for resource in body["resources"]:
        if resource["resource_type"] not in _KNOWN:
            # Kafka throws while sorting resources for authorization: the whole request fails.
            raise ApiError(ErrorCode.INVALID_REQUEST)
    results: list[DescribeConfigsResponseResults] = []
    pacer = Pacer()
    for resource in body["resources"]:
        await pacer.tick()  # other connections are served between slices of a big request
        result: DescribeConfigsResponseResults = {"resource_type": resource["resource_type"],
                                                  "resource_name": resource["resource_name"]}
        denied = authz.config_denied(ctx, authz.DESCRIBE_CONFIGS, resource["resource_type"], resource["resource_name"])
        if denied is not ErrorCode.NONE:
            # Kafka's ApiError without a message: the error's own ("Topic authorization failed.").
            results.append({**result, "error_code": denied, "error_message": denied.message, "configs": []})
            continue
        try:
            entries = _describe(ctx, resource["resource_type"], resource["resource_name"],
                                body["include_synonyms"], body["include_documentation"])
        except _DescribeRefused as refused:
            result.update({"error_code": int(refused.error), "error_message": refused.message, "configs": []})
        else:
            if entries is None:
                result.update({"error_code": int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), "configs": []})
            else:
                wanted = resource["configuration_keys"]
                if wanted:
                    entries = [entry for entry in entries if entry.name in wanted]
                result.update({"error_code": 0, "configs": [_config(entry) for entry in entries]})
        results.append(result)
    return {"results": results}


def _describe(ctx: RequestContext, kind: int, name: str, synonyms: bool,
              documentation: bool) -> list[ConfigEntry] | None:
    broker = ctx.broker
    node_id = ctx.node_id
    if kind == RESOURCE_TOPIC:
        reason = invalid_name_reason(name)
        if reason is not None:
            raise _DescribeRefused(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
        topic = broker.topics.get(name)
        if topic is None:
            return None
        return topic_configs.describe(topic.configs, broker.config_layers(node_id), synonyms, documentation)
    if kind == RESOURCE_BROKER:
        if name == "":
            return broker_configs.describe(broker.config_layers(node_id), True, synonyms, documentation)
        if _broker_id(name) != node_id:
            raise _DescribeRefused(ErrorCode.INVALID_REQUEST,
                           f"Unexpected broker id, expected {node_id} or empty string, but received {name}")
        return broker_configs.describe(broker.config_layers(node_id), False, synonyms, documentation)
    if kind == RESOURCE_BROKER_LOGGER:
        if name == "":
            raise _DescribeRefused(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
        if _broker_id(name) != node_id:
            raise _DescribeRefused(ErrorCode.INVALID_REQUEST,
                           f"Unexpected broker id, expected {node_id} but received {name}")
        # Kafka sets no documentation on these: the message's default, the empty string (not null).
        return [ConfigEntry(logger, level, ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG, documentation="")
                for logger, level in broker_loggers.loggers().items()]
    if name == "":
        raise _DescribeRefused(ErrorCode.INVALID_REQUEST, _UNNAMED[kind])
    if kind == RESOURCE_GROUP:
        return group_configs.describe(broker.group_configs.get(name), broker.config_layers(), synonyms, documentation)
    return client_metrics.describe(broker.client_metrics.get(name), synonyms, documentation)


def _broker_id(name: str) -> int:
    found = parse_java_int(name)
    if found is None:
        raise _DescribeRefused(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
    return found


def _config(entry: ConfigEntry) -> DescribeConfigsResponseResultsConfigs:
    return {
        "name": entry.name,
        "value": entry.value,
        "read_only": entry.read_only,
        "config_source": int(entry.source),
        "is_sensitive": entry.is_sensitive,
        "synonyms": [{"name": s.name, "value": s.value, "source": int(s.source)} for s in entry.synonyms],
        "config_type": CONFIG_TYPE_IDS[entry.config_type],
        "documentation": entry.documentation,
    }


_every_resource = error_responder(KEY, results=each("resources", resource_type="resource_type",
                                                     resource_name="resource_name"))


def error_response(request: Request, code: ErrorCode, message: str | None) -> dict[str, Any]:
    """Kafka's DescribeConfigsRequest.getErrorResponse: every resource gets the error's default message."""
    return _every_resource(request, code, code.message)
