"""A streams group's topology (KIP-1071) and its internal topics: Kafka's StreamsTopology and InternalTopicManager.

The first member of a streams group sends the application's topology: its sub-topologies, each with the
topics it reads (source topics, and repartition topics another sub-topology writes), the repartition topics it
writes, its state stores' changelog topics and the groups of source topics that must be co-partitioned.
`configure_topics` decides, against the topics that exist, how many partitions each internal topic must have
and how many tasks each sub-topology has, as Kafka's coordinator does:

- a repartition topic written by a sub-topology gets the largest partition count of that sub-topology's source
  topics (iterated until every repartition topic is decided, since one may feed another), unless the topology
  fixes its count;
- the topics of a co-partition group must have one partition count: repartition topics in it are coerced to
  the external topics' count (which must agree), or to the largest of their own;
- a changelog topic gets the largest partition count of its sub-topology's source and repartition topics,
  which is also the sub-topology's number of tasks.

What it finds is a status Kafka returns in the heartbeat (MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS,
MISSING_INTERNAL_TOPICS with the topics to create), or an invalid topology (STREAMS_INVALID_TOPOLOGY). Kafka
iterates several hash maps and sets here; where that order reaches a message or decides which error comes
first, the same order is taken (`java_hash_map_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kemu.groups.errors import GroupError
from kemu.groups.topics import TopicsView
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode


class Status(IntEnum):
    """StreamsGroupHeartbeatResponse.Status: a condition of the group a heartbeat reports."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5


class TopicConfigurationError(Exception):
    """Kafka's TopicConfigurationException: the topics do not (yet) fit the topology; reported as a status."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def invalid_topology(message: str) -> GroupError:
    return GroupError(ErrorCode.STREAMS_INVALID_TOPOLOGY, message)


# ---- the topology as the members send it and the StreamsGroupTopology record holds it -------------------
@dataclass(frozen=True, slots=True)
class TopologyTopic:
    """A changelog or repartition topic of the topology: 0 partitions is "decide for me", 0 replicas the
    broker's default."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    topic_configs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_field(cls, entry: Mapping[str, Any]) -> TopologyTopic:
        return cls(entry["name"], entry["partitions"], entry["replication_factor"],
                   tuple((c["key"], c["value"]) for c in entry.get("topic_configs") or ()))

    def to_field(self) -> dict[str, Any]:
        return {"name": self.name, "partitions": self.partitions, "replication_factor": self.replication_factor,
                "topic_configs": [{"key": k, "value": v} for k, v in self.topic_configs]}


@dataclass(frozen=True, slots=True)
class CopartitionGroup:
    """Indexes into the sub-topology's source topics and repartition source topics."""

    source_topics: tuple[int, ...] = ()
    source_topic_regex: tuple[int, ...] = ()
    repartition_source_topics: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopologyTopic, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopologyTopic, ...] = ()
    copartition_groups: tuple[CopartitionGroup, ...] = ()

    @classmethod
    def from_field(cls, entry: Mapping[str, Any]) -> Subtopology:
        return cls(
            entry["subtopology_id"], tuple(entry.get("source_topics") or ()),
            tuple(entry.get("source_topic_regex") or ()),
            tuple(TopologyTopic.from_field(t) for t in entry.get("state_changelog_topics") or ()),
            tuple(entry.get("repartition_sink_topics") or ()),
            tuple(TopologyTopic.from_field(t) for t in entry.get("repartition_source_topics") or ()),
            tuple(CopartitionGroup(tuple(g.get("source_topics") or ()), tuple(g.get("source_topic_regex") or ()),
                                   tuple(g.get("repartition_source_topics") or ()))
                  for g in entry.get("copartition_groups") or ()),
        )

    def to_field(self) -> dict[str, Any]:
        return {
            "subtopology_id": self.subtopology_id, "source_topics": list(self.source_topics),
            "source_topic_regex": list(self.source_topic_regex),
            "state_changelog_topics": [t.to_field() for t in self.state_changelog_topics],
            "repartition_sink_topics": list(self.repartition_sink_topics),
            "repartition_source_topics": [t.to_field() for t in self.repartition_source_topics],
            "copartition_groups": [{"source_topics": list(g.source_topics),
                                    "source_topic_regex": list(g.source_topic_regex),
                                    "repartition_source_topics": list(g.repartition_source_topics)}
                                   for g in self.copartition_groups],
        }

    def input_topics(self) -> list[str]:
        """Source topics, then repartition source topics: what the sub-topology's tasks read."""
        return [*self.source_topics, *(t.name for t in self.repartition_source_topics)]

    def copartitioned_sets(self) -> list[list[str]]:
        """Each co-partition group as topic names (Kafka collects them into a HashSet)."""
        return [java_hash_map_order(dict.fromkeys(
                    [*(self.source_topics[i] for i in g.source_topics),
                     *(self.repartition_source_topics[i].name for i in g.repartition_source_topics)]))
                for g in self.copartition_groups]


