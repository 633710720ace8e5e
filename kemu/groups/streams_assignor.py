"""Kafka's sticky task assignor for streams groups (KIP-1071): StickyTaskAssignor and its ProcessState.

Tasks are (sub-topology, partition) pairs. Members are grouped by process (a Kafka Streams instance runs one
member per stream thread); load is a process's tasks per member. Active tasks go back first to the member
that had them (within a per-member quota), then to a member that had them as standby, then, sorted by
sub-topology so that a fresh assignment is range-like, each to the least loaded process's least loaded member.
Standby replicas (`num.standby.replicas`) of stateful tasks go to a process that holds no copy of the task:
its previous active owner, a previous standby owner, else the least loaded process.

Ties are broken as Kafka breaks them: by the order of its HashMaps (`java_hash_order`) and by the binary heap
of java.util.PriorityQueue (`_JavaPriorityQueue`), so that kemu hands out the assignment Kafka would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar

from kemu.hashing import java_hash_map_order, java_hash_order, java_string_hash

T = TypeVar("T")

TaskMap = Mapping[str, frozenset[int]]


class TaskId(NamedTuple):
    subtopology_id: str
    partition: int


@dataclass(frozen=True, slots=True)
class StreamsMemberSpec:
    """What the assignor knows of a member: its process, and its tasks in the last target assignment."""

    process_id: str
    active_tasks: TaskMap = field(default_factory=dict)
    standby_tasks: TaskMap = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SubtopologySpec:
    number_of_tasks: int
    stateful: bool


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    active_tasks: dict[str, frozenset[int]]
    standby_tasks: dict[str, frozenset[int]]


class TaskAssignorError(Exception):
    """Kafka's TaskAssignorException; the coordinator answers UNKNOWN_SERVER_ERROR."""


class _JavaPriorityQueue(Generic[T]):
    """java.util.PriorityQueue's binary heap (siftUp on offer, siftDown of the last element on poll): its
    order among equal elements is not heapq's."""

    def __init__(self, compare: Callable[[T, T], int]) -> None:
        self._compare = compare
        self._queue: list[T] = []

    def __len__(self) -> int:
        return len(self._queue)

    def offer(self, item: T) -> None:
        queue = self._queue
        queue.append(item)
        k = len(queue) - 1
        while k > 0:
            parent = (k - 1) >> 1
            if self._compare(item, queue[parent]) >= 0:
                break
            queue[k] = queue[parent]
            k = parent
        queue[k] = item

    def poll(self) -> T | None:
        queue = self._queue
        if not queue:
            return None
        result = queue[0]
        last = queue.pop()
        size = len(queue)
        if size:
            k = 0
            half = size >> 1
            while k < half:
                child = 2 * k + 1
                right = child + 1
                if right < size and self._compare(queue[child], queue[right]) > 0:
                    child = right
                if self._compare(last, queue[child]) <= 0:
                    break
                queue[k] = queue[child]
                k = child
            queue[k] = last
        return result


def _compare(a: float, b: float) -> int:
    return (a > b) - (a < b)


class _MemberLoad:
    """A member's entry in its process's heap of members by task count (Kafka's copied Map.Entry)."""

    __slots__ = ("member_id", "count")

    def __init__(self, member_id: str, count: int) -> None:
        self.member_id = member_id
        self.count = count


