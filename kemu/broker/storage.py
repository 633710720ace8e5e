"""Where topics live on disk: each partition's log under the data directory, and the topic list.

Kafka keeps topic names, ids, partition counts and config overrides in its KRaft metadata log; kemu
keeps the same facts in one small file, `kemu-topics.json`, rewritten atomically on every change. The
partition directories are Kafka's own (`<topic>-<partition>/` with `partition.metadata` naming the topic
id), so a start-up reads the file and recovers every partition log listed in it.

The file is one JSON document, but it is not encoded whole on each change: each topic's entry is kept as
the text last encoded, and a save encodes again only the topics its caller says changed (and any it has no
text for), then writes the texts of every registered topic in the registry's order: the same bytes as
encoding the whole document. Encoding 10,000 topics took ~60-125 ms of a held event loop; writing them is
the join and the write, ~3-5 ms. A caller that changes many topics over many slices encodes each slice's
as it goes (`encode`) and saves once. A topic changed with no save after it is written as it was last
encoded (as before, it becomes durable only at a save that names it, or at the next full one).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterable, Iterator
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
        self._deferred_changed: dict[uuid.UUID, Topic] | None = {}  # None: a full save was asked for
        self._deferred_encoded: list[tuple[Topic, str]] = []
        # Each topic's entry of the file as last encoded, by name, with the Topic it was encoded from (a name's
        # str caches its hash; a UUID's is computed in Python each time, a third of a save's time).
        self._entries: dict[str, tuple[Topic, str]] = {}

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
        changed so far is kept), naming every topic any of them named. The file holds every topic, so a
        request that changes 10,000 topics and saved after each rewrote it 10,000 times: quadratic, seconds
        of a held event loop. Never held across a yield to the event loop: another request's save would
        wait in it, and that request be answered before its change was written."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
            if not self._deferring and self._deferred is not None:
                registry, self._deferred = self._deferred, None
                changed, self._deferred_changed = self._deferred_changed, {}
                encoded, self._deferred_encoded = self._deferred_encoded, []
                self.save(registry, None if changed is None else changed.values(), encoded)

    def encode(self, topics: Iterable[Topic]) -> None:
        """Encode these registered topics' entries as they are now, for the next save to write as they are:
        a caller changing many topics spreads the encoding over its slices, then saves naming none of them."""
        for topic in topics:
            self._entries[topic.name] = (topic, entry_text(topic))

    def save(self, registry: TopicRegistry, changed: Iterable[Topic] | None = None,
             encoded: Iterable[tuple[Topic, str]] = ()) -> None:
        """Write the topic list: every registered topic, those in `changed` (changed since they were last
        encoded) encoded again first, None encoding every topic again; `encoded` gives topics' entries
        encoded ahead (`entry_text`, by a creation while its topics were not yet registered)."""
        if self._deferring:
            self._deferred = registry
            if changed is None or self._deferred_changed is None:
                self._deferred_changed = None
            else:
                self._deferred_changed.update((topic.topic_id, topic) for topic in changed)
            self._deferred_encoded.extend(encoded)
            return
        if changed is None:
            self._entries.clear()
        else:
            self.encode(changed)
        for topic, text in encoded:
            self._entries[topic.name] = (topic, text)
        cached = self._entries
        texts: list[str] = []
        for topic in registry:
            entry = cached.get(topic.name)
            if entry is None or entry[0] is not topic:
                entry = cached[topic.name] = (topic, entry_text(topic))
            texts.append(entry[1])
        if len(cached) > len(texts):  # a deleted topic's text goes with it
            self._entries = {name: entry for name, entry in cached.items() if registry.get(name) is entry[0]}
        # json.dumps(doc, sort_keys=True) of {"version": ..., "topics": [...]}, byte for byte.
        text = ('{"topics": [' + ", ".join(texts) + '], "version": '
                + str(_FORMAT_VERSION) + "}")
        tmp = self._path.with_suffix(".json.tmp")
        tmp.write_text(text)
        os.replace(tmp, self._path)

    def load(self, registry: TopicRegistry, node_ids: list[int]) -> None:
        """Register every saved topic and recover its partition logs."""
        if not self._path.exists():
            return
        import json  # only for a data directory with topics: a new one's start-up needs no json

        doc = json.loads(self._path.read_text())
        for entry in doc.get("topics", []):
            partitions = [Partition.from_saved(entry["name"], p, node_ids) for p in entry["partitions"]]
            topic = Topic(entry["name"], uuid.UUID(entry["id"]), partitions, dict(entry.get("configs", {})))
            registry.add(topic)
            self.open_topic(topic)
            self._entries[topic.name] = (topic, entry_text(topic))  # encoded here, not at the first save
        log.info("recovered %d topics from %s", len(registry), self.data_dir)

    def close(self) -> None:
        self.log_dir.close()


def entry_text(topic: Topic) -> str:
    """The topic's entry of the topic list, as the save writes it."""
    import json  # loaded with the first topic: a broker with none never needs it

    # No indent: only then is it the C encoder (a 10,000-partition topic took ~0.25 s to indent).
    return json.dumps({"name": topic.name, "id": str(topic.topic_id), "configs": topic.configs,
                       "partitions": [p.saved() for p in topic.partitions]}, sort_keys=True)
