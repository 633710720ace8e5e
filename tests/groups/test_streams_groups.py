"""KIP-1071 streams groups in the coordinator core: the topology and its internal topics, the statuses, the initial
rebalance delay, the sticky task assignor, revocation before reassignment, leaving and session expiry, offsets
committed by members, the other group APIs' answers, and replay of the StreamsGroup* records."""

from __future__ import annotations

from typing import Any

from kemu.clock import VirtualClock
from kemu.groups import GroupConfig, GroupCoordinator, StreamsGroup
from kemu.groups.log_records import decode, encode
from kemu.groups.records import CoordinatorRecord
from kemu.groups.streams_assignor import StreamsMemberSpec, SubtopologySpec, assign
from kemu.wire.errors import ErrorCode
from tests.groups.helpers import START_MS, Topics, commit_request, ctx, uuid_counter

REPARTITION = "app-count-repartition"
CHANGELOG = "app-store-changelog"
MISSING_INTERNAL, ASSIGNMENT_DELAYED, MISSING_SOURCE, INCORRECTLY_PARTITIONED, STALE = 3, 5, 1, 2, 0


def word_count(epoch: int = 0) -> dict[str, Any]:
    """The topology Kafka Streams sends for a word count: split and re-key (sub-topology 0), count (1)."""
    return {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["input"], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": [REPARTITION], "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [{"name": CHANGELOG, "partitions": 0, "replication_factor": 0,
                                     "topic_configs": [{"key": "cleanup.policy", "value": "compact"}]}],
         "repartition_sink_topics": [],
         "repartition_source_topics": [{"name": REPARTITION, "partitions": 0, "replication_factor": 0,
                                        "topic_configs": [{"key": "cleanup.policy", "value": "delete"}]}],
         "copartition_groups": []},
    ]}


