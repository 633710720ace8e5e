"""Running a partition creation (kemu.broker.creation) a step at a time, yielding to the event loop between
steps, so a 10,000-partition CreateTopics leaves other connections answered while its logs are made."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

import trio

from kemu.broker.broker import Broker
from kemu.broker.creation import PartitionCreation

T = TypeVar("T")

# Kafka's controller applies metadata changes one after another, so a CreatePartitions sent while another
# one on the same topic is still making logs is planned against the topic as the first leaves it (and gets
# INVALID_PARTITIONS "Topic already has N partitions." if it asks for no more). Creations queue here, per
# broker core, planned only when the one before has finished; requests that create nothing never wait.
_queues: weakref.WeakKeyDictionary[Broker, trio.Lock] = weakref.WeakKeyDictionary()


async def create(broker: Broker, plan: Callable[[], tuple[T, PartitionCreation]]) -> T:
    """Plan (`plan()` returns the outcomes and the creation) once no other creation is under way, then run
    the creation to its end; the outcomes."""
    queue = _queues.get(broker)
    if queue is None:
        queue = _queues[broker] = trio.Lock()
    async with queue:
        outcomes, creation = plan()
        await _run(creation)
    return outcomes


async def _run(creation: PartitionCreation) -> None:
    # Shielded: once planned, the creation completes even if the client goes away (as Kafka's controller
    # does), and its names are released whatever happens.
    with trio.CancelScope(shield=True):
        try:
            while not creation.step():
                await trio.lowlevel.checkpoint()
        except BaseException:
            creation.abandon()
            raise
        creation.finish()