@dataclass(frozen=True, slots=True)
class StreamsTopology:
    epoch: int
    # By sub-topology id, in the order the member listed them (Kafka's HashMap is compared as a map).
    subtopologies: Mapping[str, Subtopology]

    @classmethod
    def from_field(cls, value: Mapping[str, Any]) -> StreamsTopology:
        """From a heartbeat's Topology or a StreamsGroupTopology record value (the same fields)."""
        subtopologies = [Subtopology.from_field(s) for s in value.get("subtopologies") or ()]
        return cls(value["epoch"], {s.subtopology_id: s for s in subtopologies})

    def to_record_value(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "subtopologies": [s.to_field() for s in self.subtopologies.values()]}

    def in_hash_order(self) -> list[Subtopology]:
        """The sub-topologies as Kafka's HashMap of them iterates."""
        return [self.subtopologies[i] for i in java_hash_map_order(self.subtopologies)]

    def required_topics(self) -> list[str]:
        """Every source, repartition source and changelog topic, in the order Kafka's HashSet of them has."""
        names: dict[str, None] = {}
        for sub in self.in_hash_order():
            names.update(dict.fromkeys(sub.input_topics()))
            names.update(dict.fromkeys(t.name for t in sub.state_changelog_topics))
        return java_hash_map_order(names)

    def source_topic_map(self) -> dict[str, str]:
        """Each input topic's sub-topology id."""
        mapping: dict[str, str] = {}
        for sub in self.in_hash_order():
            for topic in sub.input_topics():
                mapping[topic] = sub.subtopology_id
        return mapping

    def describe(self) -> dict[str, Any]:
        """StreamsGroupDescribe's topology of a group whose topics are not configured: as the members sent it."""
        return {"epoch": self.epoch, "subtopologies": [
            {"subtopology_id": sub_id, "source_topics": sorted(sub.source_topics),
             "repartition_sink_topics": sorted(sub.repartition_sink_topics),
             "repartition_source_topics": sorted((t.to_field() for t in sub.repartition_source_topics),
                                                 key=lambda t: t["name"]),
             "state_changelog_topics": sorted((t.to_field() for t in sub.state_changelog_topics),
                                              key=lambda t: t["name"])}
            for sub_id, sub in sorted(self.subtopologies.items())]}


# ---- the topology configured against the topics that exist ----------------------------------------------
@dataclass(frozen=True, slots=True)
class CreatableTopic:
    """An internal topic to create, as Kafka's coordinator hands it to its auto-topic-creation manager."""

    name: str
    num_partitions: int
    replication_factor: int  # -1: default.replication.factor
    configs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class ConfiguredInternalTopic:
    name: str
    partitions: int
    replication_factor: int | None
    configs: Mapping[str, str]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "partitions": self.partitions, "replication_factor": self.replication_factor or 0,
                "topic_configs": [{"key": k, "value": self.configs[k]} for k in java_hash_map_order(self.configs)]}

    def creatable(self) -> CreatableTopic:
        return CreatableTopic(self.name, self.partitions, self.replication_factor or -1,
                              tuple((k, self.configs[k]) for k in java_hash_map_order(self.configs)))


