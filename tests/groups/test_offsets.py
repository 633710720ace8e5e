"""OffsetCommit, OffsetFetch, OffsetDelete, offsets retention, and transactional offsets."""

from __future__ import annotations

from typing import Any

import pytest

from kemu.groups import CommitOffset, GroupConfig, RecordType
from kemu.groups.subscription_bytes import encode_subscription
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import (
    START_MS,
    Harness,
    cg_heartbeat,
    commit_request,
    ctx,
    fetch_group,
    leave_request,
    txn_commit_request,
)


def errors(response: dict[str, Any]) -> dict[tuple[str, int], ErrorCode]:
    return {(t["name"], p["partition_index"]): ErrorCode(p["error_code"])
            for t in response["topics"] for p in t["partitions"]}


def fetched(response_group: dict[str, Any]) -> dict[tuple[str, int], tuple[int, int, str, ErrorCode]]:
    return {(t["name"], p["partition_index"]): (p["committed_offset"], p["committed_leader_epoch"],
                                                p["metadata"], ErrorCode(p["error_code"]))
            for t in response_group["topics"] for p in t["partitions"]}


def commit(h: Harness, group: str, offsets: dict[tuple[str, int], int], version: int = 8,
           **kwargs: Any) -> dict[tuple[str, int], ErrorCode]:
    return errors(h.coordinator.offset_commit(commit_request(group, offsets, **kwargs), ctx(version)))


def fetch(h: Harness, group: str, topics: dict[str, list[int]] | None, *, require_stable: bool = False,
          **kwargs: Any) -> dict[str, Any]:
    request = {"groups": [fetch_group(group, topics, **kwargs)], "require_stable": require_stable}
    return h.coordinator.offset_fetch(request, ctx(9))["groups"][0]


def consumer_subscription(*topics: str) -> list[tuple[str, bytes]]:
    return [("range", encode_subscription(list(topics)))]


# ---- commit and fetch -----------------------------------------------------------------------------

def test_a_commit_outside_group_management_creates_a_simple_group() -> None:
    h = Harness()
    assert commit(h, "simple", {("t", 0): 42, ("t", 1): 7}, metadata="meta", leader_epoch=3) == {
        ("t", 0): ErrorCode.NONE, ("t", 1): ErrorCode.NONE}
    group = h.coordinator.group("simple")
    assert group is not None and group.is_simple_group()
    listed = h.coordinator.list_groups({}, ctx(4))["groups"]
    assert listed == [{"group_id": "simple", "protocol_type": "", "group_state": "Empty", "group_type": "classic"}]
    assert fetched(fetch(h, "simple", {"t": [0, 1, 2], "other": [0]})) == {
        ("t", 0): (42, 3, "meta", ErrorCode.NONE),
        ("t", 1): (7, 3, "meta", ErrorCode.NONE),
        ("t", 2): (-1, -1, "", ErrorCode.NONE),
        ("other", 0): (-1, -1, "", ErrorCode.NONE),
    }
    offset = h.coordinator.committed_offset("simple", "t", 0)
    assert offset is not None and offset.commit_timestamp == START_MS


def test_fetch_all_topics_and_several_groups_and_the_old_single_group_shape() -> None:
    h = Harness()
    commit(h, "a", {("t", 0): 1, ("u", 3): 2})
    commit(h, "b", {("t", 0): 5})
    response = h.coordinator.offset_fetch(
        {"groups": [fetch_group("a", None), fetch_group("b", {"t": [0]}), fetch_group("missing", None)],
         "require_stable": False}, ctx(8))
    a, b, missing = response["groups"]
    assert fetched(a) == {("t", 0): (1, -1, "", ErrorCode.NONE), ("u", 3): (2, -1, "", ErrorCode.NONE)}
    assert fetched(b) == {("t", 0): (5, -1, "", ErrorCode.NONE)}
    assert missing == {"group_id": "missing", "topics": [], "error_code": ErrorCode.NONE}

    old = h.coordinator.offset_fetch({"group_id": "a", "topics": [{"name": "t", "partition_indexes": [0, 9]}],
                                      "require_stable": False}, ctx(7))
    assert old["error_code"] == ErrorCode.NONE
    assert fetched(old) == {("t", 0): (1, -1, "", ErrorCode.NONE), ("t", 9): (-1, -1, "", ErrorCode.NONE)}
    # For backwards compatibility, the empty group id may be fetched (it has nothing).
    assert fetched(fetch(h, "", {"t": [0]})) == {("t", 0): (-1, -1, "", ErrorCode.NONE)}


