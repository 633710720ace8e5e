"""GroupCoordinator: the one object the broker talks to for everything about groups and offsets."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kemu.clock import Clock
from kemu.groups.admin import GroupAdmin
from kemu.groups.classic_group import ClassicGroup
from kemu.groups.classic_manager import ClassicGroupManager
from kemu.groups.config import GroupConfig
from kemu.groups.consumer_manager import ConsumerGroupManager
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.offset_ops import CommitOffset, OffsetOps
from kemu.groups.offsets import OffsetAndMetadata
from kemu.groups.pending import Pending
from kemu.groups.records import CoordinatorRecord, Journal, discard
from kemu.groups.replay import Group
from kemu.groups.share_group import ShareGroup
from kemu.groups.share_manager import ShareGroupManager, no_listener
from kemu.groups.share_offsets import AlteredOffsets, DeletedOffsets, alter_offsets, delete_offsets
from kemu.groups.streams_group import StreamsGroup
from kemu.groups.streams_manager import StreamsGroupManager, StreamsHeartbeat
from kemu.groups.topics import TopicSource, no_topics

if TYPE_CHECKING:
    from kemu.wire.messages.k11_join_group import JoinGroupRequest
    from kemu.wire.messages.k12_heartbeat import HeartbeatRequest, HeartbeatResponse
    from kemu.wire.messages.k13_leave_group import LeaveGroupRequest, LeaveGroupResponse
    from kemu.wire.messages.k14_sync_group import SyncGroupRequest
    from kemu.wire.messages.k16_list_groups import ListGroupsRequest
    from kemu.wire.messages.k91_alter_share_group_offsets import AlterShareGroupOffsetsRequestTopics

Body = dict[str, Any]


class GroupCoordinator:
    def __init__(
        self,
        clock: Clock,
        *,
        config: GroupConfig | None = None,
        journal: Journal = discard,
        topics: TopicSource = no_topics,
        new_uuid: Callable[[], uuid.UUID] = uuid.uuid4,
        on_share_member_left: Callable[[str, str], None] = no_listener,
    ) -> None:
        """`on_share_member_left(group_id, member_id)` is called each time a member leaves a share group: a
        leave heartbeat (member epoch -1), or its session expiring (share.session.timeout.ms without a
        heartbeat). It is called after the member's records are written, so `share_member` already answers
        False; whoever holds that member's share-partition state (acquired records) releases it then. It
        must not call back into the coordinator's request methods. The default does nothing."""
        self._state = CoordinatorState(clock, config or GroupConfig(), journal, topics, new_uuid)
        self._classic = ClassicGroupManager(self._state)
        self._consumer = ConsumerGroupManager(self._state)
        self._share = ShareGroupManager(self._state, on_share_member_left)
        self._streams = StreamsGroupManager(self._state)
        self._offsets = OffsetOps(self._state)
        self._admin = GroupAdmin(self._state, self._offsets)
        self._offsets.schedule_cleanup()

    @property
    def config(self) -> GroupConfig:
        return self._state.config

    # ---- time -------------------------------------------------------------------------------------
    def tick(self) -> int:
        """Fire every timer that is due on the clock; returns how many fired."""
        return self._state.timers.run_due(self._state.clock.monotonic_ms())

    def next_deadline_ms(self) -> int | None:
        """When (on `clock.monotonic_ms()`) the earliest timer is due, or None if none is scheduled."""
        return self._state.timers.next_deadline()

    def ms_until_next_deadline(self) -> int | None:
        deadline = self.next_deadline_ms()
        return None if deadline is None else max(0, deadline - self._state.clock.monotonic_ms())

    # ---- classic protocol -------------------------------------------------------------------------
    def join_group(self, request: JoinGroupRequest, ctx: GroupRequestContext) -> Pending[Body]:
        self.tick()
        return self._classic.join_group(request, ctx)

    def sync_group(self, request: SyncGroupRequest, ctx: GroupRequestContext) -> Pending[Body]:
        self.tick()
        return self._classic.sync_group(request, ctx)

    def heartbeat(self, request: HeartbeatRequest, ctx: GroupRequestContext) -> HeartbeatResponse:
        self.tick()
        return self._classic.heartbeat(request, ctx)

    def leave_group(self, request: LeaveGroupRequest, ctx: GroupRequestContext) -> LeaveGroupResponse:
        self.tick()
        return self._classic.leave_group(request, ctx)

    # ---- KIP-848 ----------------------------------------------------------------------------------
    def consumer_group_heartbeat(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._consumer.heartbeat(request, ctx)

    def consumer_group_describe(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return {"groups": self._consumer.describe(request["group_ids"])}

    # ---- KIP-932 ----------------------------------------------------------------------------------
    def share_group_heartbeat(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._share.heartbeat(request, ctx)

    def share_group_describe(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return {"groups": self._share.describe(request["group_ids"])}

    # ---- KIP-1071 ---------------------------------------------------------------------------------
    def streams_group_heartbeat(self, request: Mapping[str, Any], ctx: GroupRequestContext) -> StreamsHeartbeat:
        """StreamsGroupHeartbeat (88): the response, and the internal topics the broker is to create."""
        self.tick()
        return self._streams.heartbeat(request, ctx)

    def streams_group_describe(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return {"groups": self._streams.describe(request["group_ids"])}

    def alter_share_group_offsets(self, group_id: str,
                                  topics: Sequence[AlterShareGroupOffsetsRequestTopics]) -> AlteredOffsets:
        """AlterShareGroupOffsets' group side (kemu.groups.share_offsets.alter_offsets)."""
        self.tick()
        return alter_offsets(self._state, group_id, topics)

    def delete_share_group_offsets(self, group_id: str, topic_names: list[str]) -> DeletedOffsets:
        """DeleteShareGroupOffsets' group side (kemu.groups.share_offsets.delete_offsets)."""
        self.tick()
        return delete_offsets(self._state, group_id, topic_names)

    def share_member(self, group_id: str, member_id: str) -> bool:
        """Whether `member_id` is a current member of the share group `group_id` (False for an unknown
        group, or a group of another kind). Due timers run first, so a member whose session has expired is
        no member (and `on_share_member_left` has been called for it)."""
        self.tick()
        return self._share.is_member(group_id, member_id)

    # ---- offsets ----------------------------------------------------------------------------------
    def offset_commit(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._offsets.commit(request, ctx)

    def offset_fetch(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._offsets.fetch(request, ctx)

    def offset_delete(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._offsets.delete(request, ctx)

    def txn_offset_commit(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._offsets.txn_commit(request, ctx)

    def stage_txn_offsets(self, producer_id: int, producer_epoch: int, group_id: str,
                          offsets: Iterable[CommitOffset]) -> None:
        self._offsets.stage_txn_offsets(producer_id, producer_epoch, group_id, offsets)

    def complete_txn(self, producer_id: int, committed: bool, groups: Callable[[str], bool] | None = None) -> None:
        """A COMMIT/ABORT marker of `producer_id` reached __consumer_offsets: make its staged offsets visible
        or drop them. `groups` narrows it to the groups placed on the partition the marker was written to."""
        self._state.offsets.complete(producer_id, committed, groups)

    def has_pending_txn_offsets(self, group_id: str, topic: str, partition: int) -> bool:
        return self._state.offsets.has_pending(group_id, topic, partition)

    def committed_offset(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        return self._state.offsets.get(group_id, topic, partition)

    def expire_offsets(self) -> int:
        """Run the offsets-retention clean-up now (it also runs every offsets.retention.check.interval.ms)."""
        self.tick()
        return self._offsets.cleanup_expired()

    # ---- administration ---------------------------------------------------------------------------
    def list_groups(self, request: ListGroupsRequest, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._admin.list_groups(request, ctx)

    def describe_groups(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._admin.describe_groups(request, ctx)

    def delete_groups(self, request: Body, ctx: GroupRequestContext) -> Body:
        self.tick()
        return self._admin.delete_groups(request, ctx)

    # ---- persistence ------------------------------------------------------------------------------
    def replay(self, record: CoordinatorRecord) -> None:
        """Apply one journaled record (start-up). Transaction markers go to `complete_txn`."""
        self._state.replay(record)

    def loaded(self) -> None:
        """After the last record is replayed: start the session timers of the members found."""
        for group in self._state.groups.values():
            if isinstance(group, ClassicGroup):
                self._classic.on_loaded(group)
            elif isinstance(group, ShareGroup):
                self._share.on_loaded(group)
            elif isinstance(group, StreamsGroup):
                self._streams.on_loaded(group)
            else:
                self._consumer.on_loaded(group)

    # ---- inspection -------------------------------------------------------------------------------
    @property
    def groups(self) -> Mapping[str, Group]:
        return self._state.groups

    def group(self, group_id: str) -> Group | None:
        return self._state.groups.get(group_id)

    def committed_offsets(self, group_id: str) -> dict[str, dict[int, OffsetAndMetadata]]:
        return {topic: dict(parts) for topic, parts in self._state.offsets.group_offsets(group_id).items()}
