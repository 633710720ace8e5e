"""The group coordinator, sans I/O: classic groups, KIP-848 consumer groups, committed offsets.

Plain synchronous Python, one thread, no sockets, no Trio: time comes only from the injected clock, and
anything that must wait is handed back as a `Pending` for the I/O shell to wait on.

Building one
------------
    coordinator = GroupCoordinator(
        clock,                       # kemu.clock.Clock: now_ms() stamps commits, monotonic_ms() runs timers
        config=GroupConfig(...),     # Kafka's group.* / offsets.* settings, Kafka's defaults
        journal=write_record,        # called with each CoordinatorRecord to append to __consumer_offsets
        topics=lambda: [TopicInfo(name, topic_id, num_partitions, internal), ...],
    )

Handling requests
-----------------
Every request method takes the decoded request body (the dict kemu.wire's codec produces, Kafka's field
names in snake_case) and a `RequestContext(api_version, client_id, client_host)`, and returns the response
body for that version, without `throttle_time_ms`. The handler only adds the throttle time and encodes.
`client_host` should be Java's rendering of the peer address, e.g. "/127.0.0.1", which DescribeGroups shows.

    join_group(request, ctx) -> Pending[dict]         JoinGroup (11); completes when the rebalance does
    sync_group(request, ctx) -> Pending[dict]         SyncGroup (14); followers complete on the leader's sync
    heartbeat(request, ctx) -> dict                   Heartbeat (12)
    leave_group(request, ctx) -> dict                 LeaveGroup (13); v0-2 and v3+ shapes
    consumer_group_heartbeat(request, ctx) -> dict    ConsumerGroupHeartbeat (68)
    consumer_group_describe(request, ctx) -> dict     ConsumerGroupDescribe (69)
    share_group_heartbeat(request, ctx) -> dict       ShareGroupHeartbeat (76)
    share_group_describe(request, ctx) -> dict        ShareGroupDescribe (77)
    streams_group_heartbeat(request, ctx)             StreamsGroupHeartbeat (88): a StreamsHeartbeat, the
                                                      response and the internal topics to create
    streams_group_describe(request, ctx) -> dict      StreamsGroupDescribe (89)
    offset_commit(request, ctx) -> dict               OffsetCommit (8)
    offset_fetch(request, ctx) -> dict                OffsetFetch (9); the single-group (v0-7) or groups (v8+) shape
    offset_delete(request, ctx) -> dict               OffsetDelete (47)
    txn_offset_commit(request, ctx) -> dict           TxnOffsetCommit (28); offsets stay pending until complete_txn
    list_groups(request, ctx) -> dict                 ListGroups (16)
    describe_groups(request, ctx) -> dict             DescribeGroups (15)
    delete_groups(request, ctx) -> dict               DeleteGroups (42)

Not the core's business, so the handler's: NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE (which broker owns
the group's __consumer_offsets partition), authorization, UNKNOWN_TOPIC_OR_PARTITION for offsets of topics
that do not exist (Kafka's KafkaApis filters those before the coordinator sees them), and checking that a
TxnOffsetCommit's producer is in a transaction that added the group (AddOffsetsToTxn).

Waiting: `Pending`
------------------
`join_group`/`sync_group` return a `Pending`. If `pending.done`, answer with `pending.result()` at once;
otherwise `pending.add_done_callback(lambda body: event.set())` and await the event. The core completes it
when the group moves on (rebalance complete, leader's assignment, member removed, timer). A client that
disconnects meanwhile needs no clean-up: its answer is simply never sent.

Time: `tick()` and deadlines
----------------------------
Session timeouts, rebalance timeouts, the initial rebalance delay, pending-sync expiry, KIP-848 session and
revocation timeouts, and the periodic offsets-retention clean-up are timers on `clock.monotonic_ms()`.
The shell calls `tick()` when `next_deadline_ms()` is reached (`ms_until_next_deadline()` is the sleep);
every request method also ticks first, so a late shell never changes an outcome. With a VirtualClock, a
clock listener that calls `tick()` (or waking the shell's sleeper) is enough.

Transactions (KIP-98/KIP-447)
-----------------------------
    stage_txn_offsets(producer_id, producer_epoch, group_id, [CommitOffset(...)])
    complete_txn(producer_id, committed, groups=None) the COMMIT/ABORT marker reached __consumer_offsets;
                                                      `groups(group_id) -> bool` limits it to one partition's
    has_pending_txn_offsets(group_id, topic, partition) -> bool

Staged offsets are journaled as OffsetCommit records carrying the producer id and epoch (written to the log
as transactional records); `complete_txn` is not journaled: the marker itself is in the log, and replaying
it at start-up is the same `complete_txn` call. OffsetFetch with `require_stable` answers
UNSTABLE_OFFSET_COMMIT for partitions with staged offsets.

Persistence
-----------
Every change Kafka journals is passed to `journal` as a `CoordinatorRecord(key, value, type, producer_id,
producer_epoch)`: `type` names the coordinator record schema ("OffsetCommit", "GroupMetadata",
"ConsumerGroupMetadata", "ConsumerGroupPartitionMetadata", "ConsumerGroupMemberMetadata",
"ConsumerGroupTargetAssignmentMetadata", "ConsumerGroupTargetAssignmentMember",
"ConsumerGroupCurrentMemberAssignment", and KIP-932's "ShareGroupMetadata" and the other ShareGroup* ones),
`key`/`value` use the schema's field names in snake_case, and `value` is None for a tombstone. At start-up,
`replay(record)` each record in log order (and `complete_txn` for each marker), then call `loaded()` to start
the session timers of the members found.

Share groups (KIP-932)
----------------------
A share group's members are served by ShareGroupHeartbeat; the share partitions' state (acquired records,
acknowledgements) is kept elsewhere (`share_partition.py`), which learns of members through
    GroupCoordinator(..., on_share_member_left=callback)  callback(group_id, member_id) when a member leaves or
                                                          its session expires
    share_member(group_id, member_id) -> bool             whether it is a current member now

Streams groups (KIP-1071)
-------------------------
A Kafka Streams application's members send their topology; the coordinator checks it against the topics,
decides the internal (repartition and changelog) topics' partition counts and assigns tasks with Kafka's sticky
task assignor. It creates no topic: a heartbeat's `StreamsHeartbeat.topics_to_create` names the internal topics
missing, for the broker to create (Kafka's coordinator hands them to its auto-topic creation the same way).

Inspection
----------
`groups`, `group(group_id)`, `committed_offset(group, topic, partition)`, `committed_offsets(group)`.
"""