class Streams:
    def __init__(self, config: GroupConfig | None = None) -> None:
        self.clock = VirtualClock(START_MS)
        self.journal: list[CoordinatorRecord] = []
        self.topics = Topics()
        self.coordinator = GroupCoordinator(self.clock, config=config or GroupConfig(), journal=self.journal.append,
                                            topics=self.topics, new_uuid=uuid_counter())
        self.created: dict[str, Any] = {}

    def hb(self, member: str, epoch: int, *, process: str | None = None, topology: dict[str, Any] | None = None,
           owned: dict[str, list[int]] | None = None, group: str = "app",
           overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        joining = epoch == 0
        request: dict[str, Any] = {
            "group_id": group, "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 300000 if joining else -1,
            "topology": (topology or word_count()) if joining else None,
            "active_tasks": [] if joining else None, "standby_tasks": [] if joining else None,
            "warmup_tasks": [] if joining else None, "process_id": (process or f"process-{member}") if joining
            else None, "user_endpoint": None, "client_tags": [] if joining else None, "task_offsets": None,
            "task_end_offsets": None, "shutdown_application": False,
        }
        if owned is not None:
            request.update(active_tasks=[{"subtopology_id": s, "partitions": ps} for s, ps in owned.items()],
                           standby_tasks=[], warmup_tasks=[])
        request.update(overrides or {})
        result = self.coordinator.streams_group_heartbeat(request, ctx(0, "streams-client"))
        self.created.update(result.topics_to_create)
        return result.response

    def create_internal_topics(self) -> None:
        for name, topic in self.created.items():
            self.topics.create(name, topic.num_partitions)

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.coordinator.tick()

    def describe(self, *groups: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.coordinator.streams_group_describe(
            {"group_ids": list(groups), "include_authorized_operations": False}, ctx(0))["groups"]
        return result

    def group(self, group_id: str = "app") -> StreamsGroup:
        group = self.coordinator.group(group_id)
        assert isinstance(group, StreamsGroup)
        return group

    def running(self) -> dict[str, Any]:
        """A group of one member "a" with its tasks: the internal topics made, the initial delay passed."""
        self.topics.create("input", 3)
        self.hb("a", 0)
        self.create_internal_topics()
        self.advance(3000)
        return self.hb("a", 1, owned={})


def statuses(response: dict[str, Any]) -> dict[int, str]:
    return {s["status_code"]: s["status_detail"] for s in response["status"]}


def tasks(response: dict[str, Any], kind: str = "active_tasks") -> dict[str, list[int]]:
    assert response[kind] is not None, response
    return {t["subtopology_id"]: t["partitions"] for t in response[kind]}


def test_first_join_asks_for_the_internal_topics_with_the_partition_counts_kafka_derives() -> None:
    s = Streams()
    s.topics.create("input", 3)
    join = s.hb("a", 0)
    assert (join["error_code"], join["member_id"], join["member_epoch"], join["heartbeat_interval_ms"]) == (
        0, "a", 1, 5000)
    assert statuses(join) == {
        ASSIGNMENT_DELAYED: "Assignment delayed due to the configured initial rebalance delay.",
        MISSING_INTERNAL: f"Internal topics are missing: {REPARTITION}, {CHANGELOG}"}
    assert tasks(join) == {} and join["endpoint_information_epoch"] == 0
    # The repartition topic as wide as the sub-topology writing it reads; the changelog as its own tasks.
    assert {name: (t.num_partitions, t.replication_factor, t.configs) for name, t in s.created.items()} == {
        REPARTITION: (3, -1, (("cleanup.policy", "delete"),)), CHANGELOG: (3, -1, (("cleanup.policy", "compact"),))}
    [described] = s.describe("app")
    assert (described["group_state"], described["group_epoch"], described["assignment_epoch"]) == ("NotReady", 2, 1)
    # Not configured yet: the topology as the member sent it (the changelog's partitions undecided).
    assert described["topology"]["subtopologies"][1]["state_changelog_topics"][0]["partitions"] == 0
    assert [m["member_id"] for m in described["members"]] == ["a"]


def test_tasks_are_assigned_once_the_internal_topics_exist_and_the_delay_is_over() -> None:
    s = Streams()
    response = s.running()
    assert (response["error_code"], response["member_epoch"], statuses(response)) == (0, 3, {})
    assert tasks(response) == {"0": [0, 1, 2], "1": [0, 1, 2]}
    assert tasks(response, "standby_tasks") == {} and tasks(response, "warmup_tasks") == {}
    [described] = s.describe("app")
    assert (described["group_state"], described["group_epoch"], described["assignment_epoch"]) == ("Stable", 3, 3)
    member = described["members"][0]
    assert member["assignment"]["active_tasks"] == [{"subtopology_id": "0", "partitions": [0, 1, 2]},
                                                    {"subtopology_id": "1", "partitions": [0, 1, 2]}]
    assert member["target_assignment"] == member["assignment"]
    assert (member["process_id"], member["topology_epoch"], member["client_id"]) == ("process-a", 0, "streams-client")
    changelog = described["topology"]["subtopologies"][1]["state_changelog_topics"][0]
    assert (changelog["name"], changelog["partitions"]) == (CHANGELOG, 3)
    # Unchanged: the next heartbeat carries no tasks.
    again = s.hb("a", 3, owned={"0": [0, 1, 2], "1": [0, 1, 2]})
    assert (again["member_epoch"], again["active_tasks"], statuses(again)) == (3, None, {})


def test_missing_source_topics_and_incorrectly_partitioned_internal_topics() -> None:
    s = Streams()
    join = s.hb("a", 0)
    assert statuses(join)[MISSING_SOURCE] == "Source topics input are missing."
    assert s.created == {}
    assert s.describe("app")[0]["group_state"] == "NotReady"

    t = Streams()
    t.topics.create("input", 3)
    t.topics.create(CHANGELOG, 5)
    join = t.hb("a", 0)
    assert statuses(join)[INCORRECTLY_PARTITIONED] == (
        f"Existing topic {CHANGELOG} has different number of partitions: expected 3, found 5")
    assert t.created == {}


def test_a_second_member_gets_tasks_only_once_the_first_has_revoked_them() -> None:
    s = Streams()
    s.running()
    soon = s.hb("c", 0)  # within group.streams.assignment.interval.ms of the last assignment
    assert (soon["member_epoch"], statuses(soon)) == (
        3, {ASSIGNMENT_DELAYED: "Assignment delayed due to the configured assignment interval."})
    s.hb("c", -1)
    s.advance(1000)
    join = s.hb("b", 0)
    assert (join["member_epoch"], tasks(join)) == (6, {})  # b's tasks are still a's
    first = s.hb("a", 3, owned={"0": [0, 1, 2], "1": [0, 1, 2]})
    kept = tasks(first)
    assert first["member_epoch"] == 3  # a stays at its epoch until it has revoked
    assert sum(len(ps) for ps in kept.values()) == 3
    waiting = s.hb("b", 6, owned={})
    assert waiting["active_tasks"] is None  # still held by a
    revoked = s.hb("a", 3, owned=kept)
    assert (revoked["member_epoch"], revoked["active_tasks"]) == (6, None)
    given = s.hb("b", 6, owned={})
    others = tasks(given)
    assert given["member_epoch"] == 6
    every = {(sub, p) for part in (kept, others) for sub, ps in part.items() for p in ps}
    assert every == {(sub, p) for sub in ("0", "1") for p in range(3)} and len(every) == 6
    assert s.describe("app")[0]["group_state"] == "Stable"


def test_a_member_leaving_or_silent_gives_its_tasks_back() -> None:
    s = Streams()
    s.running()
    s.advance(1000)
    s.hb("b", 0)
    a = s.hb("a", 3, owned={"0": [0, 1, 2], "1": [0, 1, 2]})
    s.hb("a", 3, owned=tasks(a))
    b = s.hb("b", 4, owned={})
    leave = s.hb("b", -1)
    assert (leave["error_code"], leave["member_id"], leave["member_epoch"], leave["status"]) == (0, "b", -1, [])
    assert s.group().group_epoch == 5 and "b" not in s.group().members
    s.advance(1000)
    back = s.hb("a", 4, owned=tasks(a))
    assert (back["member_epoch"], tasks(back)) == (5, {"0": [0, 1, 2], "1": [0, 1, 2]})
    assert tasks(b)  # b held some before it left

    # Silence: 45 s without a heartbeat (group.streams.session.timeout.ms) and the member is fenced.
    s.advance(44_999)
    assert "a" in s.group().members
    s.advance(1)
    assert s.group().members == {} and s.describe("app")[0]["group_state"] == "Empty"
    gone = s.hb("a", 5)
    assert (gone["error_code"], gone["error_message"]) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                                           "Member a is not a member of group app.")


def test_epochs_the_coordinator_does_not_know_are_fenced() -> None:
    s = Streams()
    s.running()
    ahead = s.hb("a", 9, owned={})
    assert ahead["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert ahead["error_message"].startswith("The streams group member has a greater member epoch (9)")
    behind = s.hb("a", 2, owned={})  # neither its epoch (3) nor its previous one (1)
    assert behind["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    unknown = s.hb("a", 1, group="nope")
    assert (unknown["error_code"], unknown["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                                 "Streams group nope not found.")


def test_invalid_requests_get_kafkas_messages() -> None:
    s = Streams()
    s.topics.create("input", 3)
    cases = [
        ({"member_id": ""}, ErrorCode.INVALID_REQUEST, "MemberId can't be empty."),
        ({"instance_id": "i"}, ErrorCode.INVALID_REQUEST, "Static membership is not yet supported."),
        ({"rebalance_timeout_ms": -1}, ErrorCode.INVALID_REQUEST,
         "RebalanceTimeoutMs must be provided in first request."),
        ({"active_tasks": None}, ErrorCode.INVALID_REQUEST, "ActiveTasks must be empty when (re-)joining."),
        ({"topology": None}, ErrorCode.INVALID_REQUEST, "Topology must be non-null when (re-)joining."),
        ({"task_offsets": []}, ErrorCode.INVALID_REQUEST, "TaskOffsets are not supported yet."),
        ({"member_epoch": -3}, ErrorCode.INVALID_REQUEST,
         "MemberEpoch is -3, but must be greater than or equal to -2."),
    ]
    for extra, code, message in cases:
        response = s.hb("a", 0, overrides=extra)
        assert (response["error_code"], response["error_message"]) == (code, message), extra
    bad = word_count()
    bad["subtopologies"][1]["state_changelog_topics"][0]["partitions"] = 2
    response = s.hb("a", 0, topology=bad)
    assert (response["error_code"], response["error_message"]) == (
        ErrorCode.STREAMS_INVALID_TOPOLOGY,
        f"Changelog topic {CHANGELOG} must have an undefined partition count, but it is set to 2.")
    s.hb("a", 0)
    other = word_count()
    other["subtopologies"][0]["source_topics"] = ["input", "more"]
    changed = s.hb("b", 0, topology=other)
    assert (changed["error_code"], changed["error_message"]) == (ErrorCode.INVALID_REQUEST,
                                                                 "Topology updates are not supported yet.")


def test_a_member_with_an_older_topology_epoch_is_told_it_is_stale() -> None:
    s = Streams()
    s.topics.create("input", 3)
    s.hb("a", 0, topology=word_count(epoch=2))
    stale = s.hb("b", 0, topology=word_count(epoch=1))
    assert statuses(stale)[STALE] == "The member's topology epoch 1 is behind the group's topology epoch 2."


def test_offsets_committed_by_members_are_checked_against_their_epochs() -> None:
    s = Streams()
    s.running()
    commit = s.coordinator.offset_commit
    current = commit(commit_request("app", {("input", 0): 5}, generation=3, member_id="a"), ctx(9))
    assert current["topics"][0]["partitions"][0]["error_code"] == ErrorCode.NONE
    assert s.coordinator.committed_offset("app", "input", 0).offset == 5  # type: ignore[union-attr]
    newer = commit(commit_request("app", {("input", 0): 6}, generation=4, member_id="a"), ctx(9))
    assert newer["topics"][0]["partitions"][0]["error_code"] == ErrorCode.STALE_MEMBER_EPOCH
    # Epoch 2 is older than the epoch (3) a's tasks were assigned in.
    older = commit(commit_request("app", {("input", 0): 6}, generation=2, member_id="a"), ctx(9))
    assert older["topics"][0]["partitions"][0]["error_code"] == ErrorCode.STALE_MEMBER_EPOCH
    old_version = commit(commit_request("app", {("input", 0): 6}, generation=3, member_id="a"), ctx(8))
    assert old_version["topics"][0]["partitions"][0]["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    stranger = commit(commit_request("app", {("input", 0): 6}, generation=3, member_id="x"), ctx(9))
    assert stranger["topics"][0]["partitions"][0]["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    fetched = s.coordinator.offset_fetch(
        {"groups": [{"group_id": "app", "member_id": "a", "member_epoch": 3,
                     "topics": [{"name": "input", "partition_indexes": [0]}]}], "require_stable": False}, ctx(9))
    assert fetched["groups"][0]["topics"][0]["partitions"][0]["committed_offset"] == 5


def test_list_describe_and_delete_groups_see_a_streams_group() -> None:
    s = Streams()
    s.running()
    listed = s.coordinator.list_groups({"states_filter": [], "types_filter": ["streams"]}, ctx(5))["groups"]
    assert listed == [{"group_id": "app", "protocol_type": "streams", "group_state": "Stable",
                       "group_type": "streams"}]
    classic = s.coordinator.describe_groups({"groups": ["app"], "include_authorized_operations": False},
                                            ctx(6))["groups"][0]
    assert (classic["error_code"], classic["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                                 "Group app is not a classic group.")
    consumer = s.coordinator.consumer_group_describe({"group_ids": ["app"]}, ctx(0))["groups"][0]
    assert consumer["error_message"] == "Group app is not a consumer group."
    deleted = s.coordinator.delete_groups({"groups_names": ["app"]}, ctx(2))["results"]
    assert deleted[0]["error_code"] == ErrorCode.NON_EMPTY_GROUP
    s.hb("a", -1)
    assert s.coordinator.delete_groups({"groups_names": ["app"]}, ctx(2))["results"][0]["error_code"] == 0
    unknown, empty = s.describe("app", "")
    assert (unknown["error_code"], unknown["error_message"]) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group app not found.")
    assert (empty["error_code"], empty["group_id"]) == (ErrorCode.INVALID_GROUP_ID, "")


def test_the_records_replay_into_the_same_group() -> None:
    s = Streams()
    s.running()
    s.hb("b", 0)
    restarted = GroupCoordinator(VirtualClock(START_MS), topics=s.topics)
    for record in s.journal:
        key, value = encode(record)
        restarted.replay(decode(key, value))
    restarted.loaded()
    before, after = s.group(), restarted.group("app")
    assert isinstance(after, StreamsGroup)
    assert (after.group_epoch, after.assignment_epoch, after.topology, after.members, after.target_assignment,
            after.validated_topology_epoch, after.last_assignment_configs) == (
        before.group_epoch, before.assignment_epoch, before.topology, before.members, before.target_assignment,
        before.validated_topology_epoch, before.last_assignment_configs)
    assert after.active_task_process == before.active_task_process


def test_the_sticky_assignor_keeps_tasks_where_they_were_and_places_standbys_elsewhere() -> None:
    subtopologies = {"0": SubtopologySpec(4, stateful=False), "1": SubtopologySpec(4, stateful=True)}
    fresh = assign({"m1": StreamsMemberSpec("p1"), "m2": StreamsMemberSpec("p2")}, subtopologies, 1)
    for member in fresh.values():
        assert sum(len(ps) for ps in member.active_tasks.values()) == 4
        # A standby never where the same task is active.
        for sub, ps in member.standby_tasks.items():
            assert not ps & member.active_tasks.get(sub, frozenset())
    assert sum(len(ps) for m in fresh.values() for ps in m.standby_tasks.values()) == 4
    # A third member: the first two keep what they can, the newcomer takes from both.
    previous = {m: StreamsMemberSpec(f"p{m[1]}", a.active_tasks, a.standby_tasks) for m, a in fresh.items()}
    again = assign({**previous, "m3": StreamsMemberSpec("p3")}, subtopologies, 0)
    for member_id in ("m1", "m2"):
        for sub, ps in again[member_id].active_tasks.items():
            assert ps <= fresh[member_id].active_tasks[sub]
    assert sum(len(ps) for ps in again["m3"].active_tasks.values()) == 2


def test_standby_replicas_go_to_the_other_process() -> None:
    s = Streams(GroupConfig(streams_num_standby_replicas=1, streams_initial_rebalance_delay_ms=0,
                            streams_assignment_interval_ms=0))
    s.topics.create("input", 2)
    s.hb("a", 0)
    s.create_internal_topics()
    s.hb("b", 0)
    # A few rounds of heartbeats, each member reporting what it holds: revocations, then the tasks released.
    for _ in range(4):
        for member_id in ("a", "b"):
            member = s.group().members[member_id]
            s.hb(member_id, member.member_epoch, owned={sub: sorted(ps) for sub, ps in
                                                        member.assigned.active_task_set().items()})
    a, b = s.group().members["a"].assigned, s.group().members["b"].assigned
    # The changelog's sub-topology (1) is stateful: each of its tasks is active on one process, standby on the
    # other; the stateless sub-topology (0) has no standbys.
    assert set(a.standby) | set(b.standby) == {"1"}
    for sub_task in range(2):
        holders = [m for m, tasks in (("a", a), ("b", b)) if sub_task in tasks.active.get("1", {})]
        standbys = [m for m, tasks in (("a", a), ("b", b)) if sub_task in tasks.standby.get("1", frozenset())]
        assert len(holders) == 1 and len(standbys) == 1 and holders != standbys
    described = s.describe("app")[0]
    assert described["group_state"] == "Stable"
    assert sorted(t["subtopology_id"] for m in described["members"] for t in m["assignment"]["standby_tasks"]) == [
        "1", "1"]
