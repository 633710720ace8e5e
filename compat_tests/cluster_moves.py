"""The disturbances the cluster tests put a running client through, and what they measure: leaders moved,
a coordinator moved, a broker stopped and started again, in a fixed rotation, each one timed until the client
had every partition acknowledged again (its recovery time)."""

from __future__ import annotations

import bisect
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from compat_tests.polling import wait_for
from kemu.testing import Broker

BROKERS = 3


@dataclass
class Progress:
    """What a client reports as it runs: when each partition's acknowledgements came."""

    partitions: int
    acks: dict[int, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def acked(self) -> int:
        with self.lock:
            return sum(len(times) for times in self.acks.values())

    def ack(self, partition: int) -> None:
        with self.lock:
            self.acks.setdefault(partition, []).append(time.monotonic())

    def recovered_at(self, moment: float) -> float | None:
        """When every partition had been acknowledged again after `moment` (None: not yet)."""
        with self.lock:
            firsts = []
            for index in range(self.partitions):
                times = self.acks.get(index, [])
                at = bisect.bisect_right(times, moment)
                if at == len(times):
                    return None
                firsts.append(times[at])
            return max(firsts)


@dataclass
class Move:
    what: str
    recovery_s: float


def rotation(broker: Broker, topic: str, partitions: int, *, group: str | None = None,
             transactional_id: str | None = None) -> list[tuple[str, Callable[[], None]]]:
    """One round of disturbances: every partition's leader to the next replica, the coordinator(s) to
    another node, broker 2 stopped, and started again."""

    def move_leaders() -> None:
        for index in range(partitions):
            broker.move_leader(topic, index, 1 + broker.leader(topic, index) % BROKERS)

    def move_coordinators() -> None:
        for kind, key in (("group", group), ("transaction", transactional_id)):
            if key is not None:
                broker.move_coordinator(kind, key, 1 + broker.coordinator(kind, key) % BROKERS)

    steps = [("leaders moved", move_leaders)]
    if group is not None or transactional_id is not None:
        steps.append(("coordinators moved", move_coordinators))
    steps += [("broker 2 stopped", lambda: broker.stop_broker(2)), ("broker 2 started", lambda: broker.start_broker(2))]
    return steps


def disturb(broker: Broker, progress: Progress, steps: list[tuple[str, Callable[[], None]]], rounds: int,
            *, timeout_s: float = 60.0) -> list[Move]:
    """Run the steps `rounds` times; after each, time how long until the client had every partition
    acknowledged again (its recovery)."""
    # recovered_at gives monotonic times, never 0, so wait_for's truthiness test is "acknowledged".
    wait_for(lambda: progress.recovered_at(0.0), what="the client's first acknowledgement on every partition",
             timeout=timeout_s)
    moves = []
    for _ in range(rounds):
        for what, step in steps:
            moment = time.monotonic()
            step()
            recovered = wait_for(functools.partial(progress.recovered_at, moment),
                                 what=f"every partition acknowledged after '{what}'", timeout=timeout_s)
            moves.append(Move(what, recovered - moment))
    return moves



def report(name: str, moves: list[Move], records: int, lost: int, duplicated: int) -> str:
    worst = max(m.recovery_s for m in moves)
    lines = [f"{name}: {len(moves)} moves, {records} records, {lost} lost, {duplicated} duplicated, "
             f"recovery max {worst * 1000:.0f} ms"]
    lines += [f"  {m.what}: {m.recovery_s * 1000:.0f} ms" for m in moves]
    return "\n".join(lines)