def test_commit_timestamps_metadata_and_its_size_limit() -> None:
    h = Harness()
    result = commit(h, "g", {("t", 0): 1}, metadata="x" * 4096)
    assert result == {("t", 0): ErrorCode.NONE}
    result = errors(h.coordinator.offset_commit({
        "group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [
            {"partition_index": 0, "committed_offset": 2, "committed_leader_epoch": -1,
             "committed_metadata": "x" * 4097},
            {"partition_index": 1, "committed_offset": 3, "committed_leader_epoch": -1,
             "committed_metadata": None}]}]}, ctx(8)))
    assert result == {("t", 0): ErrorCode.OFFSET_METADATA_TOO_LARGE, ("t", 1): ErrorCode.NONE}
    assert h.coordinator.committed_offset("g", "t", 0).offset == 1  # unchanged
    assert h.coordinator.committed_offset("g", "t", 1).metadata == ""
    commit(h, "g", {("t", 2): 9}, version=1, commit_timestamp=123)
    assert h.coordinator.committed_offset("g", "t", 2).commit_timestamp == 123


def test_the_empty_group_id_commits_like_any_other() -> None:
    # Kafka's OffsetCommit refuses only a null group id (INVALID_GROUP_ID), which no version carries.
    h = Harness()
    assert commit(h, "", {("t", 0): 1}) == {("t", 0): ErrorCode.NONE}
    assert h.coordinator.committed_offset("", "t", 0).offset == 1


