"""The client quota core (kemu.broker.client_quotas): Kafka's Rate over samples and the throttle time it
gives, the precedence a client's quota is found in, validation, filters and the store across a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from kemu.broker import client_quotas
from kemu.broker.client_quotas import (
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    Alteration,
    ClientQuotaStore,
    Op,
    QuotaError,
    Rate,
    Throttling,
    entity_of,
    java_map_order,
    request_order,
)
from kemu.broker.errors import ApiError
from kemu.hashing import java_hash_map_order
from kemu.wire.errors import ErrorCode

T0 = 1_700_000_000_000


def _set(store: ClientQuotaStore, parts: dict[str, str | None], **values: float) -> None:
    [(_, code, message)] = store.alter([Alteration(entity_of(parts), [Op(k, v) for k, v in values.items()])])
    assert (code, message) == (ErrorCode.NONE, None)


def test_a_rate_counts_at_least_samples_minus_one_windows() -> None:
    # Rate.windowSize: 0 ms elapsed is taken as 10 full windows of 1 s, so 11000 bytes at once are 1100 B/s.
    rate = Rate(samples=11, window_ms=1000)
    rate.record(11000, T0)
    assert rate.window_size_ms(T0) == 10_000
    assert rate.measure(T0) == pytest.approx(1100.0)
    # Past the 10 windows it is the time since the oldest sample's start, while that sample is kept.
    for second in range(1, 11):
        rate.record(0, T0 + second * 1000)
    assert rate.window_size_ms(T0 + 10_500) == 10_500
    assert rate.measure(T0 + 10_500) == pytest.approx(11000 / 10.5)


def test_samples_older_than_the_whole_window_are_forgotten() -> None:
    rate = Rate(samples=2, window_ms=1000)
    rate.record(5000, T0)
    assert rate.measure(T0 + 1999) > 0
    assert rate.measure(T0 + 2000) == 0.0  # purgeObsoleteSamples: the last event 2 windows ago


def test_the_throttle_time_brings_the_rate_back_to_the_quota(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    _set(store, {"client-id": "p"}, producer_byte_rate=1000)
    throttling = Throttling(store, samples=11, window_seconds=1)
    assert throttling.record(1, PRODUCER_BYTE_RATE, "ANONYMOUS", "p", 10_000, T0) == 0  # 1000 B/s: the quota
    # 1100 B/s over 10 s: (1100 - 1000) / 1000 * 10 s of window (QuotaUtils.throttleTime).
    assert throttling.record(1, PRODUCER_BYTE_RATE, "ANONYMOUS", "p", 1000, T0) == 1000
    # Another node counts on its own, another client id has no quota.
    assert throttling.record(2, PRODUCER_BYTE_RATE, "ANONYMOUS", "p", 10_000, T0) == 0
    assert throttling.record(1, PRODUCER_BYTE_RATE, "ANONYMOUS", "q", 10**9, T0) == 0
    # Taken back (a throttled fetch sends nothing), the next byte is within the quota again.
    throttling.unrecord(1, PRODUCER_BYTE_RATE, "ANONYMOUS", "p", 1000, T0)
    assert throttling.record(1, PRODUCER_BYTE_RATE, "ANONYMOUS", "p", 0, T0) == 0


def test_the_most_specific_quota_applies_and_is_shared_as_kafka_shares_it(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    throttling = Throttling(store, samples=11, window_seconds=1)
    levels: list[tuple[dict[str, str | None], tuple[str, str]]] = [
        ({"client-id": None}, ("", "c")),
        ({"client-id": "c"}, ("", "c")),
        ({"user": None}, ("u", "")),
        ({"user": None, "client-id": None}, ("u", "c")),
        ({"user": None, "client-id": "c"}, ("u", "c")),
        ({"user": "u"}, ("u", "")),
        ({"user": "u", "client-id": None}, ("u", "c")),
        ({"user": "u", "client-id": "c"}, ("u", "c")),
    ]
    assert throttling.resolve(CONSUMER_BYTE_RATE, "u", "c") is None
    for rank, (parts, shared) in enumerate(levels, start=1):
        _set(store, parts, consumer_byte_rate=100 * rank)
        assert throttling.resolve(CONSUMER_BYTE_RATE, "u", "c") == (100 * rank, *shared)
    # A key the closer entities lack comes from further down.
    assert throttling.resolve(PRODUCER_BYTE_RATE, "u", "c") is None
    _set(store, {"client-id": None}, producer_byte_rate=7)
    assert throttling.resolve(PRODUCER_BYTE_RATE, "u", "c") == (7, "", "c")
    assert throttling.max_in_window(CONSUMER_BYTE_RATE, "u", "c") == 800 * 10


def test_validation_as_the_controller_validates(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    cases: list[tuple[dict[str, str | None], str, float, str]] = [
        ({"user": "a", "ip": "10.0.0.1"}, "connection_creation_rate", 1,
         "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
        ({"ip": "nope"}, "connection_creation_rate", 1, "nope is not a valid IP or resolvable host."),
        ({"ip": None}, "producer_byte_rate", 1, "Invalid configuration key producer_byte_rate"),
        ({"user": "a"}, "producer_byte_rate", 1.5, "producer_byte_rate cannot be a fractional value."),
        ({"ip": "::1"}, "connection_creation_rate", 2.0**31, "Proposed value for connection_creation_rate is "
                                                             "too large for an INT."),
        ({"client-id": "a"}, "request_percentage", 0, "Quota request_percentage must be greater than 0"),
        ({"group": "a"}, "producer_byte_rate", 1, "Unhandled client quota entity type: group"),
        ({"user": ""}, "producer_byte_rate", 1, "Empty user not supported"),
    ]
    for parts, key, value, message in cases:
        [(_, code, got)] = store.alter([Alteration(entity_of(parts), [Op(key, value)])])
        assert (code, got) == (ErrorCode.INVALID_REQUEST, message)
    assert not store
    [(_, code, _)] = store.alter([Alteration(entity_of({"user": "a"}), [Op("request_percentage", 0.5)])],
                                 validate_only=True)
    assert code == ErrorCode.NONE and not store


def test_a_duplicate_entity_is_refused_but_its_first_changes_stay(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    entity, shown = request_order([("user", "a"), ("client-id", "b")])
    assert shown == [("client-id", "b"), ("user", "a")]
    results = store.alter([Alteration(entity, [Op(PRODUCER_BYTE_RATE, 5)], shown),
                           Alteration(entity, [Op(PRODUCER_BYTE_RATE, 6)], shown)])
    assert results == [(shown, ErrorCode.INVALID_REQUEST,
                        "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=b, user=a})")]
    assert store.get(entity) == {PRODUCER_BYTE_RATE: 5.0}


def test_removal_and_the_store_across_a_restart(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    _set(store, {"user": None}, producer_byte_rate=10, consumer_byte_rate=20)
    _set(store, {"ip": "192.0.2.1"}, connection_creation_rate=3)
    again = ClientQuotaStore(tmp_path)
    assert again.get(entity_of({"user": None})) == {PRODUCER_BYTE_RATE: 10.0, CONSUMER_BYTE_RATE: 20.0}
    assert list(again.get(entity_of({"user": None}))) == list(store.get(entity_of({"user": None})))
    again.alter([Alteration(entity_of({"user": None}), [Op(PRODUCER_BYTE_RATE, None), Op(CONSUMER_BYTE_RATE, None)]),
                 Alteration(entity_of({"ip": "192.0.2.1"}), [Op("unknown_key", None)])])
    assert ClientQuotaStore(tmp_path).entities() == [entity_of({"ip": "192.0.2.1"})]


def test_filters(tmp_path: Path) -> None:
    store = ClientQuotaStore(tmp_path)
    _set(store, {"user": "a"}, producer_byte_rate=1)
    _set(store, {"user": "a", "client-id": "x"}, producer_byte_rate=2)
    _set(store, {"user": None, "client-id": "x"}, producer_byte_rate=3)
    _set(store, {"client-id": "x"}, producer_byte_rate=4)

    def found(components: list[tuple[str, int, str | None]], strict: bool = False) -> list[float]:
        return sorted(values[PRODUCER_BYTE_RATE] for _, values in store.describe(
            [{"entity_type": t, "match_type": m, "match": n} for t, m, n in components], strict))

    assert found([("user", 0, "a")]) == [1, 2]
    assert found([("user", 0, "a")], strict=True) == [1]
    assert found([("user", 2, None), ("client-id", 0, "x")]) == [2, 3]
    assert found([("user", 1, None)]) == [3]
    assert found([("client-id", 0, "x")], strict=True) == [4]
    assert found([]) == [1, 2, 3, 4]
    assert found([], strict=True) == []
    with pytest.raises(QuotaError) as refused:
        store.describe([{"entity_type": "ip", "match_type": 2, "match": None},
                        {"entity_type": "user", "match_type": 1, "match": None}], False)
    assert refused.value.code == ErrorCode.INVALID_REQUEST


def test_java_map_order_follows_the_capacity_it_grew_to() -> None:
    assert java_map_order(["a", "b", "c"]) == java_hash_map_order(["a", "b", "c"])
    # A HashMap(2) of two keys grows to 4 buckets: "ip" (bucket 3) then comes after "user" (bucket 1).
    assert java_map_order(["ip", "user"], 2) == ["user", "ip"]
    assert java_map_order(["ip", "user"]) == ["ip", "user"]


def test_more_changes_than_the_controller_takes_refuse_the_whole_request(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_quotas, "MAX_RECORDS_PER_USER_OP", 2)
    store = ClientQuotaStore(tmp_path)

    def users(*names: str, value: float | None = 5) -> list[Alteration]:
        return [Alteration(entity_of({"user": name}), [Op(PRODUCER_BYTE_RATE, value)]) for name in names]

    for validate_only in (False, True):
        with pytest.raises(ApiError) as refused:
            store.alter(users("a", "b", "c"), validate_only)
        assert (refused.value.code, refused.value.message) == (ErrorCode.POLICY_VIOLATION,
                                                               "Unable to perform excessively large batch operation.")
    assert store.get(entity_of({"user": "a"})) == {}
    # A refused entity and a value set again take no record.
    bad = Alteration(entity_of({"user": "d"}), [Op(PRODUCER_BYTE_RATE, -1)])
    assert [code for _, code, _ in store.alter([*users("a", "b"), bad])].count(ErrorCode.NONE) == 2
    assert {code for _, code, _ in store.alter(users("a", "b", "c"))} == {ErrorCode.NONE}
    with pytest.raises(ApiError):
        store.alter(users("a", "b", "c", value=None))  # three removals
