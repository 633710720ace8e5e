"""Adding partitions to existing topics (CreatePartitions), with the checks and messages of Kafka's KRaft
controller (ReplicationControlManager.createPartitions).

A topic can only grow: the same count is "Topic already has N partition(s).", fewer is "The topic T
currently has N partition(s); M would not be an increase." (both INVALID_PARTITIONS). Manual assignments
give one replica list per added partition, each as wide as the topic's existing partitions, naming live
brokers once each (INVALID_REPLICA_ASSIGNMENT).

The controller builds one request's records in a BoundedList of MAX_RECORDS_PER_USER_OP (10000), one
PartitionRecord per added partition. A topic that overflows it fails with UNKNOWN_SERVER_ERROR and no message
(its BoundedListTooLongException is caught per topic as an unexpected error, and ApiError never carries a
message for UNKNOWN_SERVER_ERROR), yet the records the list took before it overflowed stay in the result the
controller commits: without validate_only the topic still grows by what was left of the 10000, and every
topic after it that would add any fails alike. More than 10000 topics handed to the controller (duplicates
and unauthorized ones are not) overflow its list of results instead, outside that catch: the whole request
is POLICY_VIOLATION "Unable to perform excessively large batch operation.". A count near 2^31 is refused
before anything is sized by it (Kafka's placer fails to make its list first: nothing is added). Released
Kafka has no other CreatePartitions limit: the "Excessively large number of partitions per request."
POLICY_VIOLATION is CreateTopics' only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kemu.admin.topics import assignment_problem, unreachable_factor
from kemu.broker.broker import BrokerCore
from kemu.broker.creation import PartitionCreation
from kemu.broker.errors import MAX_RECORDS_PER_USER_OP, TOO_MANY_RECORDS, ApiError
from kemu.broker.partition import Partition
from kemu.broker.topics import Topic
from kemu.wire.errors import ErrorCode

# The JDK's largest array (ArraysSupport.SOFT_MAX_ARRAY_LENGTH); a smaller one may still not fit Kafka's heap.
JAVA_MAX_ARRAY = 2**31 - 1 - 8


@dataclass(frozen=True, slots=True)
class NewPartitions:
    name: str
    count: int
    assignments: Sequence[Sequence[int]] | None = None  # one broker list per added partition; None: placed


@dataclass(frozen=True, slots=True)
class PartitionsOutcome:
    name: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


class _PartitionsRefused(Exception):
    def __init__(self, error: ErrorCode, message: str | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def create_partitions(
    broker: BrokerCore, requested: Sequence[NewPartitions], validate_only: bool
) -> list[PartitionsOutcome]:
    """Check, create every log and register, all at once (see `plan_partitions` for a caller that yields)."""
    outcomes, creation = plan_partitions(broker, requested, validate_only)
    creation.run()
    return outcomes


def plan_partitions(
    broker: BrokerCore, requested: Sequence[NewPartitions], validate_only: bool
) -> tuple[list[PartitionsOutcome], PartitionCreation]:
    """The answers, and the creation that adds the partitions once run (as `plan_topics`'). Duplicate names
    first (INVALID_REQUEST, as ControllerApis answers them), then each topic in turn: the order decides which
    topic overflows the request's records (the handler gives them in ControllerApis' order)."""
    names = [r.name for r in requested]
    counts = Counter(names)  # not names.count per name: quadratic in a client's 10^6-topic request
    duplicates = {name: None for name, seen in counts.items() if seen > 1}  # ordered, and O(1) `in`
    outcomes = [PartitionsOutcome(name, ErrorCode.INVALID_REQUEST, "Duplicate topic name.") for name in duplicates]
    if len(counts) - len(duplicates) > MAX_RECORDS_PER_USER_OP:
        # The controller keeps its per-topic results in a BoundedList too, and adds to it outside the per-topic
        # catch: the overflow fails the whole request, nothing committed (probed on Kafka 4.3.1: 10001 unknown
        # topics, each POLICY_VIOLATION; 10000 each UNKNOWN_TOPIC_OR_PARTITION).
        raise ApiError(ErrorCode.POLICY_VIOLATION, TOO_MANY_RECORDS)
    budget = MAX_RECORDS_PER_USER_OP
    creation = PartitionCreation(broker)
    for request in requested:
        if request.name in duplicates:
            continue
        try:
            topic, layout = _plan(broker, request, budget)
        except _PartitionsRefused as refused:
            outcomes.append(PartitionsOutcome(request.name, refused.error, refused.message))
            continue
        budget -= len(layout)
        if layout and not validate_only:
            creation.grow(topic, [Partition(topic=topic.name, index=len(topic.partitions) + i, replicas=list(replicas))
                                  for i, replicas in enumerate(layout)])
        overflowed = len(topic.partitions) + len(layout) < request.count
        outcomes.append(PartitionsOutcome(request.name, ErrorCode.UNKNOWN_SERVER_ERROR) if overflowed
                        else PartitionsOutcome(request.name))
    return outcomes, creation


def _plan(broker: BrokerCore, request: NewPartitions, budget: int) -> tuple[Topic, list[list[int]]]:
    """The topic and the replica lists of the partitions to add, or why there can be none. Past the request's
    remaining `budget` of records only the first `budget` lists are made: the controller's record list takes
    that many before it overflows, and the caller answers the rest (`plan_partitions`)."""
    topic = broker.topics.get(request.name)
    if topic is None:
        raise _PartitionsRefused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if request.name in broker.creating:
        # The handlers queue creations one after another as Kafka's controller does (kemu.handlers._creating);
        # only a direct core call (a test power) can arrive while a request's creation is making logs.
        raise _PartitionsRefused(ErrorCode.REASSIGNMENT_IN_PROGRESS, f"Partitions are being added to {topic.name}.")
    current = len(topic.partitions)
    if request.count == current:
        raise _PartitionsRefused(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if request.count < current:
        raise _PartitionsRefused(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {topic.name} currently has {current} partition(s); {request.count} would not be an increase.",
        )
    additional = request.count - current
    live = broker.live_broker_ids()
    factor = topic.replication_factor
    if request.assignments is None:
        if factor > len(live):
            raise _PartitionsRefused(ErrorCode.INVALID_REPLICATION_FACTOR, unreachable_factor(factor, len(live)))
        _check_placeable(additional)
        return topic, broker.place_all(range(current, current + min(additional, budget)), factor)
    if additional != len(request.assignments):
        raise _PartitionsRefused(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Attempted to add {additional} additional partition(s), but only "
            f"{len(request.assignments)} assignment(s) were specified.",
        )
    for brokers in request.assignments:
        problem = assignment_problem(list(brokers), live, factor)
        if problem is not None:
            raise _PartitionsRefused(ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
    return topic, [list(brokers) for brokers in request.assignments[:budget]]


def _check_placeable(additional: int) -> None:
    # Kafka's placer sizes a list by the count (`new ArrayList<>(numPartitions)`): past Java's largest array
    # that fails before any record is made, an unexpected error that adds nothing.
    if additional > JAVA_MAX_ARRAY:
        raise _PartitionsRefused(ErrorCode.UNKNOWN_SERVER_ERROR)
