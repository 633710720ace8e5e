"""Creating and deleting topics, with the checks and messages of Kafka's KRaft controller.

The order of the checks is Kafka's, because it decides which error a client sees when a request is wrong
in several ways: name legality and collisions, then existence, then configs, then the partition layout.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kemu.broker import topic_configs
from kemu.broker.broker import BrokerCore
from kemu.broker.creation import PartitionCreation
from kemu.broker.errors import MAX_RECORDS_PER_USER_OP, TOO_MANY_RECORDS, ApiError
from kemu.broker.ids import random_uuid
from kemu.broker.partition import Partition
from kemu.broker.topic_names import (
    CLUSTER_METADATA_TOPIC,
    GROUP_METADATA_TOPIC,
    SHARE_GROUP_STATE_TOPIC,
    TRANSACTION_STATE_TOPIC,
    invalid_name_reason,
)
from kemu.broker.topics import Topic
from kemu.wire.errors import ErrorCode

log = logging.getLogger(__name__)

# A partition's log takes 0.1-0.4 ms to delete (closing its files, removing its directory): a slice of 16
# holds the event loop a few ms (128 held it 46 ms on a loaded machine); the handler paces the yields.
DELETE_SLICE_PARTITIONS = 16
MAX_PARTITIONS_PER_REQUEST = 10_000  # the controller refuses larger batches as a policy violation
# A ConfigRecord of min.insync.replicas comes with a ClearElrRecord while eligible leader replicas are on,
# which they always are in kemu (eligible.leader.replicas.version is fixed at 1: kemu.broker.features).
MIN_INSYNC_REPLICAS = "min.insync.replicas"


@dataclass(slots=True)
class NewTopic:
    """One topic of a CreateTopics request (or an auto-creation)."""

    name: str
    num_partitions: int = -1  # -1: num.partitions
    replication_factor: int = -1  # -1: default.replication.factor
    assignments: list[tuple[int, list[int]]] = field(default_factory=list)  # (partition, broker ids)
    configs: list[tuple[str, str | None]] = field(default_factory=list)


@dataclass(slots=True)
class CreateOutcome:
    name: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    topic_id: uuid.UUID = uuid.UUID(int=0)
    num_partitions: int = -1
    replication_factor: int = -1
    configs: Sequence[topic_configs.EffectiveConfig] = ()


@dataclass(slots=True)
class DeleteOutcome:
    name: str | None
    topic_id: uuid.UUID
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


ZERO_UUID = uuid.UUID(int=0)


def create_topics(broker: BrokerCore, requested: Sequence[NewTopic], validate_only: bool = False, *,
                  describe: bool = True) -> list[CreateOutcome]:
    """Check, create every log and register, all at once (see `plan_topics` for a caller that yields).
    `describe=False` leaves the outcomes' `configs` empty, for a caller that reads none of them."""
    outcomes, creation = plan_topics(broker, requested, validate_only, describe=describe)
    creation.run()
    creation.mark_failed(outcomes)
    return outcomes


def plan_topics(broker: BrokerCore, requested: Sequence[NewTopic], validate_only: bool = False, *,
                describe: bool = True) -> tuple[list[CreateOutcome], PartitionCreation]:
    """The answers, and the creation that makes them true once run (`PartitionCreation.step` until done,
    then `finish`): the topics exist for other requests only then."""
    plan = TopicPlan(broker, requested, validate_only, describe=describe)
    try:
        while not plan.step():
            pass
    except BaseException:
        plan.creation.abandon()  # the names the slices before reserved (a refusal of the whole request)
        raise
    return plan.result()


