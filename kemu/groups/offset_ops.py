"""OffsetCommit, OffsetFetch, OffsetDelete, TxnOffsetCommit, and the expiry of old offsets.

Kafka's OffsetMetadataManager: the checks against the group (generation or member epoch, group state),
the metadata size limit, transactional offsets that stay invisible until their transaction commits, and
the periodic clean-up that expires offsets of groups nobody consumes with and deletes such groups once
their last offset is gone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kemu.groups.classic_group import ClassicGroup
from kemu.groups.consumer_group import ConsumerGroup
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.errors import GroupError
from kemu.groups.offsets import NO_LEADER_EPOCH, NO_OFFSET, NO_TIMESTAMP, NO_TOPIC_ID, OffsetAndMetadata
from kemu.groups.records import CoordinatorRecord, RecordType, offset_commit_key
from kemu.groups.replay import Group
from kemu.groups.share_group import ShareGroup
from kemu.groups.streams_group import StreamsGroup
from kemu.groups.topics import TopicsView
from kemu.wire.errors import ErrorCode

CLEANUP_KEY = ("offsets-cleanup",)


@dataclass(frozen=True, slots=True)
class CommitOffset:
    """One partition's offset to commit, as a transaction stages it."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    metadata: str | None = ""


def offset_record(group_id: str, topic: str, partition: int, offset: OffsetAndMetadata,
                  producer_id: int = -1, producer_epoch: int = -1) -> CoordinatorRecord:
    return CoordinatorRecord(offset_commit_key(group_id, topic, partition), offset.to_value(),
                             RecordType.OFFSET_COMMIT, producer_id, producer_epoch)


def offset_tombstone(group_id: str, topic: str, partition: int) -> CoordinatorRecord:
    return CoordinatorRecord(offset_commit_key(group_id, topic, partition), None, RecordType.OFFSET_COMMIT)


def partition_errors(topics: list[dict[str, Any]], error: ErrorCode) -> list[dict[str, Any]]:
    """`error` for every partition of a request's topics, in the response's shape (with the topic's id too,
    which OffsetCommit v10 answers by)."""
    return [{"name": topic["name"], "topic_id": topic.get("topic_id", NO_TOPIC_ID),
             "partitions": [{"partition_index": p["partition_index"], "error_code": error}
                            for p in topic["partitions"]]}
            for topic in topics]


