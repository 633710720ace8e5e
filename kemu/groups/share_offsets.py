"""The group coordinator's part of AlterShareGroupOffsets and DeleteShareGroupOffsets (KIP-932), as Kafka 4.3's
GroupMetadataManager does it: which share-partitions of a share group have state (the
ShareGroupStatePartitionMetadata record's initializing, initialized and deleting topics), changed only while
the group has no members.

The share-partition start offsets themselves are the share coordinator's; kemu keeps them in the broker's
share fetch manager, which the handlers tell what to set or drop once the group coordinator has said yes.
Kafka asks its share coordinator between the two records of each change (initializing, then initialized once
the state is written; deleting, then gone once it is deleted); kemu has nothing to wait for, so both records
are written at once, as ShareGroupHeartbeat's initialization does.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from kemu.groups.context import CoordinatorState
from kemu.groups.errors import GroupError
from kemu.groups.share_group import ShareGroup, StateTopic, state_partition_metadata_record
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages.k91_alter_share_group_offsets import (
        AlterShareGroupOffsetsRequestTopics,
        AlterShareGroupOffsetsResponse,
        AlterShareGroupOffsetsResponseResponses,
        AlterShareGroupOffsetsResponseResponsesPartitions,
    )
    from kemu.wire.messages.k92_delete_share_group_offsets import (
        DeleteShareGroupOffsetsResponse,
        DeleteShareGroupOffsetsResponseResponses,
    )

NO_OFFSET_INFORMATION = "There is no offset information to delete."


class AlteredOffsets(NamedTuple):
    response: AlterShareGroupOffsetsResponse
    offsets: list[tuple[uuid.UUID, int, int]]  # (topic id, partition, start offset) to set


class DeletedOffsets(NamedTuple):
    response: DeleteShareGroupOffsetsResponse
    partitions: list[tuple[uuid.UUID, int]]  # whose state to delete


def _share_group(state: CoordinatorState, group_id: str, create: bool) -> ShareGroup:
    group = state.groups.get(group_id)
    if group is None:
        if create:
            return ShareGroup(group_id)  # made for good by the record replayed below
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    if not isinstance(group, ShareGroup):
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
    return group


def _combined(first: Mapping[uuid.UUID, StateTopic],
              second: Mapping[uuid.UUID, StateTopic]) -> dict[uuid.UUID, StateTopic]:
    out = dict(first)
    for topic_id, topic in second.items():
        before = out.get(topic_id)
        out[topic_id] = StateTopic(topic.name, topic.partitions | (before.partitions if before else frozenset()))
    return out


def alter_offsets(state: CoordinatorState, group_id: str,
                  topics: Sequence[AlterShareGroupOffsetsRequestTopics]) -> AlteredOffsets:
    """Kafka's alterShareGroupOffsets: the group (made if it does not exist) must be empty; each partition of a
    known topic below its partition count is set, the others are UNKNOWN_TOPIC_OR_PARTITION."""
    try:
        group = _share_group(state, group_id, create=True)
        if group.members:
            raise GroupError(ErrorCode.NON_EMPTY_GROUP, ErrorCode.NON_EMPTY_GROUP.message)
    except GroupError as error:
        return AlteredOffsets({"error_code": error.code, "error_message": error.message, "responses": []}, [])
    view = state.topics()
    responses: list[AlterShareGroupOffsetsResponseResponses] = []
    offsets: list[tuple[uuid.UUID, int, int]] = []
    wanted: dict[uuid.UUID, StateTopic] = {}
    for topic in topics:
        info = view.by_name.get(topic["topic_name"])
        if info is None:
            responses.append({"topic_name": topic["topic_name"], "topic_id": uuid.UUID(int=0), "partitions": [
                _unknown_partition(p["partition_index"]) for p in topic["partitions"]]})
            continue
        partitions: list[AlterShareGroupOffsetsResponseResponsesPartitions] = []
        for p in topic["partitions"]:
            index = p["partition_index"]
            if 0 <= index < info.num_partitions:
                partitions.append({"partition_index": index, "error_code": ErrorCode.NONE, "error_message": None})
                offsets.append((info.topic_id, index, p["start_offset"]))
            else:
                partitions.append(_unknown_partition(index))
        valid = frozenset(index for topic_id, index, _ in offsets if topic_id == info.topic_id)
        if valid:
            wanted[info.topic_id] = StateTopic(info.name, valid)
        responses.append({"topic_name": info.name, "topic_id": info.topic_id, "partitions": partitions})
    if wanted:
        initializing = _combined(group.initializing, wanted)
        deleting = {t: v for t, v in group.deleting.items() if t not in wanted}
        asked = state_partition_metadata_record(group_id, initializing, group.initialized, deleting)
        initialized = _combined(group.initialized, wanted)
        remaining = {t: v for t, v in initializing.items() if t not in wanted}
        answered = state_partition_metadata_record(group_id, remaining, initialized, deleting)
        state.append([asked, answered])
    return AlteredOffsets({"error_code": ErrorCode.NONE, "error_message": None, "responses": responses}, offsets)


def _unknown_partition(index: int) -> AlterShareGroupOffsetsResponseResponsesPartitions:
    return {"partition_index": index, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "error_message": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message}


def delete_offsets(state: CoordinatorState, group_id: str, topic_names: list[str]) -> DeletedOffsets:
    """Kafka's initiateDeleteShareGroupOffsets and completeDeleteShareGroupOffsets: the group must exist, be a
    share group and be empty; a topic with initialized (or still deleting) state has it deleted, a known topic
    without it is UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete.", an unknown topic
    UNKNOWN_TOPIC_OR_PARTITION. The deleted topics come first in the answer, then the refused ones."""
    try:
        group = _share_group(state, group_id, create=False)
        if group.members:
            raise GroupError(ErrorCode.NON_EMPTY_GROUP, ErrorCode.NON_EMPTY_GROUP.message)
    except GroupError as error:
        return DeletedOffsets({"error_code": error.code, "error_message": error.message, "responses": []}, [])
    done: DeleteShareGroupOffsetsResponse = {"error_code": ErrorCode.NONE, "error_message": None, "responses": []}
    if not group.has_state_metadata:
        return DeletedOffsets(done, [])  # Kafka: no state metadata at all, nothing to say about any topic
    view = state.topics()
    initialized = dict(group.initialized)
    deleted: dict[uuid.UUID, StateTopic] = {}
    partitions: list[tuple[uuid.UUID, int]] = []
    refused: list[DeleteShareGroupOffsetsResponseResponses] = []
    for name in topic_names:
        info = view.by_name.get(name)
        if info is None:
            refused.append({"topic_name": name, "topic_id": uuid.UUID(int=0),
                            "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                            "error_message": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message})
        elif info.topic_id in initialized:
            had = initialized.pop(info.topic_id)
            deleted[info.topic_id] = StateTopic(info.name)
            partitions += [(info.topic_id, index) for index in sorted(had.partitions)]
        elif info.topic_id in group.deleting:
            deleted[info.topic_id] = StateTopic(info.name)
            partitions += [(info.topic_id, index) for index in range(info.num_partitions)]
        else:
            refused.append({"topic_name": name, "topic_id": uuid.UUID(int=0),
                            "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "error_message": NO_OFFSET_INFORMATION})
    deleting = {**group.deleting, **deleted}
    records = [state_partition_metadata_record(group_id, group.initializing, initialized, deleting)]
    if deleted:
        remaining = {t: v for t, v in deleting.items() if t not in deleted}
        records.append(state_partition_metadata_record(group_id, group.initializing, initialized, remaining))
    state.append(records)
    responses: list[DeleteShareGroupOffsetsResponseResponses] = [
        {"topic_name": topic.name, "topic_id": topic_id, "error_code": ErrorCode.NONE, "error_message": None}
        for topic_id, topic in deleted.items()]
    return DeletedOffsets({**done, "responses": responses + refused}, partitions)
