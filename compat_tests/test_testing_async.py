"""The `kemu_broker` fixture from an asyncio test: aiokafka on the test's loop, and the handle's calls made
from that loop between the client's awaits (each a short handoff to the broker's own thread, which never
waits on the test's loop, so neither can hold the other up)."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from kemu.testing import Broker

TIMEOUT_S = 15


def test_aiokafka_and_the_handle_share_an_asyncio_loop(kemu_broker: Broker) -> None:
    async def main() -> tuple[list[bytes], list[bytes | None]]:
        kemu_broker.create_topic("orders")
        producer = AIOKafkaProducer(bootstrap_servers=kemu_broker.bootstrap_servers)
        await producer.start()
        try:
            await producer.send_and_wait("orders", b"from aiokafka", partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer("orders", bootstrap_servers=kemu_broker.bootstrap_servers,
                                    auto_offset_reset="earliest", group_id=None)
        await consumer.start()
        try:
            kemu_broker.produce("orders", "from the handle")  # while the consumer's fetches run on this loop
            seen: list[bytes] = []
            async with asyncio.timeout(TIMEOUT_S):
                async for message in consumer:
                    seen.append(message.value)
                    if len(seen) == 2:
                        break
        finally:
            await consumer.stop()
        return seen, [r.value for r in kemu_broker.records("orders")]

    seen, stored = asyncio.run(main())
    assert seen == [b"from aiokafka", b"from the handle"]
    assert stored == [b"from aiokafka", b"from the handle"]
