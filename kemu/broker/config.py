"""Broker configuration: the Kafka broker settings kemu honours, under Kafka's names and defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from kemu.kafka_defaults import bool_default, int_default, str_default

PROPERTY_FIELDS: dict[str, str] = {"broker.rack": "rack"}
"""The settings whose BrokerConfig field is not their name in snake_case."""

KEMU_DEFAULTS: dict[str, str] = {
    "node.id": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}
"""Where kemu's default is not Kafka's, on purpose: Kafka has no default node.id (a server must be given one);
Kafka's replication factors of 3 (and min ISR of 2) would
leave a one-broker cluster unable to create its internal topics, so kemu starts from what every single-node
Kafka setup configures. Every other BrokerConfig default is read from Kafka's table (kemu.kafka_defaults)."""


@dataclass(slots=True)
class BrokerConfig:
    """What one kemu process is started with: its Kafka broker settings, each field under its Kafka name
    (beside it) with Kafka's default, and kemu's own for where and as how many brokers it runs."""

    node_id: int = int(KEMU_DEFAULTS["node.id"])
    host: str = "127.0.0.1"  # the listener's bind address
    port: int = 9092  # 0 binds an ephemeral port
    advertised_host: str | None = None  # advertised.listeners host; None = the bind host
    advertised_port: int | None = None  # None = the bound port
    rack: str | None = None  # broker.rack
    # The cluster one process emulates (kemu's own, no Kafka name): this many brokers, ids node_id upwards,
    # each with its own listener (the first on `port`, the next ones on the ports after it, or ephemeral
    # ones with port 0) and rack (racks[i], else `rack`).
    brokers: int = 1
    racks: tuple[str | None, ...] = ()
    data_dir: str | None = None  # log.dirs; None = a temporary directory for the process's life
    cluster_id: str | None = None  # None = the data dir's meta.properties, or a fresh id
    auto_create_topics_enable: bool = bool_default("auto.create.topics.enable")
    num_partitions: int = int_default("num.partitions")
    default_replication_factor: int = int_default("default.replication.factor")
    delete_topic_enable: bool = bool_default("delete.topic.enable")
    socket_request_max_bytes: int = int_default("socket.request.max.bytes")
    max_request_partition_size_limit: int = int_default("max.request.partition.size.limit")  # (DescribeTopicPartitions)
    # The server's resource limits (kemu.server.limits), with Kafka's names and defaults.
    queued_max_requests: int = int_default("queued.max.requests")
    max_connections: int = int_default("max.connections")
    max_connections_per_ip: int = int_default("max.connections.per.ip")
    max_connections_per_ip_overrides: str = str_default("max.connections.per.ip.overrides")
    connections_max_idle_ms: int = int_default("connections.max.idle.ms")
    log_retention_check_interval_ms: int = int_default("log.retention.check.interval.ms")
    log_cleaner_backoff_ms: int = int_default("log.cleaner.backoff.ms")  # the cleaner's rest when no log is due
    offsets_topic_num_partitions: int = int_default("offsets.topic.num.partitions")
    offsets_topic_replication_factor: int = int(KEMU_DEFAULTS["offsets.topic.replication.factor"])
    offsets_topic_segment_bytes: int = int_default("offsets.topic.segment.bytes")
    transaction_state_log_num_partitions: int = int_default("transaction.state.log.num.partitions")
    transaction_state_log_replication_factor: int = int(KEMU_DEFAULTS["transaction.state.log.replication.factor"])
    transaction_state_log_min_isr: int = int(KEMU_DEFAULTS["transaction.state.log.min.isr"])
    transaction_state_log_segment_bytes: int = int_default("transaction.state.log.segment.bytes")
    # The transactions layer's settings, with Kafka's defaults.
    transaction_max_timeout_ms: int = int_default("transaction.max.timeout.ms")
    transactional_id_expiration_ms: int = int_default("transactional.id.expiration.ms")
    producer_id_expiration_ms: int = int_default("producer.id.expiration.ms")
    producer_id_expiration_check_interval_ms: int = int_default("producer.id.expiration.check.interval.ms")
    transaction_partition_verification_enable: bool = bool_default("transaction.partition.verification.enable")
    # The group coordinator's settings (kemu.groups.GroupConfig has their meaning), with Kafka's defaults.
    group_initial_rebalance_delay_ms: int = int_default("group.initial.rebalance.delay.ms")
    group_min_session_timeout_ms: int = int_default("group.min.session.timeout.ms")
    group_max_session_timeout_ms: int = int_default("group.max.session.timeout.ms")
    group_max_size: int = int_default("group.max.size")
    group_consumer_session_timeout_ms: int = int_default("group.consumer.session.timeout.ms")
    group_consumer_heartbeat_interval_ms: int = int_default("group.consumer.heartbeat.interval.ms")
    group_consumer_assignment_interval_ms: int = int_default("group.consumer.assignment.interval.ms")
    offsets_retention_minutes: int = int_default("offsets.retention.minutes")
    offsets_retention_check_interval_ms: int = int_default("offsets.retention.check.interval.ms")
    offset_metadata_max_bytes: int = int_default("offset.metadata.max.bytes")
    # Client telemetry (KIP-714): the largest push a client may send, and kemu's own receiver, which Kafka
    # has when a `metric.reporters` plugin implements ClientTelemetry: only then are keys 71 and 72 advertised.
    telemetry_max_bytes: int = int_default("telemetry.max.bytes")
    kemu_client_telemetry_enable: bool = bool_default("kemu.client.telemetry.enable")
    # Other server.properties values kemu honours without a typed field of its own (the log.* defaults
    # topics inherit, e.g. log.retention.ms), under Kafka's names, as given.
    properties: dict[str, str] = field(default_factory=dict)
    # Settings with a field above that were given by name (`--override num.partitions=1`): Kafka describes a
    # setting in server.properties as STATIC_BROKER_CONFIG even when it holds the default.
    settings_given: set[str] = field(default_factory=set)