class _ProcessState:
    """Kafka's ProcessState: one Streams instance's members, their task counts and the tasks it holds."""

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.capacity = 0
        self.load = float("inf")
        self.task_count = 0
        # Kafka's HashMaps: member ids in insertion order here, iterated in Java's order where it matters.
        self.member_task_counts: dict[str, int] = {}
        self.active: dict[str, set[TaskId]] = {}
        self.standby: dict[str, set[TaskId]] = {}
        self.tasks: set[TaskId] = set()
        self._members_by_load: _JavaPriorityQueue[_MemberLoad] | None = None

    def add_member(self, member_id: str) -> None:
        self.member_task_counts[member_id] = 0
        self.capacity += 1
        self._compute_load()

    def _compute_load(self) -> None:
        self.load = -1.0 if self.capacity <= 0 else self.task_count / self.capacity

    def has_task(self, task: TaskId) -> bool:
        return task in self.tasks

    def add_task(self, member_id: str, task: TaskId, active: bool) -> int:
        count = self._add(member_id, task, active)
        # Kafka drops the member heap here: it cannot reorder it for a task given to a chosen member.
        self._members_by_load = None
        return count

    def _add(self, member_id: str, task: TaskId, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        count = self.member_task_counts[member_id] + 1
        self.member_task_counts[member_id] = count
        self._compute_load()
        return count

    def add_task_to_least_loaded_member(self, task: TaskId, active: bool) -> int:
        if not self.member_task_counts:
            return -1
        if len(self.member_task_counts) == 1:
            return self._add(next(iter(self.member_task_counts)), task, active)
        if self._members_by_load is None:
            heap: _JavaPriorityQueue[_MemberLoad] = _JavaPriorityQueue(lambda a, b: _compare(a.count, b.count))
            for member_id in java_hash_map_order(self.member_task_counts):
                heap.offer(_MemberLoad(member_id, self.member_task_counts[member_id]))
            self._members_by_load = heap
        entry = self._members_by_load.poll()
        if entry is None:
            raise TaskAssignorError(f"No members available to assign task {task}")
        entry.count = self._add(entry.member_id, task, active)
        self._members_by_load.offer(entry)
        return entry.count


class _Member(NamedTuple):
    process_id: str
    member_id: str


def _tasks_per_member(tasks: int, members: int) -> int:
    if members == 0:
        return 0
    return tasks // members + (1 if tasks % members else 0)


class StickyTaskAssignor:
    """One assignment run (Kafka keeps its state in a LocalState for the length of `assign`)."""

    name = "sticky"

    def __init__(self, members: Mapping[str, StreamsMemberSpec], subtopologies: Mapping[str, SubtopologySpec],
                 num_standby_replicas: int) -> None:
        """`members` in the order Kafka's TargetAssignmentBuilder put them in its HashMap; `subtopologies` by id."""
        self.standby_replicas = num_standby_replicas
        self.subtopologies = {sub_id: subtopologies[sub_id] for sub_id in sorted(subtopologies)}
        self.member_ids = java_hash_map_order(members)
        total_active = sum(s.number_of_tasks for s in self.subtopologies.values())
        total = total_active + sum(s.number_of_tasks * num_standby_replicas
                                   for s in self.subtopologies.values() if s.stateful)
        self.total_active_tasks = total_active
        self.total_tasks = total
        self.members_with_active_capacity = len(members)
        self.members_with_capacity = len(members)
        self.active_per_member = _tasks_per_member(total_active, len(members))
        self.tasks_per_member = _tasks_per_member(total, len(members))
        self.processes: dict[str, _ProcessState] = {}
        self.prev_active: dict[TaskId, _Member] = {}
        self.prev_standby: dict[TaskId, list[_Member]] = {}
        for member_id in self.member_ids:
            spec = members[member_id]
            member = _Member(spec.process_id, member_id)
            self.processes.setdefault(spec.process_id, _ProcessState(spec.process_id)).add_member(member_id)
            for sub_id, partitions in spec.active_tasks.items():
                for partition in partitions:
                    self.prev_active[TaskId(sub_id, partition)] = member
            for sub_id, partitions in spec.standby_tasks.items():
                for partition in partitions:
                    self.prev_standby.setdefault(TaskId(sub_id, partition), []).append(member)
        # Kafka's `new HashMap<>(members)` of processes: its values are the processes in that order.
        self.process_order = java_hash_order(list(self.processes), java_string_hash, sized=len(members))

    def assign(self) -> dict[str, MemberAssignment]:
        self._assign_active(self._task_ids(active=True))
        if self.standby_replicas > 0:
            self._assign_standby(self._task_ids(active=False))
        active: dict[str, set[TaskId]] = {}
        standby: dict[str, set[TaskId]] = {}
        for process in self.processes.values():
            for member_id, tasks in process.active.items():
                active.setdefault(member_id, set()).update(tasks)
            for member_id, tasks in process.standby.items():
                standby.setdefault(member_id, set()).update(tasks)
        return {member_id: MemberAssignment(_compacted(active.get(member_id, set())),
                                            _compacted(standby.get(member_id, set())))
                for member_id in self.member_ids}

    def _task_ids(self, active: bool) -> list[TaskId]:
        return [TaskId(sub_id, partition) for sub_id, sub in self.subtopologies.items() if active or sub.stateful
                for partition in range(sub.number_of_tasks)]

    def _process_queue(self) -> _JavaPriorityQueue[_ProcessState]:
        queue: _JavaPriorityQueue[_ProcessState] = _JavaPriorityQueue(lambda a, b: _compare(a.load, b.load))
        for process_id in self.process_order:
            queue.offer(self.processes[process_id])
        return queue

    def _took_active(self, count: int) -> None:
        """Kafka's maybeUpdateActiveTasksPerMember and maybeUpdateTotalTasksPerMember after an active task."""
        if count == self.active_per_member:
            self.members_with_active_capacity -= 1
            self.total_active_tasks -= count
            self.active_per_member = _tasks_per_member(self.total_active_tasks, self.members_with_active_capacity)
        self._took_task(count)

    def _took_task(self, count: int) -> None:
        if count == self.tasks_per_member:
            self.members_with_capacity -= 1
            self.total_tasks -= count
            self.tasks_per_member = _tasks_per_member(self.total_tasks, self.members_with_capacity)

    def _assign_active(self, tasks: list[TaskId]) -> None:
        # The current assignment pairs the same partitions (range-like): partition first.
        tasks.sort(key=lambda t: (t.partition, t.subtopology_id))
        remaining = []
        for task in tasks:  # 1. back to the member that had it
            prev = self.prev_active.get(task)
            if prev is not None and self._under_active_quota(prev):
                self._took_active(self.processes[prev.process_id].add_task(prev.member_id, task, True))
            else:
                remaining.append(task)
        tasks, remaining = remaining, []
        for task in tasks:  # 2. to a member that had it as a standby
            prev = self._prev_member_with_least_load(self.prev_standby.get(task), None)
            if prev is not None and self._under_active_quota(prev):
                self._took_active(self.processes[prev.process_id].add_task(prev.member_id, task, True))
            else:
                remaining.append(task)
        remaining.sort(key=lambda t: (t.subtopology_id, t.partition))
        queue = self._process_queue()
        for task in remaining:  # 3. the rest to the least loaded process
            process = queue.poll()
            if process is None:
                raise TaskAssignorError(f"No process available to assign active task {task}.")
            count = process.add_task_to_least_loaded_member(task, True)
            if count == -1:
                raise TaskAssignorError(f"No member available to assign active task {task}.")
            self._took_active(count)
            queue.offer(process)

    def _under_active_quota(self, member: _Member) -> bool:
        return self.processes[member.process_id].member_task_counts[member.member_id] < self.active_per_member

    def _under_task_quota(self, member: _Member) -> bool:
        return self.processes[member.process_id].member_task_counts[member.member_id] < self.tasks_per_member

    def _prev_member_with_least_load(self, members: list[_Member] | None, task: TaskId | None) -> _Member | None:
        if not members:
            return None
        candidate = members[0]
        candidate_process = self.processes[candidate.process_id]
        process_load = candidate_process.load
        member_load = candidate_process.member_task_counts[candidate.member_id]
        for member in members[1:]:
            process = self.processes[member.process_id]
            if process.load < process_load and (task is None or not process.has_task(task)):
                load = process.member_task_counts[member.member_id]
                if load < member_load:
                    process_load, member_load, candidate = process.load, load, member
        # Kafka tests the first candidate's process here, whichever member won.
        if task is None or not candidate_process.has_task(task):
            return candidate
        return None

    def _assign_standby(self, tasks: list[TaskId]) -> None:
        to_least_loaded: list[tuple[TaskId, int]] = []
        tasks.sort(key=lambda t: (t.partition, t.subtopology_id), reverse=True)
        for task in tasks:
            for i in range(self.standby_replicas):
                prev_active = self.prev_active.get(task)
                if prev_active is not None:
                    process = self.processes[prev_active.process_id]
                    if not process.has_task(task) and self._under_task_quota(prev_active):
                        self._took_task(process.add_task(prev_active.member_id, task, False))
                        continue
                prev = self._prev_member_with_least_load(self.prev_standby.get(task), task)
                if prev is not None and self._under_task_quota(prev):
                    self._took_task(self.processes[prev.process_id].add_task(prev.member_id, task, False))
                    continue
                to_least_loaded.append((task, self.standby_replicas - i))
                break
        to_least_loaded.sort(key=lambda entry: (entry[0].subtopology_id, entry[0].partition), reverse=True)
        queue = self._process_queue()
        for task, replicas in to_least_loaded:
            for _ in range(replicas):
                if not self._standby_to_least_loaded(queue, task):
                    break  # Kafka logs that there is not enough capacity for the standby replicas

    def _standby_to_least_loaded(self, queue: _JavaPriorityQueue[_ProcessState], task: TaskId) -> bool:
        process = queue.poll()
        if process is None:
            return False
        found = False
        if not process.has_task(task):
            count = process.add_task_to_least_loaded_member(task, False)
            if count != -1:
                found = True
                self._took_task(count)
        elif len(queue):
            found = self._standby_to_least_loaded(queue, task)
        queue.offer(process)
        return found


def _compacted(tasks: set[TaskId]) -> dict[str, frozenset[int]]:
    result: dict[str, set[int]] = {}
    for task in tasks:
        result.setdefault(task.subtopology_id, set()).add(task.partition)
    return {sub_id: frozenset(partitions) for sub_id, partitions in result.items()}


def assign(members: Mapping[str, StreamsMemberSpec], subtopologies: Mapping[str, SubtopologySpec],
           num_standby_replicas: int) -> dict[str, MemberAssignment]:
    """The sticky assignor's new target assignment for every member."""
    return StickyTaskAssignor(members, subtopologies, num_standby_replicas).assign()