class OffsetOps:
    def __init__(self, state: CoordinatorState) -> None:
        self.state = state
        self.config = state.config
        self.offsets = state.offsets

    def _metadata_too_large(self, metadata: str | None) -> bool:
        return metadata is not None and len(metadata) > self.config.offset_metadata_max_bytes

    def _simple_group(self, group_id: str) -> ClassicGroup:
        # A commit from outside group management (admin client, manual assignment) creates a "simple"
        # group: classic, empty, no protocol type. It is not journaled; its offsets are.
        group = ClassicGroup(group_id, self.state.now_ms())
        self.state.groups[group_id] = group
        return group

    def _commit_refusal(self, request: dict[str, Any], ctx: GroupRequestContext, generation: int,
                        transactional: bool) -> ErrorCode | None:
        """Why the group refuses the whole (Txn)OffsetCommit, if it does (Kafka's validateOffsetCommit and
        validateTransactionalOffsetCommit); a commit to a missing group creates a simple group."""
        group_id = request["group_id"]
        if not group_id and transactional:
            # Kafka takes OffsetCommit's "" as a group id like any other (a null id only is INVALID_GROUP_ID,
            # and no version carries one); TxnOffsetCommit refuses it.
            return ErrorCode.INVALID_GROUP_ID
        member_id = request.get("member_id") or ""
        instance_id = request.get("group_instance_id")
        try:
            group = self.state.groups.get(group_id)
            if group is None:
                if generation >= 0:
                    # OffsetCommit v9+ says so; older clients and TxnOffsetCommit expect ILLEGAL_GENERATION
                    # for a group that is gone.
                    raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND if not transactional and ctx.api_version >= 9
                                     else ErrorCode.ILLEGAL_GENERATION)
                group = self._simple_group(group_id)
            if isinstance(group, ClassicGroup):
                group.validate_offset_commit(member_id, instance_id, generation, transactional=transactional)
            else:
                try:
                    group.validate_offset_commit(member_id, instance_id, generation, transactional,
                                                 ctx.api_version)
                    if isinstance(group, StreamsGroup) and group.commit_needs_partition_check(member_id, generation):
                        self._check_streams_partitions(group, request, member_id, generation, transactional)
                except GroupError as error:
                    if transactional and error.code is ErrorCode.STALE_MEMBER_EPOCH:
                        raise GroupError(ErrorCode.ILLEGAL_GENERATION) from error
                    raise
        except GroupError as error:
            return error.code
        return None

    def _check_streams_partitions(self, group: StreamsGroup, request: dict[str, Any], member_id: str,
                                  member_epoch: int, transactional: bool) -> None:
        """A streams member committing with an epoch older than its own: each partition is checked against
        the epoch its task was assigned in (Kafka's per-partition validator, which fails the whole commit). A
        TxnOffsetCommit naming a topic that does not exist is ILLEGAL_GENERATION, as Kafka answers it."""
        view = self.state.topics()
        partitions = []
        for topic in request["topics"]:
            if transactional and topic["name"] not in view.by_name:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION)
            partitions += [(topic["name"], p["partition_index"]) for p in topic["partitions"]
                           if not self._metadata_too_large(p.get("committed_metadata"))]
        group.validate_commit_partitions(member_id, member_epoch, partitions)

    def _accept_partitions(self, topics: list[dict[str, Any]],
                           accept: Callable[[dict[str, Any], dict[str, Any]], None]) -> list[dict[str, Any]]:
        """The per-partition answer of a commit the group let through: metadata over the size limit is
        refused for its partition alone; every other partition is handed to `accept` with its topic."""
        response = []
        for topic in topics:
            partitions = []
            for p in topic["partitions"]:
                if self._metadata_too_large(p.get("committed_metadata")):
                    code = ErrorCode.OFFSET_METADATA_TOO_LARGE
                else:
                    code = ErrorCode.NONE
                    accept(topic, p)
                partitions.append({"partition_index": p["partition_index"], "error_code": code})
            response.append({"name": topic["name"], "topic_id": topic.get("topic_id", NO_TOPIC_ID),
                             "partitions": partitions})
        return response

    # ---- OffsetCommit -----------------------------------------------------------------------------
    def commit(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        group_id = request["group_id"]
        topics = request["topics"]
        refusal = self._commit_refusal(request, ctx, request.get("generation_id_or_member_epoch", -1),
                                       transactional=False)
        if refusal is not None:
            return {"topics": partition_errors(topics, refusal)}

        now = self.state.now_ms()
        retention = request.get("retention_time_ms", -1)
        expire = NO_TIMESTAMP if retention is None or retention == -1 else now + retention
        records: list[CoordinatorRecord] = []

        def accept(topic: dict[str, Any], p: dict[str, Any]) -> None:
            commit_ts = p.get("commit_timestamp", -1)
            offset = OffsetAndMetadata(
                offset=p["committed_offset"],
                leader_epoch=p.get("committed_leader_epoch", NO_LEADER_EPOCH),
                metadata=p.get("committed_metadata") or "",
                commit_timestamp=now if commit_ts is None or commit_ts == -1 else commit_ts,
                expire_timestamp=expire,
                # Kafka keeps the id of the topic committed to, whatever the version named it by.
                topic_id=topic.get("topic_id", NO_TOPIC_ID),
            )
            records.append(offset_record(group_id, topic["name"], p["partition_index"], offset))

        response = self._accept_partitions(topics, accept)
        self.state.append(records)
        return {"topics": response}

    # ---- TxnOffsetCommit --------------------------------------------------------------------------
    def txn_commit(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        group_id = request["group_id"]
        topics = request["topics"]
        refusal = self._commit_refusal(request, ctx, request.get("generation_id", -1), transactional=True)
        if refusal is not None:
            return {"topics": partition_errors(topics, refusal)}

        staged: list[CommitOffset] = []

        def accept(topic: dict[str, Any], p: dict[str, Any]) -> None:
            staged.append(CommitOffset(topic["name"], p["partition_index"], p["committed_offset"],
                                       p.get("committed_leader_epoch", NO_LEADER_EPOCH),
                                       p.get("committed_metadata")))

        response = self._accept_partitions(topics, accept)
        self.stage_txn_offsets(request["producer_id"], request["producer_epoch"], group_id, staged)
        return {"topics": response}

    def stage_txn_offsets(self, producer_id: int, producer_epoch: int, group_id: str,
                          offsets: Iterable[CommitOffset]) -> None:
        now = self.state.now_ms()
        records = [
            offset_record(group_id, o.topic, o.partition,
                          OffsetAndMetadata(o.offset, o.leader_epoch, o.metadata or "", now),
                          producer_id, producer_epoch)
            for o in offsets
        ]
        if records and group_id not in self.state.groups:
            self._simple_group(group_id)
        self.state.append(records)

    def complete_txn(self, producer_id: int, committed: bool) -> None:
        self.offsets.complete(producer_id, committed)

    # ---- OffsetFetch ------------------------------------------------------------------------------
    def fetch(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        require_stable = bool(request.get("require_stable", False))
        if ctx.api_version >= 8:
            return {"groups": [self.fetch_group(g["group_id"], g["topics"], require_stable,
                                                g.get("member_id"), g.get("member_epoch", -1))
                               for g in request["groups"]]}
        topics = request["topics"]
        result = self.fetch_group(request["group_id"], topics, require_stable)
        return {"topics": result["topics"], "error_code": result["error_code"]}

    def fetch_group(
        self, group_id: str, topics: list[dict[str, Any]] | None, require_stable: bool,
        member_id: str | None = None, member_epoch: int = -1,
    ) -> dict[str, Any]:
        """One group's answer in OffsetFetch's v8+ shape; `topics` None means every committed offset. A topic
        asked for by id (v10) gets no offset committed to another topic of its name (Kafka's
        isMismatchedTopicId); a whole-group answer leaves the ids to the caller."""
        group = self.state.groups.get(group_id)
        known = group is not None
        if group is not None:
            try:
                group.validate_offset_fetch(member_id, member_epoch)
            except GroupError as error:
                if error.code is not ErrorCode.GROUP_ID_NOT_FOUND:
                    return {"group_id": group_id, "topics": [], "error_code": error.code}
                known = False

        def answer(topic: str, partition: int, offset: OffsetAndMetadata | None,
                   topic_id: uuid.UUID = NO_TOPIC_ID) -> dict[str, Any]:
            if require_stable and self.offsets.has_pending(group_id, topic, partition):
                return {"partition_index": partition, "committed_offset": NO_OFFSET,
                        "committed_leader_epoch": NO_LEADER_EPOCH, "metadata": "",
                        "error_code": ErrorCode.UNSTABLE_OFFSET_COMMIT}
            if offset is None or not offset.is_for(topic_id):
                return {"partition_index": partition, "committed_offset": NO_OFFSET,
                        "committed_leader_epoch": NO_LEADER_EPOCH, "metadata": "", "error_code": ErrorCode.NONE}
            return {"partition_index": partition, "committed_offset": offset.offset,
                    "committed_leader_epoch": offset.leader_epoch, "metadata": offset.metadata,
                    "error_code": ErrorCode.NONE}

        committed = self.offsets.group_offsets(group_id) if known else {}
        if topics is None:
            result = [{"name": topic, "topic_id": NO_TOPIC_ID,
                       "partitions": [answer(topic, p, o) for p, o in sorted(parts.items())]}
                      for topic, parts in committed.items()]
        else:
            result = [{"name": t["name"], "topic_id": t.get("topic_id", NO_TOPIC_ID),
                       "partitions": [answer(t["name"], p, committed.get(t["name"], {}).get(p),
                                             t.get("topic_id", NO_TOPIC_ID))
                                      for p in t["partition_indexes"]]}
                      for t in topics]
        return {"group_id": group_id, "topics": result, "error_code": ErrorCode.NONE}

    # ---- OffsetDelete -----------------------------------------------------------------------------
    def delete(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        group_id = request["group_id"]
        if not group_id:
            return {"error_code": ErrorCode.INVALID_GROUP_ID, "topics": []}
        group = self.state.groups.get(group_id)
        try:
            if group is None:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)
            group.validate_offset_delete()
        except GroupError as error:
            return {"error_code": error.code, "topics": []}

        view = self.state.topics()
        records: list[CoordinatorRecord] = []
        response = []
        for topic in request["topics"]:
            name = topic["name"]
            subscribed = is_subscribed_to_topic(group, name, view)
            partitions = []
            for p in topic["partitions"]:
                index = p["partition_index"]
                if subscribed:
                    code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
                else:
                    code = ErrorCode.NONE
                    if self.offsets.get(group_id, name, index) is not None:
                        records.append(offset_tombstone(group_id, name, index))
                partitions.append({"partition_index": index, "error_code": code})
            response.append({"name": name, "partitions": partitions})
        self.state.append(records)
        return {"error_code": ErrorCode.NONE, "topics": response}

    def delete_all_offsets_records(self, group_id: str) -> list[CoordinatorRecord]:
        return [offset_tombstone(group_id, topic, partition)
                for topic, partition, _ in self.offsets.iter_group(group_id)]

    # ---- retention --------------------------------------------------------------------------------
    def schedule_cleanup(self) -> None:
        self.state.schedule(CLEANUP_KEY, self.config.offsets_retention_check_interval_ms, self._cleanup)

    def _cleanup(self) -> None:
        self.cleanup_expired()
        self.schedule_cleanup()

    def cleanup_expired(self) -> int:
        """Expire offsets past offsets.retention.minutes; delete empty groups left without offsets."""
        now = self.state.now_ms()
        retention = self.config.offsets_retention_ms
        view = self.state.topics()
        deleted = 0
        for group_id in list(self.state.groups):
            group = self.state.groups[group_id]
            if isinstance(group, ShareGroup):
                continue  # Kafka's share groups never expire (ShareGroup.shouldExpire)
            records: list[CoordinatorRecord] = []
            all_expired = True
            for topic, partition, offset in self.offsets.iter_group(group_id):
                base = group.offset_expiration_base(offset)
                if base is None or is_subscribed_to_topic(group, topic, view):
                    all_expired = False
                    continue
                if offset.expire_timestamp != NO_TIMESTAMP:
                    expired = now >= offset.expire_timestamp
                else:
                    expired = now - base >= retention
                if expired and not self.offsets.has_pending(group_id, topic, partition):
                    records.append(offset_tombstone(group_id, topic, partition))
                else:
                    all_expired = False
            if all_expired and self.offsets.has_pending_in_group(group_id):
                all_expired = False
            if all_expired and group.is_empty():
                records.extend(group.tombstone_records())
                deleted += 1
            self.state.append(records)
        return deleted


def is_subscribed_to_topic(group: Group, topic: str, view: TopicsView) -> bool:
    if isinstance(group, (ConsumerGroup, ShareGroup, StreamsGroup)):
        return group.is_subscribed_to_topic(topic, view)
    return group.is_subscribed_to_topic(topic)