@dataclass(frozen=True, slots=True)
class ConfiguredSubtopology:
    number_of_tasks: int
    source_topics: frozenset[str]
    repartition_source_topics: Mapping[str, ConfiguredInternalTopic]
    repartition_sink_topics: frozenset[str]
    state_changelog_topics: Mapping[str, ConfiguredInternalTopic]

    @property
    def is_stateful(self) -> bool:
        return bool(self.state_changelog_topics)

    def describe(self, subtopology_id: str) -> dict[str, Any]:
        return {"subtopology_id": subtopology_id, "source_topics": sorted(self.source_topics),
                "repartition_sink_topics": sorted(self.repartition_sink_topics),
                "repartition_source_topics": sorted((t.describe() for t in self.repartition_source_topics.values()),
                                                    key=lambda t: t["name"]),
                "state_changelog_topics": sorted((t.describe() for t in self.state_changelog_topics.values()),
                                                 key=lambda t: t["name"])}


@dataclass(frozen=True, slots=True)
class ConfiguredTopology:
    epoch: int
    metadata_hash: int
    # By sub-topology id, sorted (Kafka's TreeMap); None when the topics do not fit (see `error`).
    subtopologies: Mapping[str, ConfiguredSubtopology] | None
    topics_to_create: Mapping[str, CreatableTopic]
    error: TopicConfigurationError | None

    @property
    def is_ready(self) -> bool:
        return self.error is None

    def describe(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "subtopologies": [sub.describe(sub_id) for sub_id, sub in
                                                        (self.subtopologies or {}).items()]}


PartitionCount = Callable[[str], "int | None"]


def summarize_topics(names: Iterable[str]) -> str:
    """Kafka's summarizeTopics: up to three names, then how many more."""
    listed = list(names)
    if not listed:
        return "<none>"
    text = ", ".join(listed[:3])
    return text + (f" and {len(listed) - 3} additional topics" if len(listed) > 3 else "")


def configure_topics(topology: StreamsTopology, metadata_hash: int, topics: TopicsView) -> ConfiguredTopology:
    """Kafka's InternalTopicManager.configureTopics. Raises GroupError(STREAMS_INVALID_TOPOLOGY) for a topology
    whose repartition topics cannot be decided."""
    try:
        _throw_on_missing_source_topics(topology, topics)
        decided = _decide_partition_counts(topology, topics)

        def count(topic: str) -> int | None:
            return _partition_count(topics, decided, topic)

        configured = {sub_id: _configure_subtopology(topology.subtopologies[sub_id], count, decided)
                      for sub_id in sorted(topology.subtopologies)}
        to_create = _missing_internal_topics(configured, topology, topics)
        error = None
        if to_create:
            error = TopicConfigurationError(Status.MISSING_INTERNAL_TOPICS,
                                            "Internal topics are missing: " + summarize_topics(to_create))
        return ConfiguredTopology(topology.epoch, metadata_hash, configured, to_create, error)
    except TopicConfigurationError as failure:
        return ConfiguredTopology(topology.epoch, metadata_hash, None, {}, failure)


def _partition_count(topics: TopicsView, decided: Mapping[str, int], topic: str) -> int | None:
    """An existing topic's partition count, else the one decided for an internal topic, else None."""
    found = topics.by_name.get(topic)
    if found is not None:
        return found.num_partitions
    return decided.get(topic)


def _throw_on_missing_source_topics(topology: StreamsTopology, topics: TopicsView) -> None:
    missing = sorted({t for sub in topology.subtopologies.values() for t in sub.source_topics
                      if t not in topics.by_name})
    if missing:
        raise TopicConfigurationError(Status.MISSING_SOURCE_TOPICS,
                                      f"Source topics {summarize_topics(missing)} are missing.")


