"""AlterConfigs (legacy: replace a resource's whole set) and IncrementalAlterConfigs (SET, DELETE, APPEND,
SUBTRACT per key) as a KRaft Kafka answers them: the broker's preprocessing (ConfigAdminManager), then the
controller's (ConfigurationControlManager with ControllerConfigurationValidator). Each resource succeeds or
fails as a whole; the checks run in Kafka's order, which decides the error a wrong request gets:

1. a resource named twice: INVALID_REQUEST for both;
2. a config key twice, or a null value (other than for DELETE): INVALID_REQUEST;
3. per type — BROKER_LOGGER (incremental only): log levels; BROKER: this node's id or "" (the cluster
   default), only dynamic configs, values valid, else INVALID_REQUEST; TOPIC: APPEND/SUBTRACT only on
   LIST configs, then the resulting overrides validated (INVALID_CONFIG), then the topic must exist
   (UNKNOWN_TOPIC_OR_PARTITION) — an invalid config on a missing topic is INVALID_CONFIG, as in Kafka.

Topic changes reach the live partition logs and `kemu-topics.json`; broker changes reach the dynamic
layers (persisted) and every topic that inherits the changed defaults.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum

from kemu.admin import loggers as broker_loggers
from kemu.broker import topic_configs
from kemu.broker.broker import BrokerCore
from kemu.broker.broker_configs import BROKER_CONFIGS, BrokerConfigRefused, parse_java_int, validate_dynamic
from kemu.broker.topic_names import invalid_name_reason
from kemu.log.config import TOPIC_CONFIGS, InvalidConfigError, list_items
from kemu.wire.errors import ErrorCode

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
RESOURCE_BROKER_LOGGER = 8
RESOURCE_CLIENT_METRICS = 16
RESOURCE_GROUP = 32
MIN_ISR = "min.insync.replicas"
# A topic's config change takes about 0.1 ms: a slice of 128 resources holds the event loop ~15 ms.
ALTER_SLICE_RESOURCES = 128


class OpType(IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigChange:
    name: str
    op: int
    value: str | None


@dataclass(frozen=True, slots=True)
class ResourceChange:
    resource_type: int
    resource_name: str
    configs: Sequence[ConfigChange]


@dataclass(frozen=True, slots=True)
class Outcome:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


class _Denied(Exception):
    def __init__(self, error: ErrorCode, message: str | None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def alter(broker: BrokerCore, resources: Sequence[ResourceChange], validate_only: bool,
          incremental: bool, node_id: int | None = None) -> list[Outcome]:
    """One outcome per resource, in request order, as the node `node_id` (default the first) answers: a BROKER
    or BROKER_LOGGER resource names that node's id, as each Kafka broker takes only its own."""
    outcomes: list[Outcome] = []
    for _ in altering(broker, resources, validate_only, incremental, outcomes, node_id):
        pass
    return outcomes


