"""The log cleaner in a running broker: its own timer (log.cleaner.backoff.ms), the test power that runs it
now, topic configs changed on a live topic, and the internal topics compacted like any other."""

from __future__ import annotations

from kemu.admin.configs import ConfigChange, OpType, ResourceChange, alter
from kemu.log.log_cleaner import CLEANER_OFFSET_CHECKPOINT
from kemu.testing import Broker

TOPIC = 2  # the ConfigResource type of a topic
ROLL = {"cleanup.policy": "compact", "segment.ms": "1000"}


def updates(broker: Broker, topic: str, rounds: int, keys: int = 3) -> None:
    """`rounds` rounds of one value per key, each round in a segment of its own (segment.ms passes between)."""
    for r in range(rounds):
        for k in range(keys):
            broker.produce(topic, f"v{r}", key=f"k{k}")
        broker.advance(1.5)


def test_the_cleaner_timer_compacts_a_dirty_log() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("prices", config=ROLL)
        updates(broker, "prices", rounds=4)
        broker.produce("prices", "rolls-the-last-segment", key="other")
        assert len(broker.records("prices")) == 13
        broker.advance(16)  # log.cleaner.backoff.ms (15 s) passed: the cleaner's timer ran
        assert [(r.key, r.value) for r in broker.records("prices")] == [
            (b"k0", b"v3"), (b"k1", b"v3"), (b"k2", b"v3"), (b"other", b"rolls-the-last-segment")]
        checkpoint = (broker.data_dir / CLEANER_OFFSET_CHECKPOINT).read_text().splitlines()
        assert checkpoint[:2] == ["0", "1"] and checkpoint[2].startswith("prices 0 ")


def test_clean_logs_ignores_the_dirty_ratio_and_configs_apply_live() -> None:
    with Broker(virtual_clock=True) as broker:
        broker.create_topic("prices", config={**ROLL, "min.cleanable.dirty.ratio": "0.99"})
        updates(broker, "prices", rounds=2)
        broker.produce("prices", "x", key="other")
        broker.clean_logs("prices")
        updates(broker, "prices", rounds=1)
        broker.produce("prices", "y", key="other")
        broker.advance(16)
        assert len(broker.records("prices")) == 3 + 3 + 1 + 1  # below the ratio: the timer leaves it
        change = ResourceChange(TOPIC, "prices", [ConfigChange("min.cleanable.dirty.ratio", OpType.SET, "0.01")])
        [outcome] = broker.call(lambda: alter(broker.core, [change], validate_only=False, incremental=True))
        assert outcome.error.name == "NONE"
        broker.advance(16)
        # "other"'s newer value is in the active segment, which the cleaner never reads: x stays too.
        assert [(r.key, r.value) for r in broker.records("prices")] == [
            (b"other", b"x"), (b"k0", b"v0"), (b"k1", b"v0"), (b"k2", b"v0"), (b"other", b"y")]