def _decide_partition_counts(topology: StreamsTopology, topics: TopicsView) -> dict[str, int]:
    decided: dict[str, int] = {}

    def count(topic: str) -> int | None:
        return _partition_count(topics, decided, topic)

    subtopologies = topology.in_hash_order()
    decided.update(_repartition_topic_counts(subtopologies, count))
    fixed = {t.name for sub in subtopologies for t in sub.repartition_source_topics if t.partitions != 0}
    flexible = {t.name for sub in subtopologies for t in sub.repartition_source_topics if t.partitions == 0}
    # Kafka walks a HashSet of the fixed names for the first of them.
    fixed_order = java_hash_map_order(dict.fromkeys(t.name for sub in subtopologies
                                                    for t in sub.repartition_source_topics if t.partitions != 0))
    for sub in subtopologies:
        for copartitioned in sub.copartitioned_sets():
            decided.update(_enforce_copartitioning(copartitioned, fixed, fixed_order, flexible, count))
    decided.update(_changelog_topic_counts(subtopologies, count))
    return decided


def _repartition_topic_counts(subtopologies: list[Subtopology], count: PartitionCount) -> dict[str, int]:
    """Kafka's RepartitionTopics.setup."""
    missing = {t for sub in subtopologies for t in sub.source_topics
               if t not in {r.name for r in sub.repartition_source_topics} and count(t) is None}
    if missing:
        raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Missing source topics: {', '.join(sorted(missing))}")
    counts = {t.name: t.partitions for sub in subtopologies for t in sub.repartition_source_topics
              if t.partitions != 0}
    needed = True
    while needed:
        needed = False
        progress = False
        for sub in subtopologies:
            for sink in sub.repartition_sink_topics:
                if sink in counts:
                    continue
                # The largest partition count among what the writing sub-topology reads.
                candidates = [counts[t.name] for t in sub.repartition_source_topics if t.name in counts]
                candidates += [n for t in sub.source_topics if (n := count(t)) is not None]
                if candidates:
                    counts[sink] = max(candidates)
                    progress = True
                else:
                    needed = True
        if needed and not progress:
            raise invalid_topology("Failed to compute number of partitions for all repartition topics. There may "
                                   "be loops in the topology that cannot be resolved.")
    for sub in subtopologies:
        if any(t.name not in counts for t in sub.repartition_source_topics):
            raise invalid_topology("Failed to compute number of partitions for all repartition topics, because a "
                                   "repartition source topic is never used as a sink topic.")
    return counts


def _java_map(entries: Mapping[str, int]) -> str:
    """A Java map's toString, of a TreeMap (sorted)."""
    return "{" + ", ".join(f"{k}={entries[k]}" for k in sorted(entries)) + "}"


def _enforce_copartitioning(copartitioned: list[str], fixed: set[str], fixed_order: list[str],
                            flexible: set[str], count: PartitionCount) -> dict[str, int]:
    """Kafka's CopartitionedTopicsEnforcer.enforce for one co-partition group."""
    if not copartitioned:
        return {}

    def known(topic: str) -> int:
        found = count(topic)
        if found is None:
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Number of partitions is not set for topic: {topic}")
        return found

    repartition = {t: known(t) for t in copartitioned if t in fixed or t in flexible}
    external = {t: known(t) for t in copartitioned if t not in repartition}
    if set(copartitioned) == set(repartition):
        if fixed:
            first = known(fixed_order[0])
            if any(known(t) != first for t in fixed_order):
                raise TopicConfigurationError(
                    Status.INCORRECTLY_PARTITIONED_TOPICS,
                    f"Following topics do not have the same number of partitions: [{_java_map(repartition)}]")
            partitions = first
        else:
            partitions = max(repartition.values())
            if partitions == 0:
                raise invalid_topology("All topics in the copartition group had undefined partition number: "
                                       f"[{', '.join(repartition)}]")
    else:
        partitions = next(iter(external.values()))
        if any(n != partitions for n in external.values()):
            raise TopicConfigurationError(
                Status.INCORRECTLY_PARTITIONED_TOPICS,
                f"Following topics do not have the same number of partitions: [{_java_map(external)}]")
    result: dict[str, int] = {}
    for topic in java_hash_map_order(repartition):
        result[topic] = partitions
        if topic in fixed and repartition[topic] != partitions:
            raise TopicConfigurationError(
                Status.INCORRECTLY_PARTITIONED_TOPICS,
                f"Number of partitions [{repartition[topic]}] of repartition topic [{topic}] doesn't match number "
                f"of partitions [{partitions}] of the source topic.")
    return result


