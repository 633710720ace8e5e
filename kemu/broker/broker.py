"""The broker's core state: who it is, where clients reach it, and the topics it hosts."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from kemu.broker.broker_configs import ConfigLayers, DynamicBrokerConfigs, static_values
from kemu.broker.config import BrokerConfig
from kemu.broker.fetch_sessions import FetchSessionCache
from kemu.broker.housekeeping import Housekeeping
from kemu.broker.ids import new_cluster_id
from kemu.broker.partition import Partition
from kemu.broker.storage import Storage
from kemu.broker.topic_configs import log_defaults
from kemu.broker.topics import Topic, TopicRegistry
from kemu.clock import Clock

_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


@dataclass(frozen=True, slots=True)
class BrokerNode:
    node_id: int
    host: str
    port: int
    rack: str | None


class Broker:
    def __init__(self, config: BrokerConfig, clock: Clock, cluster_id: str | None = None) -> None:
        self.config = config
        self.clock = clock
        self.cluster_id = cluster_id or config.cluster_id or new_cluster_id()
        self.topics = TopicRegistry()
        self.bound_port: int | None = None  # set by the server once its listener is bound
        # The machine's name, which a broker listening on a wildcard address advertises (as Kafka does with
        # an empty listener host); the server looks it up when it binds, so the core does no name lookups.
        self.hostname: str | None = None
        # Without a data directory the broker keeps its logs in a temporary one, removed on close().
        self._temporary_dir = None if config.data_dir else tempfile.mkdtemp(prefix="kemu-")
        self.data_dir = Path(config.data_dir or self._temporary_dir or ".")
        self.dynamic_configs = DynamicBrokerConfigs(self.data_dir, config.node_id)
        self.storage = Storage(self.data_dir, clock)
        self.apply_log_defaults()
        self.storage.load(self.topics, config.node_id)
        # KIP-227 incremental fetch sessions live as long as the broker, across connections.
        self.fetch_sessions = FetchSessionCache()
        self.housekeeping = Housekeeping(clock)
        self.housekeeping.add("log-retention", self._run_retention)
        # Producer state lives in each partition, whether or not a coordinator was ever asked for an id.
        self.housekeeping.add("producer-id-expiration", self._expire_producers,
                              clock.now_ms() + config.producer_id_expiration_check_interval_ms)

    def _expire_producers(self, now_ms: int) -> int:
        for topic in self.topics:
            for partition in topic.partitions:
                if partition.is_open:
                    partition.expire_producers(now_ms, self.config.producer_id_expiration_ms)
        return now_ms + self.config.producer_id_expiration_check_interval_ms

    def _run_retention(self, now_ms: int) -> int:
        self.storage.log_dir.run_retention()
        return now_ms + self.config.log_retention_check_interval_ms

    @property
    def node_id(self) -> int:
        return self.config.node_id

    @property
    def controller_id(self) -> int:
        # A KRaft broker tells clients some live broker is "the controller" (they cannot reach the real
        # quorum); with one broker that is this one.
        return self.config.node_id

    def advertised_endpoint(self) -> tuple[str, int]:
        host = self.config.advertised_host
        if host is None:
            wildcard = self.config.host in _WILDCARDS
            host = (self.hostname or self.config.host) if wildcard else self.config.host
        port = self.config.advertised_port or self.bound_port or self.config.port
        return host, port

    def brokers(self) -> list[BrokerNode]:
        host, port = self.advertised_endpoint()
        return [BrokerNode(self.config.node_id, host, port, self.config.rack)]

    def live_broker_ids(self) -> list[int]:
        return [node.node_id for node in self.brokers()]


    def add_topic(self, topic: Topic) -> None:
        self.topics.add(topic)
        self.storage.open_topic(topic)
        self.storage.save(self.topics)

    def delete_topic(self, topic_id: uuid.UUID) -> Topic:
        topic = self.topics.remove(topic_id)
        self.storage.delete_topic(topic)
        self.storage.save(self.topics)
        return topic

    def partition(self, topic: str, index: int) -> Partition | None:
        """An open partition this broker leads, or None if there is no such partition."""
        found = self.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return None
        partition = found.partitions[index]
        return partition if partition.is_open else None

    def config_layers(self) -> ConfigLayers:
        """The broker's config as DescribeConfigs layers it: per-broker dynamic, cluster default, static."""
        static = static_values(self.config, bound_port=self.bound_port, data_dir=self.data_dir,
                               advertised=self.advertised_endpoint())
        return self.dynamic_configs.layers(static)

    def apply_log_defaults(self) -> None:
        """Give every partition log the broker's current log.* defaults (after a dynamic broker config change,
        and at start-up before the logs open), as Kafka's DynamicLogConfig.reconfigure does."""
        self.storage.log_defaults = log_defaults(self.config_layers())
        for topic in self.topics:
            self.storage.reconfigure(topic)

    def close(self) -> None:
        self.storage.close()
        if self._temporary_dir is not None:
            shutil.rmtree(self._temporary_dir, ignore_errors=True)
