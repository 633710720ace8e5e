"""Planning and running a partition creation (kemu.broker.creation) a step at a time, yielding to the event
loop between steps (paced: kemu.handlers._pacing), so a 10,000-topic CreateTopics leaves other connections
answered while it is checked and its logs are made."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Protocol, TypeVar

import trio

from kemu.broker.broker import BrokerCore
from kemu.broker.creation import PartitionCreation
from kemu.handlers._pacing import Pacer

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Planning(Protocol[T_co]):
    """A plan made a slice at a time (kemu.admin.topics.TopicPlan): `step` until it says done, then `result`."""

    @property
    def creation(self) -> PartitionCreation: ...

    def step(self) -> bool: ...

    def result(self) -> tuple[T_co, PartitionCreation]: ...

# Kafka's controller applies metadata changes one after another, so a CreatePartitions sent while another
# one on the same topic is still making logs is planned against the topic as the first leaves it (and gets
# INVALID_PARTITIONS "Topic already has N partitions." if it asks for no more). Creations queue here, per
# broker core, planned only when the one before has finished; requests that create nothing never wait.
_queues: weakref.WeakKeyDictionary[BrokerCore, trio.Lock] = weakref.WeakKeyDictionary()


def _queue(broker: BrokerCore) -> trio.Lock:
    queue = _queues.get(broker)
    if queue is None:
        queue = _queues[broker] = trio.Lock()
    return queue


def creations_paused(broker: BrokerCore) -> trio.Lock:
    """Held (`async with`) while no creation may run: a DeleteTopics deleting logs a slice at a time, so
    that a topic created under a deleted one's name never opens the directory still being emptied."""
    return _queue(broker)


async def create(broker: BrokerCore, plan: Callable[[], tuple[T, PartitionCreation] | Planning[T]]) -> T:
    """Plan (`plan()` returns the outcomes and the creation, or a Planning that makes them a slice at a time)
    once no other creation is under way, then run the creation to its end; the outcomes."""
    async with _queue(broker):
        planned = plan()
        outcomes, creation = planned if isinstance(planned, tuple) else await _planned(planned)
        await _run(creation)
    if isinstance(outcomes, list):
        creation.mark_failed(outcomes)
    return outcomes


async def _planned(planning: Planning[T]) -> tuple[T, PartitionCreation]:
    # Shielded as the creation is: the names a slice reserved are released if anything fails.
    with trio.CancelScope(shield=True):
        pacer = Pacer()
        try:
            while not planning.step():
                await pacer.tick()
        except BaseException:
            planning.creation.abandon()
            raise
    return planning.result()


async def _run(creation: PartitionCreation) -> None:
    # Shielded: once planned, the creation completes even if the client goes away (as Kafka's controller
    # does), and its names are released whatever happens.
    with trio.CancelScope(shield=True):
        pacer = Pacer()
        try:
            while not creation.step():
                await pacer.tick()
        except BaseException:
            creation.abandon()
            raise
        creation.finish()
