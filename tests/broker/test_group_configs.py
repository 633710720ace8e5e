"""Group configs in the broker core: Kafka's validation order and messages, what a group runs with when the
broker's bounds move after it set a value, and the overrides kept across a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.broker.broker_configs import ConfigLayers, ConfigSource
from kemu.broker.group_configs import GroupConfigStore, describe, effective_int, validate
from kemu.log.config import InvalidConfigError

DEFAULTS = ConfigLayers({}, {}, {})


@pytest.mark.parametrize(("overrides", "message"), [
    ({"nope": "1"}, "Unknown group config name: nope"),
    ({"consumer.session.timeout.ms": "x"},
     "Invalid value x for configuration consumer.session.timeout.ms: Not a number of type INT"),
    ({"consumer.session.timeout.ms": "70000"},
     "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"),
    # The heartbeat's bounds are checked before the session's, whatever the request's order.
    ({"consumer.session.timeout.ms": "70000", "consumer.heartbeat.interval.ms": "1"},
     "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
    ({"share.session.timeout.ms": "45000", "share.heartbeat.interval.ms": "15000"}, None),
    ({"consumer.session.timeout.ms": "45000", "consumer.heartbeat.interval.ms": "15000"}, None),
    ({"streams.session.timeout.ms": "45000", "streams.heartbeat.interval.ms": "15000"}, None),
    ({"share.auto.offset.reset": "by_duration:P1DT2H"}, None),
    ({"share.auto.offset.reset": "by_duration:PT"},
     "Invalid value by_duration:PT for configuration share.auto.offset.reset: Invalid value `by_duration:PT` for "
     "configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
     "'by_duration:<PnDTnHnMn.nS>'."),
])
def test_validation(overrides: dict[str, str], message: str | None) -> None:
    if message is None:
        validate(overrides, DEFAULTS)
        return
    with pytest.raises(InvalidConfigError) as refused:
        validate(overrides, DEFAULTS)
    assert str(refused.value) == message


def test_session_must_exceed_heartbeat_once_both_are_in_bounds() -> None:
    with pytest.raises(InvalidConfigError, match="^share.session.timeout.ms must be greater than "
                                                 "share.heartbeat.interval.ms$"):
        validate({"share.session.timeout.ms": "45000", "share.heartbeat.interval.ms": "45000"},
                 ConfigLayers({}, {}, {"group.share.max.heartbeat.interval.ms": "60000"}))


def test_a_value_outside_moved_bounds_is_clamped() -> None:
    overrides = {"consumer.session.timeout.ms": "50000", "share.record.lock.duration.ms": "20000"}
    validate(overrides, DEFAULTS)
    assert effective_int("consumer.session.timeout.ms", overrides, DEFAULTS) == 50000
    lowered = ConfigLayers({}, {}, {"group.consumer.max.session.timeout.ms": "48000",
                                    "group.share.min.record.lock.duration.ms": "25000"})
    assert effective_int("consumer.session.timeout.ms", overrides, lowered) == 48000
    assert effective_int("share.record.lock.duration.ms", overrides, lowered) == 25000
    assert effective_int("consumer.heartbeat.interval.ms", overrides, lowered) == 5000  # the broker's


def test_describe_shows_an_override_over_its_broker_default() -> None:
    entries = {e.name: e for e in describe({"consumer.session.timeout.ms": " 50000 "}, DEFAULTS, True, False)}
    session = entries["consumer.session.timeout.ms"]
    assert (session.value, session.source) == ("50000", ConfigSource.GROUP_CONFIG)
    assert [(s.name, s.value, s.source) for s in session.synonyms] == [
        ("consumer.session.timeout.ms", "50000", ConfigSource.GROUP_CONFIG),
        ("group.consumer.session.timeout.ms", "45000", ConfigSource.DEFAULT_CONFIG)]
    reset = entries["share.auto.offset.reset"]
    assert (reset.value, reset.source, [s.name for s in reset.synonyms]) == (
        "latest", ConfigSource.DEFAULT_CONFIG, ["share.auto.offset.reset"])


def test_overrides_are_kept_in_the_data_directory(tmp_path: Path) -> None:
    store = GroupConfigStore(tmp_path)
    store.replace("g1", {"share.isolation.level": "read_committed"})
    store.replace("g2", {"consumer.session.timeout.ms": "50000"})
    store.replace("g2", {})
    again = GroupConfigStore(tmp_path)
    assert again.groups() == ["g1"]
    assert again.get("g1") == {"share.isolation.level": "read_committed"}
    assert again.get("g2") == {}
