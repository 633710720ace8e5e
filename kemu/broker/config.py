"""Broker configuration: the Kafka broker settings kemu honours, under Kafka's names and defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

PROPERTY_FIELDS: dict[str, str] = {"broker.rack": "rack"}
"""The settings whose BrokerConfig field is not their name in snake_case."""


@dataclass(slots=True)
class BrokerConfig:
    """What one kemu process is started with: its Kafka broker settings, each field under its Kafka name
    (beside it) with Kafka's default, and kemu's own for where and as how many brokers it runs."""

    node_id: int = 1  # node.id
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
    auto_create_topics_enable: bool = True  # auto.create.topics.enable
    num_partitions: int = 1  # num.partitions
    default_replication_factor: int = 1  # default.replication.factor
    delete_topic_enable: bool = True  # delete.topic.enable
    socket_request_max_bytes: int = 104857600  # socket.request.max.bytes
    max_request_partition_size_limit: int = 2000  # max.request.partition.size.limit (DescribeTopicPartitions)
    # The server's resource limits (kemu.server.limits), with Kafka's names and defaults.
    queued_max_requests: int = 500  # queued.max.requests
    max_connections: int = 2147483647  # max.connections
    max_connections_per_ip: int = 2147483647  # max.connections.per.ip
    max_connections_per_ip_overrides: str = ""  # max.connections.per.ip.overrides
    connections_max_idle_ms: int = 600000  # connections.max.idle.ms
    log_retention_check_interval_ms: int = 300000  # log.retention.check.interval.ms
    log_cleaner_backoff_ms: int = 15000  # log.cleaner.backoff.ms: the cleaner's rest when no log is due
    # Kafka defaults these replication factors to 3; a one-broker cluster could then never create its
    # internal topics, so kemu starts from what every single-node Kafka setup configures: 1.
    offsets_topic_num_partitions: int = 50  # offsets.topic.num.partitions
    offsets_topic_replication_factor: int = 1  # offsets.topic.replication.factor
    offsets_topic_segment_bytes: int = 104857600  # offsets.topic.segment.bytes
    transaction_state_log_num_partitions: int = 50  # transaction.state.log.num.partitions
    transaction_state_log_replication_factor: int = 1  # transaction.state.log.replication.factor
    transaction_state_log_min_isr: int = 1  # transaction.state.log.min.isr
    transaction_state_log_segment_bytes: int = 104857600  # transaction.state.log.segment.bytes
    # The transactions layer's settings, with Kafka's defaults.
    transaction_max_timeout_ms: int = 900000  # transaction.max.timeout.ms
    transactional_id_expiration_ms: int = 604800000  # transactional.id.expiration.ms
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms
    producer_id_expiration_check_interval_ms: int = 600000  # producer.id.expiration.check.interval.ms
    transaction_partition_verification_enable: bool = True  # transaction.partition.verification.enable
    # The group coordinator's settings (kemu.groups.GroupConfig has their meaning), with Kafka's defaults.
    group_initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    group_min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    group_max_session_timeout_ms: int = 1800000  # group.max.session.timeout.ms
    group_max_size: int = 2147483647  # group.max.size
    group_consumer_session_timeout_ms: int = 45000  # group.consumer.session.timeout.ms
    group_consumer_heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    group_consumer_assignment_interval_ms: int = 1000  # group.consumer.assignment.interval.ms
    offsets_retention_minutes: int = 10080  # offsets.retention.minutes
    offsets_retention_check_interval_ms: int = 600000  # offsets.retention.check.interval.ms
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    # Client telemetry (KIP-714): the largest push a client may send, and kemu's own receiver, which Kafka
    # has when a `metric.reporters` plugin implements ClientTelemetry: only then are keys 71 and 72 advertised.
    telemetry_max_bytes: int = 1048576  # telemetry.max.bytes
    kemu_client_telemetry_enable: bool = False  # kemu.client.telemetry.enable
    # Other server.properties values kemu honours without a typed field of its own (the log.* defaults
    # topics inherit, e.g. log.retention.ms), under Kafka's names, as given.
    properties: dict[str, str] = field(default_factory=dict)
    # Settings with a field above that were given by name (`--override num.partitions=1`): Kafka describes a
    # setting in server.properties as STATIC_BROKER_CONFIG even when it holds the default.
    settings_given: set[str] = field(default_factory=set)

