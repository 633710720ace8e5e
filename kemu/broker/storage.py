"""Where topics live on disk: each partition's log under the data directory, and the topic list.

Kafka keeps topic names, ids, partition counts and config overrides in its KRaft metadata log; kemu
keeps the same facts in one small file, `kemu-topics.json`, rewritten atomically on every change. The
partition directories are Kafka's own (`<topic>-<partition>/` with `partition.metadata` naming the topic
id), so a start-up reads the file and recovers every partition log listed in it.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kemu.broker.partition import Partition
from kemu.broker.topics import Topic, TopicRegistry
from kemu.clock import Clock
from kemu.log import LogConfig, LogDir

TOPICS_FILE = "kemu-topics.json"
_FORMAT_VERSION = 1

log = logging.getLogger(__name__)


class Storage:
    def __init__(self, data_dir: Path, clock: Clock) -> None:
        self.data_dir = data_dir
        self.log_dir = LogDir(data_dir, clock)
        self._path = data_dir / TOPICS_FILE
        # What a topic without overrides gets: Kafka's defaults, or the broker's dynamic log.* configs.
        self.log_defaults = LogConfig()
        self._deferring = 0
        self._deferred: TopicRegistry | None = None

    def log_config(self, topic: Topic) -> LogConfig:
        return LogConfig.from_props(topic.configs, base=self.log_defaults)

    def open_partition(self, topic: Topic, partition: Partition, config: LogConfig | None = None) -> Partition:
        """`config`: the topic's log config when the caller opens many partitions of it (parsed once)."""
        partition.attach(self.log_dir.open(topic.name, partition.index, config or self.log_config(topic),
                                           topic_id=topic.topic_id))
        return partition

    def open_topic(self, topic: Topic) -> None:
        config = self.log_config(topic)
        for partition in topic.partitions:
            if not partition.is_open:
                self.open_partition(topic, partition, config)

    def delete_topic(self, topic: Topic) -> None:
        for partition in topic.partitions:
            self.delete_partition(topic, partition)

    def delete_partition(self, topic: Topic, partition: Partition) -> None:
        self.log_dir.delete(topic.name, partition.index)
        partition.detach()

    def reconfigure(self, topic: Topic) -> None:
        config = self.log_config(topic)
        for partition in topic.partitions:
            if partition.is_open:
                partition.log.update_config(config)

    @contextmanager
    def one_save(self) -> Iterator[None]:
        """The saves asked for inside are made once, when it ends (also when it ends with an error: what was
        changed so far is kept). The file holds every topic, so a request that changes 10,000 topics and saved
        after each rewrote it 10,000 times: quadratic, seconds of a held event loop."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
            if not self._deferring and self._deferred is not None:
                registry, self._deferred = self._deferred, None
                self.save(registry)

    def save(self, registry: TopicRegistry) -> None:
        if self._deferring:
            self._deferred = registry
            return
        doc = {
            "version": _FORMAT_VERSION,
            "topics": [
                {
                    "name": topic.name,
                    "id": str(topic.topic_id),
                    "configs": topic.configs,
                    "partitions": [p.saved() for p in topic.partitions],
                }
                for topic in registry
            ],
        }
        tmp = self._path.with_suffix(".json.tmp")
        # No indent: only then is it the C encoder (a 10,000-partition topic took ~0.25 s to indent).
        tmp.write_text(json.dumps(doc, sort_keys=True))
        os.replace(tmp, self._path)

    def load(self, registry: TopicRegistry, node_ids: list[int]) -> None:
        """Register every saved topic and recover its partition logs."""
        if not self._path.exists():
            return
        doc = json.loads(self._path.read_text())
        for entry in doc.get("topics", []):
            partitions = [Partition.from_saved(entry["name"], p, node_ids) for p in entry["partitions"]]
            topic = Topic(entry["name"], uuid.UUID(entry["id"]), partitions, dict(entry.get("configs", {})))
            registry.add(topic)
            self.open_topic(topic)
        log.info("recovered %d topics from %s", len(registry), self.data_dir)

    def close(self) -> None:
        self.log_dir.close()
