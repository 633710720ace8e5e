"""Running a partition creation (kemu.broker.creation) a step at a time, yielding to the event loop between
steps, so a 10,000-partition CreateTopics leaves other connections answered while its logs are made."""

from __future__ import annotations

import trio

from kemu.broker.creation import PartitionCreation


async def run_creation(creation: PartitionCreation) -> None:
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
