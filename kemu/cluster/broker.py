"""The broker's core state: who it is, where clients reach it, and the topics it hosts."""

from __future__ import annotations

import shutil
import socket
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from kemu.clock import Clock
from kemu.cluster import topic_admin
from kemu.cluster.broker_configs import DynamicBrokerConfigs
from kemu.cluster.config import BrokerConfig
from kemu.cluster.housekeeping import Housekeeping
from kemu.cluster.ids import new_cluster_id
from kemu.cluster.topic_admin import CreateOutcome, DeleteOutcome, NewTopic
from kemu.cluster.topic_configs import apply_broker_log_defaults
from kemu.cluster.topic_names import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, invalid_name_reason
from kemu.cluster.storage import Storage
from kemu.cluster.topics import Topic, TopicRegistry
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.cluster.group_service import GroupService
    from kemu.cluster.txn_service import TxnService
    from kemu.txn.partition import TransactionalPartition

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
        # Without a data directory the broker keeps its logs in a temporary one, removed on close().
        self._temporary_dir = None if config.data_dir else tempfile.mkdtemp(prefix="kemu-")
        self.data_dir = Path(config.data_dir or self._temporary_dir or ".")
        self.dynamic_configs = DynamicBrokerConfigs(self.data_dir, config.node_id)
        self.storage = Storage(self.data_dir, clock)
        apply_broker_log_defaults(self)
        self.storage.load(self.topics, config.node_id)
        self.housekeeping = Housekeeping(clock)
        self.housekeeping.add("log-retention", self._run_retention)
        # Producer state lives in each partition, whether or not a coordinator was ever asked for an id.
        self.housekeeping.add("producer-id-expiration", self._expire_producers,
                              clock.now_ms() + config.producer_id_expiration_check_interval_ms)
        self._groups: GroupService | None = None
        self._txn: TxnService | None = None
        if len(self.topics):
            # A broker restarted on its data recovers its coordinators before the first request: the group
            # coordinator replays __consumer_offsets, the transaction coordinator __transaction_state (and
            # queues the markers of transactions left prepared), and producer state starts expiring. A
            # broker with no topics has nothing to recover, so both wait for their first use (and the
            # broker answers its first Metadata without importing them).
            _ = self.groups, self.txn

    @property
    def groups(self) -> GroupService:
        if self._groups is None:
            from kemu.cluster.group_service import GroupService

            self._groups = GroupService(self)
        return self._groups

    @property
    def txn(self) -> TxnService:
        if self._txn is None:
            from kemu.cluster.txn_service import TxnService

            self._txn = TxnService(self)
        return self._txn

    def _expire_producers(self, now_ms: int) -> int:
        for topic in self.topics:
            for partition in topic.partitions:
                if partition.log is not None:
                    partition.log.expire_producers(now_ms, self.config.producer_id_expiration_ms)
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
            host = socket.gethostname() if self.config.host in _WILDCARDS else self.config.host
        port = self.config.advertised_port or self.bound_port or self.config.port
        return host, port

    def brokers(self) -> list[BrokerNode]:
        host, port = self.advertised_endpoint()
        return [BrokerNode(self.config.node_id, host, port, self.config.rack)]

    def live_broker_ids(self) -> list[int]:
        return [node.node_id for node in self.brokers()]

    def create_topics(self, topics: Sequence[NewTopic], validate_only: bool = False) -> list[CreateOutcome]:
        return topic_admin.create_topics(self, topics, validate_only)

    def delete_topics(self, names: Sequence[str], by_state: Sequence[tuple[str | None, uuid.UUID]],
                      version: int) -> list[DeleteOutcome]:
        return topic_admin.delete_topics(self, names, by_state, version)

    def add_topic(self, topic: Topic) -> None:
        self.topics.add(topic)
        self.storage.open_topic(topic)
        self.storage.save(self.topics)

    def delete_topic(self, topic_id: uuid.UUID) -> Topic:
        topic = self.topics.remove(topic_id)
        self.storage.delete_topic(topic)
        self.storage.save(self.topics)
        return topic

    def partition_log(self, topic: str, partition: int) -> TransactionalPartition | None:
        """The log of a partition this broker leads, or None if there is no such partition."""
        found = self.topics.get(topic)
        if found is None or not 0 <= partition < len(found.partitions):
            return None
        return found.partitions[partition].log

    def close(self) -> None:
        self.storage.close()
        if self._temporary_dir is not None:
            shutil.rmtree(self._temporary_dir, ignore_errors=True)

    def auto_create_topic(self, name: str) -> ErrorCode:
        """What Metadata reports for a missing topic it may create: Kafka starts the creation and answers
        LEADER_NOT_AVAILABLE until the topic is in its metadata; an illegal name is INVALID_TOPIC_EXCEPTION."""
        if invalid_name_reason(name) is not None:
            return ErrorCode.INVALID_TOPIC_EXCEPTION
        self.create_topics([self.auto_creation_request(name)])
        return ErrorCode.LEADER_NOT_AVAILABLE

    def auto_creation_request(self, name: str) -> NewTopic:
        """The topic Kafka creates when `name` is first asked for: internal topics get their own layout."""
        cfg = self.config
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
        return NewTopic(name, cfg.num_partitions, cfg.default_replication_factor)
