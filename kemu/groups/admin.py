"""ListGroups, DescribeGroups and DeleteGroups: the administrative view of all groups, of both kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kemu.groups.classic_group import ClassicGroup, ClassicGroupState
from kemu.groups.context import CoordinatorState, GroupRequestContext
from kemu.groups.errors import GroupError
from kemu.groups.offset_ops import OffsetOps
from kemu.groups.streams_group import StreamsGroup
from kemu.wire.errors import ErrorCode

if TYPE_CHECKING:
    from kemu.wire.messages.k16_list_groups import ListGroupsRequest

AUTHORIZED_OPERATIONS_OMITTED = -2147483648
FIRST_VERSION_WITH_NOT_FOUND = 6  # DescribeGroups v6: an unknown group is GROUP_ID_NOT_FOUND (KIP-1043)


class GroupAdmin:
    def __init__(self, state: CoordinatorState, offsets: OffsetOps) -> None:
        self.state = state
        self.offset_ops = offsets

    def list_groups(self, request: ListGroupsRequest, ctx: GroupRequestContext) -> dict[str, Any]:
        # KIP-518/KIP-848 filters; Kafka compares them without regard to case.
        states = {s.lower() for s in request.get("states_filter") or ()}
        types = {t.lower() for t in request.get("types_filter") or ()}
        listed = []
        for group_id, group in self.state.groups.items():
            # Kafka spells a streams group's NotReady "not_ready" in the filter.
            state = group.state.lower_name if isinstance(group, StreamsGroup) else group.state_name().lower()
            if states and state not in states:
                continue
            if types and group.group_type not in types:
                continue
            listed.append({"group_id": group_id, "protocol_type": group.protocol_type or "",
                           "group_state": group.state_name(), "group_type": group.group_type})
        return {"error_code": ErrorCode.NONE, "groups": listed}

    def describe_groups(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        return {"groups": [self._describe(group_id, ctx.api_version) for group_id in request["groups"]]}

    def _describe(self, group_id: str, version: int) -> dict[str, Any]:
        described: dict[str, Any] = {
            "error_code": ErrorCode.NONE, "group_id": group_id, "group_state": "", "protocol_type": "",
            "protocol_data": "", "members": [], "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
        }
        group = self.state.groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            # Unknown, or a KIP-848 group (which ConsumerGroupDescribe describes): Dead, as Kafka says; from v6
            # (KIP-1043) also GROUP_ID_NOT_FOUND, with the message of Kafka's GroupIdNotFoundException.
            described["group_state"] = ClassicGroupState.DEAD.value
            if version >= FIRST_VERSION_WITH_NOT_FOUND:
                described["error_code"] = ErrorCode.GROUP_ID_NOT_FOUND
                described["error_message"] = (f"Group {group_id} not found." if group is None
                                              else f"Group {group_id} is not a classic group.")
            return described
        described["group_state"] = group.state_name()
        described["protocol_type"] = group.protocol_type or ""
        stable = group.is_in_state(ClassicGroupState.STABLE)
        if stable:
            assert group.protocol_name is not None
            described["protocol_data"] = group.protocol_name
        described["members"] = [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
             "client_host": m.client_host,
             # Metadata only once the group is Stable (no protocol is chosen before); the assignment always,
             # the last one the leader gave (emptied when a rebalance cuts a sync short), as Kafka shows it.
             "member_metadata": m.metadata(group.protocol_name) if stable and group.protocol_name else b"",
             "member_assignment": m.assignment}
            for m in group.members.values()
        ]
        return described

    def delete_groups(self, request: dict[str, Any], ctx: GroupRequestContext) -> dict[str, Any]:
        results = []
        for group_id in request["groups_names"]:
            error = ErrorCode.NONE
            try:
                self.delete_group(group_id)
            except GroupError as failure:
                error = failure.code
            results.append({"group_id": group_id, "error_code": error})
        return {"results": results}

    def delete_group(self, group_id: str) -> None:
        group = self.state.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND)
        group.validate_delete()
        records = self.offset_ops.delete_all_offsets_records(group_id)
        records.extend(group.tombstone_records())
        self.state.offsets.drop_pending_for_group(group_id)
        self.state.append(records)