from kemu.groups.classic_group import ClassicGroup, ClassicGroupState, ClassicMember
from kemu.groups.config import GroupConfig
from kemu.groups.consumer_group import ConsumerGroup, ConsumerGroupMember, ConsumerGroupState, MemberState
from kemu.groups.context import GroupRequestContext
from kemu.groups.coordinator import GroupCoordinator
from kemu.groups.offset_ops import CommitOffset
from kemu.groups.offsets import OffsetAndMetadata
from kemu.groups.pending import Pending
from kemu.groups.records import CoordinatorRecord, Journal, RecordType
from kemu.groups.share_group import ShareGroup, ShareGroupMember, ShareGroupState
from kemu.groups.streams_group import StreamsGroup, StreamsGroupMember, StreamsGroupState
from kemu.groups.streams_manager import StreamsHeartbeat
from kemu.groups.streams_topology import CreatableTopic
from kemu.groups.topics import TopicInfo, TopicSource

__all__ = [
    "ClassicGroup",
    "ClassicGroupState",
    "ClassicMember",
    "CommitOffset",
    "ConsumerGroup",
    "ConsumerGroupMember",
    "ConsumerGroupState",
    "CoordinatorRecord",
    "CreatableTopic",
    "GroupConfig",
    "GroupCoordinator",
    "Journal",
    "MemberState",
    "OffsetAndMetadata",
    "Pending",
    "RecordType",
    "GroupRequestContext",
    "ShareGroup",
    "ShareGroupMember",
    "ShareGroupState",
    "StreamsGroup",
    "StreamsGroupMember",
    "StreamsGroupState",
    "StreamsHeartbeat",
    "TopicInfo",
    "TopicSource",
]