def test_classic_group_commit_checks() -> None:
    h = Harness()
    leader, follower = h.stable_group(members=2)
    me = leader["member_id"]
    assert commit(h, "g", {("t", 0): 1}, generation=1, member_id=me) == {("t", 0): ErrorCode.NONE}
    assert commit(h, "g", {("t", 0): 1}, generation=2, member_id=me) == {("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert commit(h, "g", {("t", 0): 1}, generation=1, member_id="ghost") == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    # An admin commit to a group with members is refused.
    assert commit(h, "g", {("t", 0): 1}) == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    # During PreparingRebalance a member of the current generation may still commit (e.g. when revoking).
    h.join("g", me)
    assert commit(h, "g", {("t", 0): 2}, generation=1, member_id=follower["member_id"]) == {
        ("t", 0): ErrorCode.NONE}
    h.join("g", follower["member_id"])  # both rejoined: CompletingRebalance, generation 2
    assert commit(h, "g", {("t", 0): 3}, generation=2, member_id=me) == {("t", 0): ErrorCode.REBALANCE_IN_PROGRESS}


def test_commits_for_a_group_that_does_not_exist() -> None:
    h = Harness()
    assert commit(h, "gone", {("t", 0): 1}, generation=3, member_id="m", version=8) == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert commit(h, "gone", {("t", 0): 1}, generation=3, member_id="m", version=9) == {
        ("t", 0): ErrorCode.GROUP_ID_NOT_FOUND}
    assert "gone" not in h.coordinator.groups


def test_static_member_commit_with_a_stale_member_id_is_fenced() -> None:
    h = Harness()
    pending = h.join(instance_id="i1")
    h.run_until(lambda: pending.done)
    h.sync("g", pending.result()["member_id"], 1, {})
    assert commit(h, "g", {("t", 0): 1}, generation=1, member_id="old", instance_id="i1") == {
        ("t", 0): ErrorCode.FENCED_INSTANCE_ID}


def test_consumer_group_commit_and_fetch_checks() -> None:
    h = Harness()
    h.topics.create("t", 1)
    joined = h.cg(cg_heartbeat("cg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    epoch = joined["member_epoch"]
    assert commit(h, "cg", {("t", 0): 5}, generation=epoch, member_id="m", version=9) == {("t", 0): ErrorCode.NONE}
    assert commit(h, "cg", {("t", 0): 5}, generation=epoch + 1, member_id="m", version=9) == {
        ("t", 0): ErrorCode.STALE_MEMBER_EPOCH}
    assert commit(h, "cg", {("t", 0): 5}, generation=epoch, member_id="m", version=8) == {
        ("t", 0): ErrorCode.UNSUPPORTED_VERSION}
    assert commit(h, "cg", {("t", 0): 5}, generation=epoch, member_id="ghost", version=9) == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert commit(h, "cg", {("t", 0): 5}, version=9) == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}

    assert fetch(h, "cg", {"t": [0]}, member_id="m", member_epoch=epoch)["error_code"] == ErrorCode.NONE
    assert fetch(h, "cg", {"t": [0]}, member_id="m", member_epoch=epoch + 5) == {
        "group_id": "cg", "topics": [], "error_code": ErrorCode.STALE_MEMBER_EPOCH}
    assert fetch(h, "cg", {"t": [0]}, member_id="ghost", member_epoch=1)["error_code"] == \
        ErrorCode.UNKNOWN_MEMBER_ID
    assert fetched(fetch(h, "cg", {"t": [0]})) == {("t", 0): (5, -1, "", ErrorCode.NONE)}  # the admin view


# ---- retention ------------------------------------------------------------------------------------

FAST_RETENTION = GroupConfig(offsets_retention_minutes=10, offsets_retention_check_interval_ms=60_000)
RETENTION_MS = 600_000


def test_offsets_of_a_simple_group_expire_by_commit_time_and_the_group_goes() -> None:
    h = Harness(FAST_RETENTION)
    commit(h, "simple", {("t", 0): 1})
    h.advance(120_000)
    commit(h, "simple", {("t", 1): 1})
    h.advance(RETENTION_MS - 120_000)  # t=600 s: the first offset is exactly as old as the retention
    assert h.coordinator.committed_offset("simple", "t", 0) is None
    assert h.coordinator.committed_offset("simple", "t", 1) is not None
    h.advance(120_000)
    assert h.coordinator.committed_offset("simple", "t", 1) is None
    assert "simple" not in h.coordinator.groups
    tombstones = [r for r in h.journal if r.value is None]
    assert [(r.type, r.key) for r in tombstones] == [
        (RecordType.OFFSET_COMMIT, {"group": "simple", "topic": "t", "partition": 0}),
        (RecordType.OFFSET_COMMIT, {"group": "simple", "topic": "t", "partition": 1}),
        (RecordType.GROUP_METADATA, {"group": "simple"}),
    ]


def test_offsets_of_an_empty_classic_group_expire_counted_from_when_it_emptied() -> None:
    h = Harness(FAST_RETENTION)
    (only,) = h.stable_group(members=1, protocols=consumer_subscription("t"))
    commit(h, "g", {("t", 0): 10}, generation=1, member_id=only["member_id"])
    h.advance(RETENTION_MS)  # old enough by commit time, but the group is in use
    assert h.coordinator.committed_offset("g", "t", 0) is not None
    h.coordinator.leave_group(leave_request("g", (only["member_id"], None)), ctx(3))
    h.advance(RETENTION_MS - 60_000)
    assert h.coordinator.committed_offset("g", "t", 0) is not None
    h.advance(60_000)
    assert h.coordinator.committed_offset("g", "t", 0) is None
    assert "g" not in h.coordinator.groups


def test_a_stable_consumer_protocol_group_keeps_offsets_of_topics_it_subscribes_to() -> None:
    h = Harness(FAST_RETENTION)
    (only,) = h.stable_group(members=1, protocols=consumer_subscription("t"), session_timeout_ms=100_000)
    assert h.coordinator.group("g").subscribed_topics == {"t"}
    commit(h, "g", {("t", 0): 1, ("old-topic", 0): 1}, generation=1, member_id=only["member_id"])
    for _ in range(12):  # keep the member alive for two retention periods
        h.advance(60_000 - 1)
        h.heartbeat("g", only["member_id"], 1)
        h.advance(1)
    assert h.coordinator.committed_offset("g", "t", 0) is not None
    assert h.coordinator.committed_offset("g", "old-topic", 0) is None


def test_a_group_without_the_consumer_protocol_keeps_its_offsets_while_in_use() -> None:
    h = Harness(FAST_RETENTION)
    (only,) = h.stable_group(members=1, protocol_type="connect", session_timeout_ms=100_000)
    commit(h, "g", {("t", 0): 1}, generation=1, member_id=only["member_id"])
    for _ in range(12):
        h.advance(60_000)
        h.heartbeat("g", only["member_id"], 1)
    assert h.coordinator.committed_offset("g", "t", 0) is not None


def test_an_explicit_retention_time_sets_the_expiry() -> None:
    h = Harness(FAST_RETENTION)
    commit(h, "simple", {("t", 0): 1}, version=2, retention_time_ms=60_000)
    assert h.coordinator.committed_offset("simple", "t", 0).expire_timestamp == START_MS + 60_000
    h.advance(60_000)
    assert h.coordinator.committed_offset("simple", "t", 0) is None


def test_consumer_group_offsets_expire_only_for_topics_nobody_subscribes_to() -> None:
    h = Harness(FAST_RETENTION)
    h.topics.create("t", 1)
    h.cg(cg_heartbeat("cg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    commit(h, "cg", {("t", 0): 1, ("u", 0): 1}, generation=2, member_id="m", version=9)
    for _ in range(20):
        h.advance(30_000)
        assert h.cg(cg_heartbeat("cg", "m", 2, owned=[]), version=1)["error_code"] == ErrorCode.NONE
    assert h.coordinator.committed_offset("cg", "t", 0) is not None
    assert h.coordinator.committed_offset("cg", "u", 0) is None


def test_pending_transactional_offsets_hold_off_expiry() -> None:
    h = Harness(FAST_RETENTION)
    commit(h, "simple", {("t", 0): 1})
    h.coordinator.stage_txn_offsets(7, 0, "simple", [CommitOffset("t", 0, 2)])
    h.advance(RETENTION_MS * 2)
    assert h.coordinator.committed_offset("simple", "t", 0) is not None
    assert "simple" in h.coordinator.groups


# ---- OffsetDelete ---------------------------------------------------------------------------------

def offset_delete(h: Harness, group: str, topics: dict[str, list[int]]) -> dict[str, Any]:
    return h.coordinator.offset_delete(
        {"group_id": group, "topics": [{"name": t, "partitions": [{"partition_index": p} for p in ps]}
                                       for t, ps in topics.items()]}, ctx(0))


def test_offset_delete_errors() -> None:
    h = Harness()
    assert offset_delete(h, "", {"t": [0]}) == {"error_code": ErrorCode.INVALID_GROUP_ID, "topics": []}
    assert offset_delete(h, "nope", {"t": [0]})["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    h.stable_group("connect-group", members=1, protocol_type="connect")
    assert offset_delete(h, "connect-group", {"t": [0]})["error_code"] == ErrorCode.NON_EMPTY_GROUP


def test_offset_delete_refuses_topics_the_group_subscribes_to() -> None:
    h = Harness()
    (only,) = h.stable_group(members=1, protocols=consumer_subscription("t"))
    commit(h, "g", {("t", 0): 1, ("other", 0): 1}, generation=1, member_id=only["member_id"])
    response = offset_delete(h, "g", {"t": [0], "other": [0, 1]})
    assert response["error_code"] == ErrorCode.NONE
    assert errors(response) == {("t", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, ("other", 0): ErrorCode.NONE,
                                ("other", 1): ErrorCode.NONE}
    assert h.coordinator.committed_offset("g", "other", 0) is None
    assert h.coordinator.committed_offset("g", "t", 0) is not None

    h.topics.create("s", 1)
    h.cg(cg_heartbeat("cg", "m", 0, topics=["s"], owned=[], rebalance_timeout_ms=1000), version=1)
    commit(h, "cg", {("s", 0): 1})
    assert errors(offset_delete(h, "cg", {"s": [0]})) == {("s", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC}


# ---- DeleteGroups, ListGroups, DescribeGroups -----------------------------------------------------

def test_delete_groups() -> None:
    h = Harness()
    commit(h, "simple", {("t", 0): 1})
    h.stable_group("busy", members=1)
    h.topics.create("t", 1)
    h.cg(cg_heartbeat("cg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    h.cg(cg_heartbeat("cg-empty", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    h.cg(cg_heartbeat("cg-empty", "m", -1), version=1)
    response = h.coordinator.delete_groups(
        {"groups_names": ["simple", "busy", "nope", "", "cg", "cg-empty"]}, ctx(2))
    assert [(r["group_id"], r["error_code"]) for r in response["results"]] == [
        ("simple", ErrorCode.NONE), ("busy", ErrorCode.NON_EMPTY_GROUP), ("nope", ErrorCode.GROUP_ID_NOT_FOUND),
        ("", ErrorCode.GROUP_ID_NOT_FOUND), ("cg", ErrorCode.NON_EMPTY_GROUP), ("cg-empty", ErrorCode.NONE)]
    assert "simple" not in h.coordinator.groups and "cg-empty" not in h.coordinator.groups
    assert h.coordinator.committed_offsets("simple") == {}
    assert h.journal[-1].type == RecordType.CONSUMER_GROUP_METADATA and h.journal[-1].value is None


def test_list_groups_filters_by_state_and_type() -> None:
    h = Harness()
    commit(h, "simple", {("t", 0): 1})
    h.stable_group("stable", members=1)
    h.join("rebalancing", version=3)
    h.topics.create("t", 1)
    h.cg(cg_heartbeat("cg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)

    def listed(**request: Any) -> set[tuple[str, str, str]]:
        return {(g["group_id"], g["group_state"], g["group_type"])
                for g in h.coordinator.list_groups(request, ctx(5))["groups"]}

    assert listed() == {("simple", "Empty", "classic"), ("stable", "Stable", "classic"),
                        ("rebalancing", "PreparingRebalance", "classic"), ("cg", "Stable", "consumer")}
    assert listed(states_filter=["stable"]) == {("stable", "Stable", "classic"), ("cg", "Stable", "consumer")}
    assert listed(states_filter=["Stable"], types_filter=["Classic"]) == {("stable", "Stable", "classic")}
    assert listed(types_filter=["consumer"], states_filter=["Empty"]) == set()


def test_describe_groups() -> None:
    h = Harness()
    h.join("rebalancing", version=3, client_id="rc")
    response = h.coordinator.describe_groups({"groups": ["rebalancing", "nope", ""]}, ctx(5))["groups"]
    rebalancing, nope, invalid = response
    assert rebalancing["group_state"] == "PreparingRebalance" and rebalancing["protocol_type"] == "consumer"
    assert rebalancing["protocol_data"] == ""
    (member,) = rebalancing["members"]
    assert member["client_id"] == "rc" and member["member_metadata"] == b"" and member["member_assignment"] == b""
    assert nope["group_state"] == "Dead" and nope["error_code"] == ErrorCode.NONE and nope["members"] == []
    assert (invalid["error_code"], invalid["group_state"]) == (ErrorCode.NONE, "Dead")


# ---- transactional offsets ------------------------------------------------------------------------

def test_transactional_offsets_stay_invisible_until_the_commit_marker() -> None:
    h = Harness()
    commit(h, "g", {("t", 0): 1})
    response = h.coordinator.txn_offset_commit(txn_commit_request("g", 42, {("t", 0): 5, ("t", 1): 6}), ctx(3))
    assert errors(response) == {("t", 0): ErrorCode.NONE, ("t", 1): ErrorCode.NONE}
    assert h.coordinator.has_pending_txn_offsets("g", "t", 0)
    assert fetched(fetch(h, "g", {"t": [0, 1]}))[("t", 0)] == (1, -1, "", ErrorCode.NONE)
    assert fetched(fetch(h, "g", {"t": [0, 1, 2]}, require_stable=True)) == {
        ("t", 0): (-1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT),
        ("t", 1): (-1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT),
        ("t", 2): (-1, -1, "", ErrorCode.NONE)}
    staged = [r for r in h.journal if r.producer_id == 42]
    assert len(staged) == 2 and all(r.type == RecordType.OFFSET_COMMIT and r.producer_epoch == 0 for r in staged)

    h.coordinator.complete_txn(42, committed=True)
    assert not h.coordinator.has_pending_txn_offsets("g", "t", 0)
    assert fetched(fetch(h, "g", {"t": [0, 1]}, require_stable=True)) == {
        ("t", 0): (5, -1, "", ErrorCode.NONE), ("t", 1): (6, -1, "", ErrorCode.NONE)}


def test_a_marker_can_complete_only_some_groups_of_the_producer() -> None:
    """A marker lands on one __consumer_offsets partition: it decides the groups placed there, no others."""
    h = Harness()
    h.coordinator.stage_txn_offsets(9, 1, "a", [CommitOffset("t", 0, 10)])
    h.coordinator.stage_txn_offsets(9, 1, "b", [CommitOffset("t", 0, 20)])
    h.coordinator.complete_txn(9, committed=True, groups=lambda group_id: group_id == "a")
    assert h.coordinator.committed_offset("a", "t", 0) is not None
    assert h.coordinator.committed_offset("b", "t", 0) is None
    assert h.coordinator.has_pending_txn_offsets("b", "t", 0)
    h.coordinator.complete_txn(9, committed=False, groups=lambda group_id: group_id == "b")
    assert not h.coordinator.has_pending_txn_offsets("b", "t", 0)
    assert h.coordinator.committed_offset("b", "t", 0) is None


def test_aborted_transactional_offsets_are_dropped() -> None:
    h = Harness()
    h.coordinator.stage_txn_offsets(9, 1, "g", [CommitOffset("t", 0, 100, 4, "m")])
    assert "g" in h.coordinator.groups  # staging creates the simple group
    h.coordinator.complete_txn(9, committed=False)
    assert h.coordinator.committed_offset("g", "t", 0) is None
    assert not h.coordinator.has_pending_txn_offsets("g", "t", 0)


def test_the_most_recently_written_offset_wins_between_a_transaction_and_a_plain_commit() -> None:
    h = Harness()
    h.coordinator.stage_txn_offsets(1, 0, "g", [CommitOffset("t", 0, 10)])
    commit(h, "g", {("t", 0): 20})  # written after the transactional one
    h.coordinator.complete_txn(1, committed=True)
    assert h.coordinator.committed_offset("g", "t", 0).offset == 20

    commit(h, "g", {("t", 1): 20})
    h.coordinator.stage_txn_offsets(2, 0, "g", [CommitOffset("t", 1, 30)])
    h.coordinator.complete_txn(2, committed=True)
    assert h.coordinator.committed_offset("g", "t", 1).offset == 30


def test_txn_offset_commit_checks() -> None:
    h = Harness()
    assert errors(h.coordinator.txn_offset_commit(txn_commit_request("", 1, {("t", 0): 1}), ctx(3))) == {
        ("t", 0): ErrorCode.INVALID_GROUP_ID}
    assert errors(h.coordinator.txn_offset_commit(
        txn_commit_request("nope", 1, {("t", 0): 1}, generation=2, member_id="m"), ctx(3))) == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION}
    leader, follower = h.stable_group(members=2)
    me = leader["member_id"]

    def txn(**kwargs: Any) -> ErrorCode:
        response = h.coordinator.txn_offset_commit(txn_commit_request("g", 1, {("t", 0): 1}, **kwargs), ctx(3))
        return errors(response)[("t", 0)]

    assert txn(generation=1, member_id=me) == ErrorCode.NONE
    assert txn(generation=2, member_id=me) == ErrorCode.ILLEGAL_GENERATION
    assert txn(generation=1, member_id="ghost") == ErrorCode.UNKNOWN_MEMBER_ID
    assert txn() == ErrorCode.NONE  # v0-2 carry no member information: accepted
    assert txn(metadata="x" * 5000) == ErrorCode.OFFSET_METADATA_TOO_LARGE
    h.join("g", me)
    h.join("g", follower["member_id"])  # CompletingRebalance: fine for transactional commits
    assert txn(generation=2, member_id=me) == ErrorCode.NONE

    h.topics.create("t", 1)
    h.cg(cg_heartbeat("cg", "m", 0, topics=["t"], owned=[], rebalance_timeout_ms=1000), version=1)
    stale = h.coordinator.txn_offset_commit(txn_commit_request("cg", 1, {("t", 0): 1}, generation=7,
                                                               member_id="m"), ctx(3))
    assert errors(stale) == {("t", 0): ErrorCode.ILLEGAL_GENERATION}


@pytest.mark.parametrize("committed", [True, False])
def test_unstable_offsets_clear_when_the_transaction_ends(committed: bool) -> None:
    h = Harness()
    h.coordinator.stage_txn_offsets(3, 0, "g", [CommitOffset("t", 0, 1)])
    h.coordinator.complete_txn(3, committed)
    assert fetched(fetch(h, "g", {"t": [0]}, require_stable=True))[("t", 0)][3] == ErrorCode.NONE