class TopicPlan:
    """`plan_topics` a slice of topics at a time (`step` until it says done, then `result`), so that a caller
    on an event loop can let other requests run between slices of a 10,000-topic request. Each slice plans
    against the broker as the slices before left it (their topics are in `broker.creating`)."""

    SLICE = 50
    """Topics planned per step: a few milliseconds of work (200 were tens on a loaded machine)."""

    def __init__(self, broker: BrokerCore, requested: Sequence[NewTopic], validate_only: bool = False, *,
                 describe: bool = True) -> None:
        self.broker = broker
        self.validate_only = validate_only
        self.describe = describe  # whether each outcome lists the topic's effective configs
        self.names = [t.name for t in requested]
        counts = Counter(self.names)  # not names.count per name: quadratic in a client's 10^6-topic request
        self.duplicates = {name: None for name, seen in counts.items() if seen > 1}  # ordered, and O(1) `in`
        self.effective = [t for t in requested if t.name not in self.duplicates and t.name != CLUSTER_METADATA_TOPIC]
        _check_total_partitions(broker, self.effective)
        self.errors = self._errors()
        self.outcomes: list[CreateOutcome] = []
        self.creation = PartitionCreation(broker)
        self._next = 0
        self.records = 0  # the metadata records of the topics planned so far (`topic_records`)

    def _errors(self) -> dict[str, tuple[ErrorCode, str | None]]:
        """The errors that depend on the registry, taken as it is when the plan begins (a topic deleted while
        the plan is made still exists for it: its logs wait for this creation to end before they go)."""
        errors: dict[str, tuple[ErrorCode, str | None]] = {}
        broker = self.broker
        for topic in self.effective:
            colliding = broker.topics.colliding_with(topic.name)
            if colliding is not None:
                errors[topic.name] = (ErrorCode.INVALID_TOPIC_EXCEPTION,
                                      f"Topic '{topic.name}' collides with existing topic: {colliding}")
        for topic in self.effective:
            if topic.name in broker.topics or topic.name in broker.creating:
                errors[topic.name] = (ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
        return errors

    @staticmethod
    def _own_error(topic: NewTopic) -> tuple[ErrorCode, str | None] | None:
        """The errors of the topic alone, checked slice by slice: its name, then its configs (10,000 topics'
        checks made up front held the event loop ~0.1 s)."""
        reason = invalid_name_reason(topic.name)
        if reason is not None:
            return ErrorCode.INVALID_TOPIC_EXCEPTION, reason
        try:
            topic_configs.validate(dict(topic.configs))
        except topic_configs.ConfigError as exc:
            return ErrorCode.INVALID_CONFIG, str(exc)
        return None

    def step(self) -> bool:
        """Plan the next slice; True once every topic is planned."""
        broker = self.broker
        for topic in self.effective[self._next:self._next + self.SLICE]:
            error = self.errors.get(topic.name) or self._own_error(topic)
            if error is not None:
                code, message = error
                self.outcomes.append(CreateOutcome(topic.name, code, message))
                continue
            layout = _layout(broker, topic)
            if isinstance(layout, CreateOutcome):
                self.outcomes.append(layout)
                continue
            overrides = {name: value for name, value in topic.configs if value is not None}
            self._count_records(topic_records(overrides, len(layout)))
            created = Topic(topic.name, random_uuid(), [
                Partition(topic=topic.name, index=index, replicas=list(replicas))
                for index, replicas in sorted(layout.items())
            ], overrides)
            if not self.validate_only:
                self.creation.add_topic(created)
            self.outcomes.append(CreateOutcome(
                topic.name, topic_id=created.topic_id, num_partitions=len(created.partitions),
                replication_factor=created.replication_factor,
                configs=topic_configs.effective(overrides, broker.config_layers()) if self.describe else ()))
        self._next += self.SLICE
        return self._next >= len(self.effective)

    def _count_records(self, records: int) -> None:
        # ReplicationControlManager.createTopics adds each topic's records to one BoundedList, validate_only or
        # not; the overflow escapes its per-topic catch of ApiException, so the controller refuses the whole
        # request (EventHandlerExceptionInfo: POLICY_VIOLATION), every topic of it answered alike.
        self.records += records
        if self.records > MAX_RECORDS_PER_USER_OP:
            raise ApiError(ErrorCode.POLICY_VIOLATION, TOO_MANY_RECORDS)

    def result(self) -> tuple[list[CreateOutcome], PartitionCreation]:
        outcomes = list(self.outcomes)
        for name in self.duplicates:
            outcomes.append(CreateOutcome(name, ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
        if CLUSTER_METADATA_TOPIC in self.names:
            outcomes.append(CreateOutcome(CLUSTER_METADATA_TOPIC, ErrorCode.INVALID_REQUEST,
                                          f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited."))
        return outcomes, self.creation


def _check_total_partitions(broker: BrokerCore, topics: Sequence[NewTopic]) -> None:
    total = 0
    for topic in topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += broker.config.num_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
    if total > MAX_PARTITIONS_PER_REQUEST:
        raise ApiError(ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request.")


def topic_records(overrides: Mapping[str, str], partitions: int) -> int:
    """The metadata records the controller writes for a new topic: its TopicRecord, a ConfigRecord per config
    key (and a ClearElrRecord for min.insync.replicas), a PartitionRecord per partition. A topic refused on its
    own writes none."""
    return 1 + len(overrides) + (MIN_INSYNC_REPLICAS in overrides) + partitions


def _layout(broker: BrokerCore, topic: NewTopic) -> dict[int, list[int]] | CreateOutcome:
    """Replica lists by partition, or the outcome explaining why there can be none."""

    def fail(code: ErrorCode, message: str) -> CreateOutcome:
        return CreateOutcome(topic.name, code, message)

    live = broker.live_broker_ids()
    if topic.assignments:
        if topic.replication_factor != -1:
            return fail(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but replication "
                                                   "factor was not set to -1.")
        if topic.num_partitions != -1:
            return fail(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but numPartitions "
                                                   "was not set to -1.")
        layout: dict[int, list[int]] = {}
        width: int | None = None
        for index, brokers in topic.assignments:
            if index in layout:
                return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                            f"Found multiple manual partition assignments for partition {index}")
            problem = assignment_problem(brokers, live, width)
            if problem is not None:
                return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
            width = len(brokers)
            layout[index] = list(brokers)
        for expected in range(len(layout)):
            if expected not in layout:
                return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                            "partitions should be a consecutive 0-based integer sequence")
        return layout
    if topic.replication_factor < -1 or topic.replication_factor == 0:
        return fail(ErrorCode.INVALID_REPLICATION_FACTOR,
                    "Replication factor must be larger than 0, or -1 to use the default value.")
    if topic.num_partitions < -1 or topic.num_partitions == 0:
        return fail(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    partitions = broker.config.num_partitions if topic.num_partitions == -1 else topic.num_partitions
    factor = (broker.config.default_replication_factor if topic.replication_factor == -1
              else topic.replication_factor)
    if factor > len(live):
        return fail(ErrorCode.INVALID_REPLICATION_FACTOR, unreachable_factor(factor, len(live)))
    return dict(enumerate(broker.place_all(range(partitions), factor)))


def assignment_problem(brokers: list[int], live: list[int], width: int | None) -> str | None:
    if not brokers:
        return "The manual partition assignment includes an empty replica list."
    previous: int | None = None
    for broker_id in sorted(brokers):
        if broker_id not in live:
            return (f"The manual partition assignment includes broker {broker_id}, but no such broker is "
                    "registered.")
        if broker_id == previous:
            return f"The manual partition assignment includes the broker {previous} more than once."
        previous = broker_id
    if width is not None and len(brokers) != width:
        return (f"The manual partition assignment includes a partition with {len(brokers)} replica(s), but "
                f"this is not consistent with previous partitions, which have {width} replica(s).")
    return None


def unreachable_factor(factor: int, live: int) -> str:
    """The StripedReplicaPlacer's message for more replicas than live brokers."""
    return (f"Unable to replicate the partition {factor} time(s): The target replication factor of "
            f"{factor} cannot be reached because only {live} broker(s) are registered or some brokers have all "
            "their log directories cordoned.")  # Kafka 4.3's wording (KIP-1066: cordoned log directories)



def delete_topics(broker: BrokerCore, names: Sequence[str], by_state: Sequence[tuple[str | None, uuid.UUID]],
                  version: int) -> tuple[list[DeleteOutcome], list[Topic]]:
    """Kafka's ControllerApis.deleteTopics, without authorization: every answer, in Kafka's order, and the
    topics taken out of the registry, whose logs the caller deletes before it saves (`delete_logs`)."""
    if not broker.config.delete_topic_enable:
        if version < 3:
            raise ApiError(ErrorCode.INVALID_REQUEST, "Topic deletion is disabled.")
        raise ApiError(ErrorCode.TOPIC_DELETION_DISABLED)
    outcomes: list[DeleteOutcome] = []
    provided_names: dict[str, None] = {}
    duplicate_names: dict[str, None] = {}
    # Ids by their ints, which hash in C (a UUID's __hash__ is Python: 10,000 ids, several hashes each).
    provided_ids: dict[int, uuid.UUID] = {}
    duplicate_ids: dict[int, uuid.UUID] = {}

    def add_name(name: str) -> None:
        if name in duplicate_names or name in provided_names:
            duplicate_names[name] = None
            provided_names.pop(name, None)
        else:
            provided_names[name] = None

    for name in names:
        add_name(name)
    for maybe_name, topic_id in by_state:
        key = topic_id.int
        if maybe_name is None:
            if key == 0:  # not == ZERO_UUID: UUID.__eq__ is Python, 10,000 of them a DeleteTopics
                outcomes.append(DeleteOutcome(None, ZERO_UUID, ErrorCode.INVALID_REQUEST,
                                              "Neither topic name nor id were specified."))
            elif key in duplicate_ids or key in provided_ids:
                duplicate_ids[key] = topic_id
                provided_ids.pop(key, None)
            else:
                provided_ids[key] = topic_id
        elif key == 0:
            add_name(maybe_name)
        else:
            outcomes.append(DeleteOutcome(maybe_name, topic_id, ErrorCode.INVALID_REQUEST,
                                          "You may not specify both topic name and topic id."))
    for name in duplicate_names:
        outcomes.append(DeleteOutcome(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
    for topic_id in duplicate_ids.values():
        outcomes.append(DeleteOutcome(None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id."))

    to_delete: dict[int, uuid.UUID] = {}
    for key, topic_id in provided_ids.items():
        if broker.topics.by_id(topic_id) is None:
            outcomes.append(DeleteOutcome(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID))
        else:
            to_delete[key] = topic_id
    get_topic = broker.topics.get
    for name in provided_names:
        found_by_name = get_topic(name)
        if found_by_name is None:
            outcomes.append(DeleteOutcome(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            continue
        topic_id = found_by_name.topic_id
        key = topic_id.int
        if key in duplicate_ids or key in to_delete:
            # A name and an id for the same topic in one request: neither is deleted.
            duplicate_ids[key] = topic_id
            to_delete.pop(key, None)
            outcomes.append(DeleteOutcome(name, topic_id, ErrorCode.INVALID_REQUEST,
                                          "The provided topic name maps to an ID that was already supplied."))
        else:
            to_delete[key] = topic_id
    removed = broker.remove_topics(to_delete.values())
    outcomes.extend(DeleteOutcome(topic.name, topic.topic_id) for topic in removed)
    return outcomes, removed


def delete_logs(broker: BrokerCore, topics: Sequence[Topic]) -> Iterator[None]:
    """Delete the logs of topics `delete_topics` removed, then save the registry without them: a generator that
    yields after every DELETE_SLICE_PARTITIONS partitions, for an event loop to serve others in between."""
    since_yield = 0
    for topic in topics:
        for partition in topic.partitions:  # not topic by topic: one topic may have 10,000 partitions
            broker.storage.delete_partition(topic, partition)
            since_yield += 1
            if since_yield >= DELETE_SLICE_PARTITIONS:
                yield
                since_yield = 0
    if topics:
        broker.storage.save(broker.topics, changed=())  # no topic left changed: the deleted ones' entries go


def auto_create_topic(broker: BrokerCore, name: str) -> ErrorCode:
    """What Metadata reports for a missing topic it may create: Kafka starts the creation and answers
    UNKNOWN_TOPIC_OR_PARTITION (Kafka 4.3; LEADER_NOT_AVAILABLE before) until the topic is in its metadata;
    an illegal name is INVALID_TOPIC_EXCEPTION."""
    return auto_create_topics(broker, [name])[name]


def auto_create_topics(broker: BrokerCore, names: Sequence[str]) -> dict[str, ErrorCode]:
    """`auto_create_topic` for all the missing topics of one Metadata request at once: Kafka's
    AutoTopicCreationManager sends them to the controller as one CreateTopics, so past 10,000 partitions in
    all none is created (the POLICY_VIOLATION is only logged) and each is still UNKNOWN_TOPIC_OR_PARTITION."""
    codes, creation = plan_auto_creation(broker, names)
    creation.run()
    return codes


def plan_auto_creation(broker: BrokerCore, names: Sequence[str]) -> tuple[dict[str, ErrorCode], PartitionCreation]:
    """`auto_create_topics`' answers, and the creation to run (as `plan_topics`')."""
    codes: dict[str, ErrorCode] = {}
    wanted: list[NewTopic] = []
    for name in names:
        if invalid_name_reason(name) is not None:
            codes[name] = ErrorCode.INVALID_TOPIC_EXCEPTION
        else:
            codes[name] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            wanted.append(auto_creation_request(broker, name))
    try:
        return codes, plan_topics(broker, wanted, validate_only=False)[1]
    except ApiError as refused:
        log.warning("auto-creation of %d topics refused: %s", len(wanted), refused)
    return codes, PartitionCreation(broker)


def auto_creation_request(broker: BrokerCore, name: str) -> NewTopic:
    """The topic Kafka creates when `name` is first asked for: internal topics get their own layout."""
    cfg = broker.config
    if name == GROUP_METADATA_TOPIC:
        return NewTopic(name, cfg.offsets_topic_num_partitions, cfg.offsets_topic_replication_factor,
                        configs=[("cleanup.policy", "compact"), ("compression.type", "producer"),
                                 ("segment.bytes", str(cfg.offsets_topic_segment_bytes))])
    if name == TRANSACTION_STATE_TOPIC:
        return NewTopic(name, cfg.transaction_state_log_num_partitions,
                        cfg.transaction_state_log_replication_factor,
                        configs=[("cleanup.policy", "compact"), ("compression.type", "uncompressed"),
                                 ("min.insync.replicas", str(cfg.transaction_state_log_min_isr)),
                                 ("segment.bytes", str(cfg.transaction_state_log_segment_bytes)),
                                 ("unclean.leader.election.enable", "false")])
    if name == SHARE_GROUP_STATE_TOPIC:
        # ShareCoordinatorService.shareGroupStateTopicConfigs: records are pruned by their coordinator, not
        # compacted or expired.
        layers = broker.config_layers()
        partitions = int(layers.value("share.coordinator.state.topic.num.partitions") or 50)
        replicas = min(int(layers.value("share.coordinator.state.topic.replication.factor") or 3), cfg.brokers)
        segment = layers.value("share.coordinator.state.topic.segment.bytes") or "104857600"
        return NewTopic(name, partitions, replicas,
                        configs=[("cleanup.policy", "delete"), ("compression.type", "producer"),
                                 ("segment.bytes", segment), ("retention.ms", "-1")])
    return NewTopic(name, cfg.num_partitions, cfg.default_replication_factor)


def ensure_internal_topic(broker: BrokerCore, name: str) -> bool:
    """Create an internal topic (`__consumer_offsets`, `__transaction_state`) with Kafka's layout for it, if
    missing. Kafka starts the creation and answers COORDINATOR_NOT_AVAILABLE meanwhile; kemu creates it at
    once. False if the creation failed."""
    if name in broker.topics:
        return True
    if name in broker.creating:
        return False  # a client's CreateTopics of it is underway: COORDINATOR_NOT_AVAILABLE meanwhile
    [outcome] = create_topics(broker, [auto_creation_request(broker, name)], validate_only=False)
    if outcome.error not in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS):
        log.error("could not create %s: %s %s", name, outcome.error.name, outcome.message)
        return False
    return True