def altering(broker: BrokerCore, resources: Sequence[ResourceChange], validate_only: bool, incremental: bool,
             outcomes: list[Outcome], node_id: int | None = None) -> Iterator[None]:
    """`alter`, a slice of ALTER_SLICE_RESOURCES resources at a time: yields between slices (for an event loop
    to serve others), filling `outcomes`. Each resource changes whole. A changed topic's entry of the topic
    list is encoded with its change, and the list is written once, at the end (also when it ends with an
    error: what was changed so far is kept), before any answer: not once a slice (79 writes of 10,000 topics,
    each a held event loop)."""
    node = broker.node_id if node_id is None else node_id
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    topics_changed = False
    try:
        for start in range(0, len(resources), ALTER_SLICE_RESOURCES):
            if start:
                yield
            for resource in resources[start:start + ALTER_SLICE_RESOURCES]:
                if counts[(resource.resource_type, resource.resource_name)] > 1:
                    outcomes.append(Outcome(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."))
                    continue
                try:
                    topics_changed = _alter_resource(broker, resource, validate_only, incremental, node) \
                        or topics_changed
                except _Denied as refused:
                    outcomes.append(Outcome(refused.error, refused.message))
                else:
                    outcomes.append(Outcome())
    finally:
        if topics_changed:
            broker.storage.save(broker.topics, changed=())  # each changed topic's entry encoded already


def _alter_resource(broker: BrokerCore, resource: ResourceChange, validate_only: bool, incremental: bool,
                    node_id: int) -> bool:
    """Apply one resource's change; True if it changed a topic (whose entry of the topic list is encoded, not
    yet written)."""
    names = [c.name for c in resource.configs]
    if len(set(names)) != len(names):
        raise _Denied(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [c.name for c in resource.configs if c.value is None and not (incremental and c.op == OpType.DELETE)]
    if nulls:
        raise _Denied(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    kind = resource.resource_type
    if kind == RESOURCE_BROKER_LOGGER and incremental:
        _alter_loggers(resource, validate_only, node_id)
    elif kind == RESOURCE_BROKER:
        _alter_broker(broker, resource, validate_only, incremental, node_id)
    elif kind == RESOURCE_TOPIC:
        return _alter_topic(broker, resource, validate_only, incremental)
    elif kind == RESOURCE_GROUP:
        _alter_group(broker, resource, validate_only, incremental)
    elif kind == RESOURCE_CLIENT_METRICS:
        _alter_client_metrics(broker, resource, validate_only, incremental)
    else:
        # Legacy AlterConfigs never supported BROKER_LOGGER.
        raise _Denied(ErrorCode.INVALID_REQUEST, f"Unknown resource type {kind}")
    return False


def _alter_loggers(resource: ResourceChange, validate_only: bool, node_id: int) -> None:
    try:
        broker_loggers.change(node_id, resource.resource_name,
                              [(c.name, c.op, c.value) for c in resource.configs], validate_only)
    except broker_loggers.LoggerChangeRefused as refused:
        raise _Denied(ErrorCode[refused.code_name], refused.message) from None


def _check_op(change: ConfigChange) -> OpType:
    if change.op not in OpType._value2member_map_:
        # Kafka finds no OpType for the id and fails on the null it got: an unknown server error.
        raise _Denied(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    return OpType(change.op)


def _alter_broker(broker: BrokerCore, resource: ResourceChange, validate_only: bool, incremental: bool,
                  node_id: int) -> None:
    name = resource.resource_name
    if name:
        requested = parse_java_int(name)
        if requested is None:
            raise _Denied(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
        if requested != node_id:
            raise _Denied(ErrorCode.INVALID_REQUEST,
                           f"Unexpected broker id, expected {node_id}, but received {name}")
    if incremental:
        values = dict(broker.dynamic_configs.layer(name))
        for change in resource.configs:
            op = _check_op(change)
            _apply_broker_op(values, op, change)
    else:
        values = {c.name: c.value for c in resource.configs if c.value is not None}
    try:
        validate_dynamic(values, per_broker=bool(name), log_dirs=(str(broker.data_dir.absolute()),))
    except BrokerConfigRefused as refused:
        raise _Denied(ErrorCode.INVALID_REQUEST, str(refused)) from None
    _check_min_isr(broker.dynamic_configs.layer(name), values, name)
    if not validate_only:
        broker.dynamic_configs.replace(name, values)
        broker.apply_log_defaults()


def _check_min_isr(before: dict[str, str], after: dict[str, str], name: str) -> None:
    """The controller's rules while ELR is on (Kafka 4.1+, and kemu): min.insync.replicas is the cluster's."""
    if name and (MIN_ISR in before or MIN_ISR in after):
        raise _Denied(ErrorCode.INVALID_CONFIG, f"Broker-level {MIN_ISR} cannot be altered while ELR is enabled.")
    if not name and MIN_ISR in before and MIN_ISR not in after:
        raise _Denied(ErrorCode.INVALID_CONFIG, f"Cluster-level {MIN_ISR} cannot be removed while ELR is enabled.")


def _apply_broker_op(values: dict[str, str], op: OpType, change: ConfigChange) -> None:
    """ConfigAdminManager.prepareIncrementalConfigs."""
    if op == OpType.SET:
        values[change.name] = change.value or ""
        return
    if op == OpType.DELETE:
        values.pop(change.name, None)
        return
    key = BROKER_CONFIGS.get(change.name)
    if key is None:
        # Kafka looks the key up in a Scala map that throws for a name it does not know.
        raise _Denied(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    if key.type != "LIST":
        verb = "append" if op == OpType.APPEND else "subtract"
        raise _Denied(ErrorCode.INVALID_CONFIG, f"Config value {verb} is not allowed for config key: {change.name}")
    current = values.get(change.name, key.default or "")
    old = _java_split(current) if current else []
    wanted = _java_split(change.value or "")
    if op == OpType.APPEND:
        values[change.name] = ",".join(old + [item for item in wanted if item not in old])
    else:
        values[change.name] = ",".join(item for item in old if item not in wanted)


def _alter_topic(broker: BrokerCore, resource: ResourceChange, validate_only: bool, incremental: bool) -> bool:
    name = resource.resource_name
    topic = broker.topics.get(name)
    if incremental:
        configs = dict(topic.configs) if topic is not None else {}
        for change in resource.configs:
            _apply_topic_op(configs, _check_op(change), change)
    else:
        configs = {c.name: c.value for c in resource.configs if c.value is not None}
    # ControllerConfigurationValidator, then the existence check.
    if not name:
        raise _Denied(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    reason = invalid_name_reason(name)
    if reason is not None:
        raise _Denied(ErrorCode.INVALID_TOPIC_EXCEPTION, reason)
    try:
        topic_configs.validate(configs)
    except InvalidConfigError as exc:
        raise _Denied(ErrorCode.INVALID_CONFIG, str(exc)) from None
    if topic is None:
        raise _Denied(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    if validate_only:
        return False
    topic.configs = configs
    broker.storage.reconfigure(topic)
    broker.storage.encode([topic])
    return True


def _new_configs(current: dict[str, str], resource: ResourceChange, incremental: bool) -> dict[str, str]:
    """ConfigurationControlManager's new full set of a resource whose configs no schema splits: SET and DELETE
    per key (APPEND and SUBTRACT refused, none being LIST to it), or the legacy request's whole set."""
    if not incremental:
        return {c.name: c.value for c in resource.configs if c.value is not None}
    configs = dict(current)
    for change in resource.configs:
        op = _check_op(change)
        if op == OpType.SET:
            configs[change.name] = change.value or ""
        elif op == OpType.DELETE:
            configs.pop(change.name, None)
        else:
            raise _Denied(ErrorCode.INVALID_CONFIG,
                           f"Can't {op.name} to key {change.name} because its type is not LIST.")
    return configs


def _alter_client_metrics(broker: BrokerCore, resource: ResourceChange, validate_only: bool, incremental: bool) -> None:
    """A client metrics subscription: its new full set of configs, validated as ClientMetricsConfigs.validate
    does; none left removes the subscription."""
    from kemu.broker import client_metrics

    name = resource.resource_name
    store = broker.client_metrics
    configs = _new_configs(store.get(name), resource, incremental)
    try:
        client_metrics.validate(name, configs)
    except client_metrics.SubscriptionRefused as refused:
        raise _Denied(refused.error, refused.message) from None
    if not validate_only:
        store.replace(name, configs)


def _alter_group(broker: BrokerCore, resource: ResourceChange, validate_only: bool, incremental: bool) -> None:
    """ConfigurationControlManager over a GROUP resource: the new full set of overrides, then GroupConfig's
    validation of it over the broker's defaults."""
    from kemu.broker import group_configs

    name = resource.resource_name
    configs = _new_configs(broker.group_configs.get(name), resource, incremental)
    if not name:
        raise _Denied(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    try:
        group_configs.validate(configs, broker.config_layers())
    except InvalidConfigError as exc:
        raise _Denied(ErrorCode.INVALID_CONFIG, str(exc)) from None
    if not validate_only:
        broker.group_configs.replace(name, configs)


def _apply_topic_op(configs: dict[str, str], op: OpType, change: ConfigChange) -> None:
    """ConfigurationControlManager.incrementalAlterConfigResource for one key."""
    if op == OpType.SET:
        configs[change.name] = change.value or ""
    elif op == OpType.DELETE:
        configs.pop(change.name, None)
    else:
        key = TOPIC_CONFIGS.get(change.name)
        if key is None or key.type != "LIST":
            raise _Denied(ErrorCode.INVALID_CONFIG,
                           f"Can't {op.name} to key {change.name} because its type is not LIST.")
        parts = list_items(configs.get(change.name, key.default_string))
        for item in _java_split(change.value or ""):
            if op == OpType.APPEND and item not in parts:
                parts.append(item)
            elif op == OpType.SUBTRACT and item in parts:
                parts.remove(item)
        configs[change.name] = ",".join(parts)


def _java_split(text: str) -> list[str]:
    """Java's String.split(","): trailing empty items dropped, a text without commas kept whole."""
    if "," not in text:
        return [text]
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts
