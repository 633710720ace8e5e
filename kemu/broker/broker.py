"""The broker's core state: who it is, where clients reach it, and the topics it hosts."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kemu.authorizer.config import build_authorizer
from kemu.broker.broker_configs import (
    BROKER_CONFIGS,
    LIVE_SETTINGS,
    ConfigLayers,
    DynamicBrokerConfigs,
    default_listeners,
    static_values,
)
from kemu.broker.cluster import Cluster, Node, eligible_leader, leave, rejoin
from kemu.broker.config import BrokerConfig
from kemu.broker.dir_lock import DirLock
from kemu.broker.errors import ApiError
from kemu.broker.features import Features
from kemu.broker.housekeeping import Housekeeping
from kemu.broker.ids import new_cluster_id
from kemu.broker.owed_answers import OwedAnswers
from kemu.broker.partition import Partition
from kemu.broker.storage import Storage
from kemu.broker.topic_configs import log_defaults
from kemu.broker.topics import Topic, TopicRegistry
from kemu.clock import Clock
from kemu.kafka_defaults import int_setting
from kemu.security.listeners import Endpoint
from kemu.security.scram import ScramCredentialStore, parse_add_scram
from kemu.security.settings import SecuritySettings, security_settings
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    # The ACLs load with the authorizer authorizer.class.name turns on (build_authorizer), not for a broker
    # without one.
    from kemu.authorizer.standard import StandardAuthorizer

    # The cleaner loads with the first log it could clean (BrokerCore.cleaner), the fetch session cache with
    # the first Fetch (BrokerCore.fetch_sessions): a broker that has served neither need not import them.
    from kemu.broker.client_metrics import ClientMetrics
    from kemu.broker.client_quotas import ClientQuotaStore, Throttling
    from kemu.broker.fetch_sessions import FetchSessionCache
    from kemu.broker.group_configs import GroupConfigStore
    from kemu.log.log_cleaner import CleanResult, LogCleaner
    from kemu.log.partition_log import PartitionLog
    from kemu.security.mechanisms import TokenCredential
    from kemu.security.tokens import DelegationTokens

_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


@dataclass(frozen=True, slots=True)
class BrokerNode:
    """A broker as Metadata and FindCoordinator name it: its id, advertised address and rack."""

    node_id: int
    host: str
    port: int
    rack: str | None


class BrokerCore:
    def __init__(self, config: BrokerConfig, clock: Clock, cluster_id: str | None = None) -> None:
        self.config = config
        self.clock = clock
        self.started_ms = clock.now_ms()  # when this broker started (DescribeQuorum's idle metadata log grows since)
        self.cluster_id = cluster_id or config.cluster_id or new_cluster_id()
        self.topics = TopicRegistry()
        # Names of topics whose partition logs a request is creating (kemu.broker.creation), not yet registered.
        self.creating: set[str] = set()
        racks = config.racks or (config.rack,) * config.brokers
        self.cluster = Cluster(config.node_id, config.brokers, racks)
        # Every listener with what it demands of a client (TLS, SASL); the server binds them all, on every
        # node. A node's first listener's port is the node's own (Node.port); the others' are kept here.
        self.security: SecuritySettings = security_settings(config.properties, default_listeners(config))
        self.bound_ports: dict[tuple[int, str], int] = {}  # (node id, listener name) -> bound port
        # The machine's name, which a broker listening on a wildcard address advertises (as Kafka does with
        # an empty listener host); the server looks it up when it binds, so the core does no name lookups.
        self.hostname: str | None = None
        # Without a data directory the broker keeps its logs in a temporary one, removed on close().
        self._temporary_dir = None if config.data_dir else tempfile.mkdtemp(prefix="kemu-")
        self.data_dir = Path(config.data_dir or self._temporary_dir or ".")
        self._dir_lock = DirLock(self.data_dir).acquire()
        # What the live settings (LIVE_SETTINGS) were started with, before a dynamic value replaces them.
        self._started_with = {attribute: getattr(config, attribute) for attribute in LIVE_SETTINGS.values()}
        self.dynamic_configs = DynamicBrokerConfigs(
            self.data_dir, config.node_id, int_setting(config.properties, "min.insync.replicas"))
        self.storage = Storage(self.data_dir, clock)
        self.scram_credentials = ScramCredentialStore(self.data_dir)
        for user, mechanism, credential in parse_add_scram(config.properties.get("kemu.scram.credentials", "")):
            self.scram_credentials.put(user, mechanism, credential)
        # The feature levels ApiVersions reports: kept in the data directory, changed by UpdateFeatures, and
        # transaction.version by `kemu.features` too.
        self.features = Features.from_properties(config.properties, self.data_dir)
        # None unless `authorizer.class.name` names one: then every request is checked against the ACLs.
        self.authorizer: StandardAuthorizer | None = build_authorizer(config.properties, self.data_dir)
        self.apply_log_defaults()
        self.storage.load(self.topics, list(self.cluster.nodes))
        self._fetch_sessions: FetchSessionCache | None = None
        self._group_configs: GroupConfigStore | None = None
        self._delegation_tokens: DelegationTokens | None = None
        self._client_metrics: ClientMetrics | None = None
        self._client_quotas: ClientQuotaStore | None = None
        # None while no client quota is set anywhere, so Produce and Fetch of a broker without quotas pay
        # nothing for them; made when the first quota is (or was, before a restart).
        self.throttling: Throttling | None = None
        self.owed_answers = OwedAnswers()  # what every connection's answers owe, kemu.server's to keep
        if (self.data_dir / "kemu-client-quotas.json").exists():
            self.client_quotas_changed()
        self.housekeeping = Housekeeping(clock)
        if config.properties.get("delegation.token.secret.key"):
            # The controller's sweep of expired tokens, every delegation.token.expiry.check.interval.ms.
            self.housekeeping.add("delegation-token-expiry", self._sweep_tokens,
                                  clock.now_ms() + self.delegation_tokens.settings.expiry_check_interval_ms)
        self.housekeeping.add("log-retention", self._run_retention)
        # Kafka's cleaner thread, as a timer: one log per run, again at once while logs are due, else after
        # log.cleaner.backoff.ms. The internal topics are compacted topics like any other.
        self._cleaner: LogCleaner | None = None
        self.housekeeping.add("log-cleaner", self._run_cleaner)
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
        # Partition by partition, so one whose disk fails goes offline and the rest are still maintained.
        for topic in self.topics:
            for partition in topic.partitions:
                if partition.is_open:
                    partition.maintain()
        return now_ms + self.config.log_retention_check_interval_ms

    def _cleaner_sources(self, topic: str | None = None) -> list[PartitionLog]:
        return [p.log for t in self.topics if topic is None or t.name == topic
                for p in t.partitions if p.is_open]

    @property
    def group_configs(self) -> GroupConfigStore:
        """Every group's config overrides (resource type GROUP), read from the data directory when first asked."""
        if self._group_configs is None:
            from kemu.broker.group_configs import GroupConfigStore

            self._group_configs = GroupConfigStore(self.data_dir)
        return self._group_configs

    @property
    def delegation_tokens(self) -> DelegationTokens:
        """The cluster's delegation tokens, read from the data directory when first asked (a broker without
        delegation.token.secret.key need not load them before a token request)."""
        if self._delegation_tokens is None:
            from kemu.security.tokens import DelegationTokens, TokenSettings

            self._delegation_tokens = DelegationTokens(TokenSettings.from_properties(self.config.properties),
                                                       self.data_dir)
        return self._delegation_tokens

    def token_credential(self, token_id: str, mechanism: str) -> TokenCredential | None:
        """ScramServerCallbackHandler's view of a delegation token (SCRAM with tokenauth=true): None when the
        token is unknown (or tokens are disabled)."""
        from kemu.security.mechanisms import TokenCredential

        tokens = self.delegation_tokens
        token = tokens.token(token_id) if tokens.enabled else None
        if token is None:
            return None
        owner_name = token.owner.partition(":")[2]
        return TokenCredential(tokens.scram_credential(token_id, mechanism), owner_name, token.expiry_ms)

    def _sweep_tokens(self, now_ms: int) -> int:
        self.delegation_tokens.sweep(now_ms)
        return now_ms + self.delegation_tokens.settings.expiry_check_interval_ms

    @property
    def client_metrics(self) -> ClientMetrics:
        """The client metrics subscriptions (resource type CLIENT_METRICS) and the telemetry clients (KIP-714),
        read from the data directory when first asked."""
        if self._client_metrics is None:
            from kemu.broker.client_metrics import ClientMetrics

            self._client_metrics = ClientMetrics(self.data_dir, self.clock.now_ms, self.config.telemetry_max_bytes,
                                                 self.config.kemu_client_telemetry_enable)
        return self._client_metrics

    def connection_closed(self, address: str, port: int) -> None:
        """A client's connection closed: the telemetry client instance it made goes (ClientMetricsManager's
        disconnect listener)."""
        if self._client_metrics is not None:
            self._client_metrics.disconnected(address, port)

    @property
    def client_quotas(self) -> ClientQuotaStore:
        """The quotas of users, client ids and ips, every node's (read from the data directory when first asked)."""
        if self._client_quotas is None:
            from kemu.broker.client_quotas import ClientQuotaStore

            self._client_quotas = ClientQuotaStore(self.data_dir)
        return self._client_quotas

    def client_quotas_changed(self) -> None:
        """Enforce the quotas there are now: with none left, stop counting."""
        store = self.client_quotas
        if not store:
            self.throttling = None
        elif self.throttling is None:
            from kemu.broker.client_quotas import Throttling

            properties = self.config.properties
            self.throttling = Throttling(store, int_setting(properties, "quota.window.num"),
                                         int_setting(properties, "quota.window.size.seconds"))

    @property
    def fetch_sessions(self) -> FetchSessionCache:
        """KIP-227 incremental fetch sessions: they live as long as the broker, across connections."""
        if self._fetch_sessions is None:
            from kemu.broker.fetch_sessions import FetchSessionCache

            self._fetch_sessions = FetchSessionCache()
        return self._fetch_sessions

    @property
    def cleaner(self) -> LogCleaner:
        """Kafka's cleaner, made (reading its offset checkpoint) when first there is a log to clean."""
        if self._cleaner is None:
            from kemu.log.log_cleaner import LogCleaner

            self._cleaner = LogCleaner(self.data_dir, self.clock)
        return self._cleaner

    def _run_cleaner(self, now_ms: int) -> int:
        sources = self._cleaner_sources()
        # Without an open log there is nothing to clean, and the checkpoints of logs that are gone are
        # dropped on the first round that has logs, which leaves the same checkpoints as dropping them now.
        if sources or self._cleaner is not None:
            self.cleaner.forget((s.topic, s.partition) for s in sources)
            result = self.cleaner.clean_filthiest(sources)
            if result is not None and result.end_offset > result.first_dirty_offset:
                return now_ms
        return now_ms + self.config.log_cleaner_backoff_ms

    def clean_logs(self, topic: str | None = None) -> list[CleanResult]:
        """Clean now every compacted log (of `topic`) with anything cleanable, whatever its dirty ratio."""
        return self.cleaner.clean_all(self._cleaner_sources(topic))

    @property
    def node_id(self) -> int:
        return self.config.node_id

    @property
    def controller_id(self) -> int:
        # A KRaft broker tells clients some live broker is "the controller" (they cannot reach the real
        # quorum): the first live one, so admin requests sent "to the controller" find a listener.
        live = self.cluster.live_ids()
        return live[0] if live else self.config.node_id

    @property
    def bound_port(self) -> int | None:
        """The first node's bound port (where a one-broker kemu listens); None before the server binds."""
        return self.cluster.node(self.node_id).port

    @bound_port.setter
    def bound_port(self, port: int | None) -> None:
        self.cluster.node(self.node_id).port = port

    def listener(self, name: str | None = None) -> Endpoint:
        """The listener of that name; the first (where a client without a name is taken) otherwise."""
        listeners = self.security.listeners.listeners
        return next((e for e in listeners if e.name == name), listeners[0])

    def listen_port(self, node_id: int, listener: str | None = None) -> int:
        """Where node `node_id` should listen on `listener` (default the first): its bound port once it has
        one (a restart comes back there), else the configured port plus its place among the nodes, or an
        ephemeral one."""
        endpoint = self.listener(listener)
        node = self.cluster.node(node_id)
        first = endpoint == self.listener()
        bound = node.port if first else self.bound_ports.get((node_id, endpoint.name))
        if bound:
            return bound
        return endpoint.port + (node_id - self.node_id) if endpoint.port else 0

    def advertised_endpoint(self, node_id: int | None = None, listener: str | None = None) -> tuple[str, int]:
        """Where clients of `listener` (default the first) are told to reach node `node_id`: the listener's
        entry in advertised.listeners, else its own address (the machine's name for a wildcard) and bound
        port. kemu's --advertised-host/--advertised-port stand for the first listener's entry."""
        node = self.cluster.node(self.node_id if node_id is None else node_id)
        endpoint = self.listener(listener)
        offset = node.node_id - self.node_id
        host: str | None = None
        port = 0
        advertised = (self.security.listeners.advertised_for(endpoint.name)
                      if "advertised.listeners" in self.config.properties else None)
        if advertised is not None:
            host, port = advertised.host, advertised.port + offset if advertised.port else 0
        elif endpoint == self.listener():
            host = self.config.advertised_host
            port = self.config.advertised_port + offset if self.config.advertised_port else 0
        if not host:
            host = (self.hostname or endpoint.host) if endpoint.host in _WILDCARDS else endpoint.host
        return host, port or self.listen_port(node.node_id, endpoint.name)

    def brokers(self, listener: str | None = None) -> list[BrokerNode]:
        """The live brokers, as Metadata and DescribeCluster list them to clients of `listener` (Kafka
        answers each listener's clients with that listener's endpoints)."""
        return [self._broker_node(n, listener) for n in self.cluster if n.usable]

    def fenced_brokers(self, listener: str | None = None) -> list[BrokerNode]:
        """The stopped brokers: still registered, as a Kafka broker that shut down is, but fenced (DescribeCluster
        v2 lists them when asked to); an unregistered one is not listed at all."""
        return [self._broker_node(n, listener) for n in self.cluster if n.registered and not n.alive]

    def broker_node(self, node_id: int, listener: str | None = None) -> BrokerNode | None:
        found = self.cluster.nodes.get(node_id)
        return None if found is None or not found.usable else self._broker_node(found, listener)

    def _broker_node(self, node: Node, listener: str | None = None) -> BrokerNode:
        host, port = self.advertised_endpoint(node.node_id, listener)
        return BrokerNode(node.node_id, host, port, node.rack)

    def live_broker_ids(self) -> list[int]:
        return self.cluster.live_ids()

    def place(self, index: int, factor: int) -> list[int]:
        return self.cluster.place(index, factor)

    def place_all(self, indexes: range, factor: int) -> list[list[int]]:
        return self.cluster.place_all(indexes, factor)

    # ---- nodes going away and coming back, leaders moving -------------------------------------------------
    def stop_node(self, node_id: int) -> None:
        """Node `node_id` is gone: its leaderships move to live ISR replicas (or to nobody), the ISRs shrink.
        The server closes its listener and connections."""
        node = self.cluster.node(node_id)
        if not node.alive:
            return
        if [n.node_id for n in self.cluster if n.alive] == [node_id]:  # the server would have no listener left
            raise ApiError(ErrorCode.INVALID_REQUEST, "The last live broker cannot be stopped.")
        was_usable = node.usable
        node.alive = False
        if was_usable:  # an unregistered node left its partitions when it was unregistered
            self._each_partition(lambda p: leave(p, node_id, self.cluster))

    def start_node(self, node_id: int) -> None:
        """A stopped node starts again and registers, whether or not it was unregistered meanwhile."""
        node = self.cluster.node(node_id)
        if node.alive:
            return
        node.alive = node.registered = True
        self._each_partition(lambda p: rejoin(p, node_id, self.cluster))

    def unregister_node(self, node_id: int) -> None:
        """UnregisterBroker (ReplicationControlManager.unregisterBroker): the node's registration is removed. A
        running node leaves its partitions as a fenced one does (out of every ISR it is not the last member of,
        its leaderships to the next live ISR replica or to nobody) and is no longer listed, placed or elected,
        though it keeps serving its listener, as a Kafka broker whose heartbeats the controller refuses from then
        on; it registers again when it next starts."""
        node = self.cluster.nodes.get(node_id)
        if node is None or not node.registered:
            raise ApiError(ErrorCode.BROKER_ID_NOT_REGISTERED, f"Broker ID {node_id} is not currently registered")
        was_usable = node.usable
        node.registered = False
        if was_usable:
            self._each_partition(lambda p: leave(p, node_id, self.cluster))

    def elect_leader(self, partition: Partition, node_id: int) -> None:
        """Move `partition`'s leadership to `node_id` (a live ISR replica), with the next leader epoch."""
        problem = eligible_leader(partition, node_id, self.cluster)
        if problem is not None:
            raise ApiError(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, problem)
        if partition.leader_id != node_id:
            partition.elect(node_id)
            topic = self.topics.get(partition.topic)
            self.storage.save(self.topics, changed=None if topic is None else [topic])

    def _each_partition(self, change: Callable[[Partition], bool]) -> None:
        changed: list[Topic] = []
        for topic in self.topics:
            topic_changed = False
            for partition in topic.partitions:
                topic_changed = change(partition) or topic_changed
            if topic_changed:
                changed.append(topic)
        if changed:
            self.storage.save(self.topics, changed=changed)


    def delete_topic(self, topic_id: uuid.UUID) -> Topic:
        """One topic deleted at once — registry, logs, saved — for callers with no event loop to yield to."""
        [topic] = self.remove_topics([topic_id])
        self.storage.delete_topic(topic)
        self.storage.save(self.topics, changed=())
        return topic

    def remove_topics(self, topic_ids: Iterable[uuid.UUID]) -> list[Topic]:
        """Take topics out of the registry: from here no request finds them. Not saved yet: the caller deletes
        their logs (`storage.delete_topic`), then saves, so a crash in between brings the topics back as they
        were (a client that got no answer retries) rather than leaving logs that no saved topic names."""
        return [self.topics.remove(topic_id) for topic_id in topic_ids]

    def partition(self, topic: str, index: int) -> Partition | None:
        """An open partition this broker leads, or None if there is no such partition."""
        found = self.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return None
        partition = found.partitions[index]
        return partition if partition.is_open else None

    def config_layers(self, node_id: int | None = None) -> ConfigLayers:
        """A node's config (default the first's) as DescribeConfigs layers it: per-broker dynamic, cluster
        default, static. Each node's static and per-broker layers are its own (its id, listener port, rack, and
        the values a BROKER resource of its id was given); the process's logs and live settings follow the first
        node's, the partitions of every node being one process's."""
        # The static layer is what the broker was started with, not the live settings a dynamic value changed.
        node = self.cluster.node(self.node_id if node_id is None else node_id)
        # One rack per node (--rack a,b,c), else every node's is broker.rack.
        rack = node.rack if self.config.racks else self.config.rack
        config = self.config if node.node_id == self.config.node_id and rack == self.config.rack \
            else replace(self.config, node_id=node.node_id, rack=rack)
        static = static_values(config, bound_port=self.listen_port(node.node_id) or None, data_dir=self.data_dir,
                               advertised=self.advertised_endpoint(node.node_id), started_with=self._started_with)
        return self.dynamic_configs.layers(static, node.node_id)

    def apply_log_defaults(self) -> None:
        """Give every partition log the broker's current log.* defaults (after a dynamic broker config change,
        and at start-up before the logs open), as Kafka's DynamicLogConfig.reconfigure does, and the live
        settings their value in force."""
        layers = self.config_layers()
        for name, attribute in LIVE_SETTINGS.items():
            key = BROKER_CONFIGS[name]
            text = layers.value(name)
            setattr(self.config, attribute, key.parse(text if text is not None else key.default or ""))
        self.storage.log_defaults = log_defaults(layers)
        for topic in self.topics:
            self.storage.reconfigure(topic)

    def abandon(self) -> None:
        """What the OS does to the files of a killed broker: every descriptor closed and nothing written (no
        producer snapshots, no checkpoints), unlike close(). The files stay readable as the kill left them."""
        for log in self.storage.log_dir:
            for segment in log.segments:
                segment.close()
        self._dir_lock.release()

    def close(self) -> None:
        self.storage.close()
        self._dir_lock.release()
        if self._temporary_dir is not None:
            shutil.rmtree(self._temporary_dir, ignore_errors=True)
