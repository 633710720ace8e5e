"""kemu.spark's option handling, without Spark: which partitions Spark's Kafka options select, how offset specs
parse, how maxOffsetsPerTrigger shares a trigger out, and the client configuration made of kafka.* options."""

from __future__ import annotations

import pytest

from kemu.spark import offsets, spark_kafka_options
from kemu.spark.options import consumer_config, producer_config
from kemu.testing import Broker

CLUSTER = {"orders": 3, "orders-eu": 2, "payments": 1, "__consumer_offsets": 50}


def test_exactly_one_way_of_choosing_partitions() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        offsets.selection({})
    with pytest.raises(ValueError, match="exactly one of"):
        offsets.selection({"subscribe": "orders", "assign": '{"orders": [0]}'})
    assert offsets.selection({"subscribe": "orders, payments,missing"}).choose(CLUSTER) == [
        ("orders", 0), ("orders", 1), ("orders", 2), ("payments", 0)]
    # A pattern matches whole names, as Java's Pattern.matches does, and never an internal topic.
    assert offsets.selection({"subscribepattern": "orders.*|__.*"}).choose(CLUSTER) == [
        ("orders", 0), ("orders", 1), ("orders", 2), ("orders-eu", 0), ("orders-eu", 1)]
    assert offsets.selection({"subscribePattern": "order"}).choose(CLUSTER) == []
    assert offsets.selection({"assign": '{"payments": [0], "orders": [2]}'}).choose(CLUSTER) == [
        ("orders", 2), ("payments", 0)]


def test_offset_specs_in_spark_precedence() -> None:
    assert offsets.starting({}, streaming=True).kind == "latest"
    assert offsets.starting({}, streaming=False).kind == "earliest"
    spec = offsets.starting({"startingOffsets": '{"orders": {"0": 23, "1": -2}}'}, streaming=True)
    assert spec == offsets.Spec("offsets", offsets={("orders", 0): 23, ("orders", 1): offsets.EARLIEST})
    both = {"startingTimestamp": "1000", "startingOffsetsByTimestamp": '{"orders": {"0": 5}}'}
    assert offsets.starting(both, streaming=True) == offsets.Spec("timestamp", every_timestamp=1000)
    with pytest.raises(ValueError, match="can't be latest for batch"):
        offsets.starting({"startingOffsets": "latest"}, streaming=False)
    with pytest.raises(ValueError, match="can't be earliest"):
        offsets.ending({"endingOffsets": '{"orders": {"0": -2}}'})
    with pytest.raises(ValueError, match="whole number"):
        offsets.starting({"startingTimestamp": "yesterday"}, streaming=True)


def test_stream_offsets_round_trip_as_spark_keeps_them() -> None:
    kept = {("orders", 1): 7, ("orders", 0): 3, ("payments", 0): 0}
    assert offsets.render_offsets(kept) == {"orders": {"0": 3, "1": 7}, "payments": {"0": 0}}
    assert offsets.read_offsets(offsets.render_offsets(kept)) == kept
    assert offsets.ranges({("a", 0): 2, ("a", 1): 5}, {("a", 0): 4, ("a", 1): 5, ("b", 0): 9}) == [(("a", 0), 2, 4)]


def test_max_offsets_per_trigger_is_shared_by_backlog() -> None:
    start = {("t", 0): 0, ("t", 1): 100, ("t", 2): 10}
    end = {("t", 0): 90, ("t", 1): 110, ("t", 2): 10}
    # 90 and 10 of a 100 backlog share 20: 18 and 2; the partition with nothing waiting stays put.
    assert offsets.rate_limit(20, start, end) == {("t", 0): 18, ("t", 1): 102, ("t", 2): 10}
    # A share below one rounds up, so a small partition is not starved by a large one.
    assert offsets.rate_limit(5, {("t", 0): 0, ("t", 1): 0}, {("t", 0): 1000, ("t", 1): 1}) == {
        ("t", 0): 4, ("t", 1): 1}
    assert offsets.rate_limit(1000, start, end) == end


def test_options_point_at_a_broker_and_configure_the_clients() -> None:
    with Broker() as broker:
        options = spark_kafka_options(broker)
        assert options == {"kafka.bootstrap.servers": broker.bootstrap_servers,
                           "kafka.isolation.level": "read_committed"}
    assert spark_kafka_options("h:1", read_committed=False)["kafka.isolation.level"] == "read_uncommitted"
    with pytest.raises(TypeError, match="no bootstrap address"):
        spark_kafka_options(42)  # type: ignore[arg-type]
    given = {"kafka.bootstrap.servers": "h:1", "kafka.isolation.level": "read_uncommitted",
             "kafka.linger.ms": "5", "subscribe": "orders"}
    assert consumer_config(given) == {"bootstrap.servers": "h:1", "isolation.level": "read_uncommitted",
                                      "linger.ms": "5"}
    assert consumer_config({"kafka.bootstrap.servers": "h:1"})["isolation.level"] == "read_committed"
    assert producer_config(given) == {"bootstrap.servers": "h:1", "linger.ms": "5"}
    with pytest.raises(ValueError, match="kafka.bootstrap.servers"):
        consumer_config({"subscribe": "orders"})
