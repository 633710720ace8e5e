"""The group coordinator's settings, under Kafka's broker config names, with Kafka's defaults."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kemu.kafka_defaults import int_default, str_default


def no_overrides(_group_id: str) -> Mapping[str, int]:
    return {}


@dataclass(frozen=True, slots=True)
class GroupConfig:
    # Classic protocol.
    min_session_timeout_ms: int = int_default("group.min.session.timeout.ms")
    max_session_timeout_ms: int = int_default("group.max.session.timeout.ms")
    initial_rebalance_delay_ms: int = int_default("group.initial.rebalance.delay.ms")
    max_size: int = int_default("group.max.size")
    # A new member's JoinGroup is parked with no member id to heartbeat with; Kafka times it out after
    # this fixed delay (GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS), not a config.
    new_member_join_timeout_ms: int = 300000

    # KIP-848 consumer groups.
    consumer_session_timeout_ms: int = int_default("group.consumer.session.timeout.ms")
    consumer_heartbeat_interval_ms: int = int_default("group.consumer.heartbeat.interval.ms")
    consumer_max_size: int = int_default("group.consumer.max.size")
    consumer_assignors: tuple[str, ...] = tuple(str_default("group.consumer.assignors").split(","))  # first: default
    consumer_assignment_interval_ms: int = int_default("group.consumer.assignment.interval.ms")

    # KIP-932 share groups.
    share_session_timeout_ms: int = int_default("group.share.session.timeout.ms")
    share_heartbeat_interval_ms: int = int_default("group.share.heartbeat.interval.ms")
    share_max_size: int = int_default("group.share.max.size")
    share_assignment_interval_ms: int = int_default("group.share.assignment.interval.ms")

    # KIP-1071 streams groups.
    streams_session_timeout_ms: int = int_default("group.streams.session.timeout.ms")
    streams_heartbeat_interval_ms: int = int_default("group.streams.heartbeat.interval.ms")
    streams_max_size: int = int_default("group.streams.max.size")
    streams_num_standby_replicas: int = int_default("group.streams.num.standby.replicas")
    streams_initial_rebalance_delay_ms: int = int_default("group.streams.initial.rebalance.delay.ms")
    streams_assignment_interval_ms: int = int_default("group.streams.assignment.interval.ms")

    # Offsets.
    offset_metadata_max_bytes: int = int_default("offset.metadata.max.bytes")
    offsets_retention_minutes: int = int_default("offsets.retention.minutes")
    offsets_retention_check_interval_ms: int = int_default("offsets.retention.check.interval.ms")

    # A group's own settings (resource type GROUP: "consumer.session.timeout.ms" and the rest), as it runs
    # with them; the coordinator's shell reads them from the broker's group configs.
    overrides: Callable[[str], Mapping[str, int]] = no_overrides

    def consumer_session_timeout(self, group_id: str) -> int:
        return self.overrides(group_id).get("consumer.session.timeout.ms", self.consumer_session_timeout_ms)

    def consumer_heartbeat_interval(self, group_id: str) -> int:
        return self.overrides(group_id).get("consumer.heartbeat.interval.ms", self.consumer_heartbeat_interval_ms)

    def share_session_timeout(self, group_id: str) -> int:
        return self.overrides(group_id).get("share.session.timeout.ms", self.share_session_timeout_ms)

    def share_heartbeat_interval(self, group_id: str) -> int:
        return self.overrides(group_id).get("share.heartbeat.interval.ms", self.share_heartbeat_interval_ms)

    def share_assignment_interval(self, group_id: str) -> int:
        return self.overrides(group_id).get("share.assignment.interval.ms", self.share_assignment_interval_ms)

    def streams_session_timeout(self, group_id: str) -> int:
        return self.overrides(group_id).get("streams.session.timeout.ms", self.streams_session_timeout_ms)

    def streams_heartbeat_interval(self, group_id: str) -> int:
        return self.overrides(group_id).get("streams.heartbeat.interval.ms", self.streams_heartbeat_interval_ms)

    def streams_standby_replicas(self, group_id: str) -> int:
        return self.overrides(group_id).get("streams.num.standby.replicas", self.streams_num_standby_replicas)

    def streams_initial_rebalance_delay(self, group_id: str) -> int:
        return self.overrides(group_id).get("streams.initial.rebalance.delay.ms",
                                            self.streams_initial_rebalance_delay_ms)

    def streams_assignment_interval(self, group_id: str) -> int:
        return self.overrides(group_id).get("streams.assignment.interval.ms", self.streams_assignment_interval_ms)

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000
