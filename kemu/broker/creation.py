"""Creating partition logs a few at a time, so a legal 10,000-partition CreateTopics does not hold the
server's one thread for seconds.

A `PartitionCreation` is the plan an admin request made (new topics, partitions added to existing ones);
`step` opens the next few logs, `finish` registers everything and writes the topic list once. The core stays
synchronous: a handler calls `step` until it is done, yielding to its event loop in between, and other
connections are served meanwhile (Kafka creates logs on other threads). Until `finish`, nothing is visible:
the topics and partitions are not in the registry, and their names are in `BrokerCore.creating`, so another
creation of the same name is refused instead of racing this one.

A `kill -9` before `finish` leaves partition directories the topic list does not name: they are not opened
at start-up, and a later creation of the same topic recovers (empty) files from them. A log that cannot be
made (a full disk, an I/O error) fails the creation as a whole, as a Kafka broker fails a log it cannot create
(KafkaStorageException): nothing of it is registered, `failure` says why, and `mark_failed` gives the request's
topics KAFKA_STORAGE_ERROR, so a later request may create them once there is room.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kemu.broker.broker import BrokerCore
from kemu.broker.partition import Partition
from kemu.broker.storage import entry_text
from kemu.broker.topics import Topic
from kemu.log import LogConfig
from kemu.wire.errors import ErrorCode

# Logs opened per step: ~0.25 ms of file creation each (several times that on a loaded machine: 16 held the
# loop for 80 ms), so a step holds the loop for a millisecond or two; the handler paces the yields.
STEP_PARTITIONS = 4
# New topics' entries of the topic list encoded per step once every log is open (~6 µs a one-partition
# topic: 10,000 at once held the loop for 60-125 ms at `finish`).
STEP_ENCODED = 128

log = logging.getLogger("kemu.broker")


@dataclass(slots=True)
class PartitionCreation:
    broker: BrokerCore
    topics: list[Topic] = field(default_factory=list)  # new topics, their partitions in place
    grown: list[tuple[Topic, list[Partition]]] = field(default_factory=list)  # partitions to append
    _queue: list[tuple[Topic, Partition]] = field(default_factory=list)
    _done: int = 0
    _encoded: list[tuple[Topic, str]] = field(default_factory=list)  # the new topics' entries of the topic list
    failure: OSError | None = None

    def add_topic(self, topic: Topic) -> None:
        self._reserve(topic.name)
        self.topics.append(topic)
        self._queue.extend((topic, partition) for partition in topic.partitions)

    def grow(self, topic: Topic, partitions: Sequence[Partition]) -> None:
        self._reserve(topic.name)
        self.grown.append((topic, list(partitions)))
        self._queue.extend((topic, partition) for partition in partitions)

    def _reserve(self, name: str) -> None:
        if name in self.broker.creating:
            raise ValueError(f"a creation of {name} is already underway")
        self.broker.creating.add(name)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.topics] + [t.name for t, _ in self.grown]

    def step(self, count: int = STEP_PARTITIONS) -> bool:
        """Open the next `count` partition logs, or once all are open encode the next new topics' entries of
        the topic list; True once all is done (then call `finish`)."""
        if self.failure is not None:
            return True
        if self._done < len(self._queue) and not self._open(count):
            return self.failure is not None
        encoded = len(self._encoded)
        end = min(encoded + max(count, STEP_ENCODED), len(self.topics))
        self._encoded.extend((topic, entry_text(topic)) for topic in self.topics[encoded:end])
        return end == len(self.topics)

    def _open(self, count: int) -> bool:
        """Open the next `count` partition logs; True if every log is open now."""
        storage = self.broker.storage
        end = min(self._done + count, len(self._queue))
        configs: dict[str, LogConfig] = {}
        for topic, partition in self._queue[self._done:end]:
            config = configs.get(topic.name)
            if config is None:
                config = configs[topic.name] = storage.log_config(topic)
            try:
                storage.open_partition(topic, partition, config)
            except OSError as failed:
                self._failed(f"{topic.name}-{partition.index}", failed)
                return False
        self._done = end
        return self._done == len(self._queue)

    def _failed(self, what: str, failed: OSError) -> None:
        self.failure = failed
        self._done = len(self._queue)
        log.error("cannot create the log of %s in %s: %s", what, self.broker.data_dir, failed.strerror or failed)

    def run(self) -> None:
        """All of it at once (internal topics, and callers with no loop to yield to)."""
        try:
            while not self.step(len(self._queue)):
                pass
        except BaseException:
            self.abandon()
            raise
        self.finish()

    def finish(self) -> None:
        """Once every step is done: register the new topics and partitions and save the topic list; release
        the names. A topic deleted while its partitions were being added gets none of them: their logs go."""
        broker = self.broker
        try:
            if self.failure is not None:
                self._drop_opened()
                return
            for topic in self.topics:
                broker.topics.add(topic)
                log.debug("created topic %s: %d partitions, id %s", topic.name, len(topic.partitions), topic.topic_id)
            for topic, partitions in self.grown:
                if broker.topics.by_id(topic.topic_id) is topic:
                    topic.partitions.extend(partitions)
                    continue
                for partition in partitions:
                    broker.storage.log_dir.delete(topic.name, partition.index)
                    partition.detach()
            if self.topics or self.grown:
                try:
                    broker.storage.save(broker.topics, changed=[topic for topic, _ in self.grown],
                                        encoded=self._encoded)
                except OSError as failed:
                    self._unregister()
                    self._failed("the topic list", failed)
                    self._drop_opened()
        finally:
            self.abandon()

    def _unregister(self) -> None:
        """Undo finish's registration: the topic list on disk never named them."""
        for topic in self.topics:
            if self.broker.topics.by_id(topic.topic_id) is topic:
                self.broker.topics.remove(topic.topic_id)
        for topic, partitions in self.grown:
            for partition in partitions:
                if partition in topic.partitions:
                    topic.partitions.remove(partition)

    def _drop_opened(self) -> None:
        """The logs made before the failure go, their directories too: the room they took is given back, and
        a later creation of the same names starts clean."""
        for topic, partition in self._queue:
            self.broker.storage.log_dir.delete(topic.name, partition.index)
            partition.detach()

    @property
    def failure_message(self) -> str | None:
        if self.failure is None:
            return None
        return f"Error while creating log in dir {self.broker.data_dir}: {self.failure.strerror or self.failure}"

    def mark_failed(self, outcomes: Sequence[Any]) -> None:
        """Each outcome (with `name`, `error`, `message`) of a topic this creation was to make: KAFKA_STORAGE_ERROR
        when the creation failed on storage."""
        if self.failure is None:
            return
        names = set(self.names)
        for outcome in outcomes:
            if outcome.name in names and outcome.error is ErrorCode.NONE:
                outcome.error = ErrorCode.KAFKA_STORAGE_ERROR
                outcome.message = self.failure_message

    def abandon(self) -> None:
        """Release the names (finish does; so does a caller whose step failed: what was opened stays
        unregistered, as after a kill)."""
        for name in self.names:
            self.broker.creating.discard(name)