def _changelog_topic_counts(subtopologies: list[Subtopology], count: PartitionCount) -> dict[str, int]:
    """Kafka's ChangelogTopics.setup: a changelog has as many partitions as its sub-topology has tasks."""
    counts: dict[str, int] = {}
    for sub in subtopologies:
        inputs = sub.input_topics()
        if not inputs:
            raise invalid_topology(f"No source topics found for subtopology {sub.subtopology_id}")
        known = []
        for topic in inputs:
            found = count(topic)
            if found is None:
                raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, f"No partition count for source topic {topic}")
            known.append(found)
        for changelog in sub.state_changelog_topics:
            counts[changelog.name] = max(known)
    return counts


def _configure_subtopology(sub: Subtopology, count: PartitionCount,
                           decided: Mapping[str, int]) -> ConfiguredSubtopology:
    tasks = 0
    for topic in sub.input_topics():
        found = count(topic)
        if found is None:
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Number of partitions must be set for topic {topic}")
        tasks = max(tasks, found)
    if tasks <= 0:
        raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, "Subtopology does not contain any source topics")

    def internal(topic: TopologyTopic) -> ConfiguredInternalTopic:
        if topic.partitions == 0 and topic.name not in decided:
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR,
                             f"Number of partitions must be set for topic {topic.name}")
        return ConfiguredInternalTopic(topic.name, topic.partitions or decided[topic.name],
                                       topic.replication_factor or None, dict(topic.topic_configs))

    return ConfiguredSubtopology(
        tasks, frozenset(sub.source_topics),
        {t.name: internal(t) for t in sub.repartition_source_topics}, frozenset(sub.repartition_sink_topics),
        {t.name: internal(t) for t in sub.state_changelog_topics})


def _missing_internal_topics(configured: Mapping[str, ConfiguredSubtopology], topology: StreamsTopology,
                             topics: TopicsView) -> dict[str, CreatableTopic]:
    """The internal topics to create, in the order of Kafka's HashMap of them; an existing one with another
    partition count than decided is INCORRECTLY_PARTITIONED_TOPICS."""
    wanted: dict[str, CreatableTopic] = {}
    for sub in configured.values():
        for group in (sub.repartition_source_topics, sub.state_changelog_topics):
            for name in java_hash_map_order(group):
                wanted[name] = group[name].creatable()
    for topic in topology.required_topics():
        existing = topics.by_name.get(topic)
        expected = wanted.pop(topic, None) if existing is not None else None
        if existing is not None and expected is not None and existing.num_partitions != expected.num_partitions:
            raise TopicConfigurationError(
                Status.INCORRECTLY_PARTITIONED_TOPICS,
                f"Existing topic {topic} has different number of partitions: expected {expected.num_partitions}, "
                f"found {existing.num_partitions}")
    order = java_hash_map_order(
        [name for sub in configured.values() for group in (sub.repartition_source_topics, sub.state_changelog_topics)
         for name in java_hash_map_order(group)])
    return {name: wanted[name] for name in order if name in wanted}
