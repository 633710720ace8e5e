"""The comparison itself, without brokers: a planted difference fails, an explained one passes, a stale entry
fails, and the normalisation numbers varying values so that their identity still counts."""

from __future__ import annotations

import pytest

from compat_tests.differential.compare import ABSENT, Difference, KnownDifference, check, differences, judge
from compat_tests.differential.normalise import normalise


def test_a_planted_difference_fails() -> None:
    kafka = {"topics": [{"name": "a", "error_code": 0}]}
    kemu = {"topics": [{"name": "a", "error_code": 37}]}
    with pytest.raises(AssertionError, match="topics/0/error_code: Kafka 0, kemu 37"):
        check("planted", kafka, kemu, entries=())


def test_a_missing_element_is_named() -> None:
    assert differences({"a": [1, 2]}, {"a": [1]}) == [Difference("a/1", 2, ABSENT)]
    assert differences({"a": 1}, {"a": 1, "b": 2}) == [Difference("b", ABSENT, 2)]
    assert differences({"a": 1}, {"a": True}) == [Difference("a", 1, True)]  # bool is not int here


def test_a_known_difference_passes_only_for_its_scenario_path_and_values() -> None:
    entry = KnownDifference(scenario="s.*", path="x/*", kemu=5, reason="because")
    verdict = check("s.one", {"x": {"a": 1}}, {"x": {"a": 5}}, entries=(entry,))
    assert [difference.path for difference, _ in verdict.explained] == ["x/a"]
    with pytest.raises(AssertionError):
        check("s.one", {"x": {"a": 1}}, {"x": {"a": 6}}, entries=(entry,))  # another kemu value
    with pytest.raises(AssertionError):
        check("t.one", {"x": {"a": 1}}, {"x": {"a": 5}}, entries=(entry,))  # another scenario


def test_an_exact_entry_that_no_longer_matches_fails() -> None:
    entry = KnownDifference(scenario="s.exact", path="x", reason="was different once")
    with pytest.raises(AssertionError, match="no longer seen"):
        check("s.exact", {"x": 1}, {"x": 1}, entries=(entry,))
    assert judge("s.other", {"x": 1}, {"x": 1}, entries=(entry,)).identical


def test_normalisation_keeps_identity_of_varying_values() -> None:
    kafka = normalise({"producer_id": 4000, "again": {"producer_id": 4000}, "throttle_time_ms": 0})
    kemu = normalise({"producer_id": 7, "again": {"producer_id": 8}, "throttle_time_ms": 0})
    assert kafka == {"producer_id": "<producer_id#1>", "again": {"producer_id": "<producer_id#1>"},
                     "throttle_time_ms": "<throttle_time_ms#1>"}
    assert differences(kafka, kemu) == [Difference("again/producer_id", "<producer_id#1>", "<producer_id#2>")]
    assert normalise({"producer_id": -1, "member_id": ""}) == {"producer_id": -1, "member_id": ""}
    assert normalise({"error_code": 3, "offset": 17}) == {"error_code": 3, "offset": 17}


def test_a_scenario_may_name_more_varying_fields() -> None:
    check("s.varying", {"generation_id": 4}, {"generation_id": 9}, entries=(), varying={"generation_id": "gen"})
    with pytest.raises(AssertionError):
        check("s.varying", {"generation_id": 4}, {"generation_id": 9}, entries=())


def test_a_step_kind_is_numbered_within_its_step_and_still_compared_there() -> None:
    from compat_tests.differential.normalise import Normaliser

    varying = {"issued": "step:timestamp", "expires": "step:timestamp"}
    kafka, kemu = Normaliser(), Normaliser()
    # Kafka ran the two steps in two milliseconds, kemu in one: the same answers once numbered per step.
    first = kafka({"issued": 5, "expires": 9}, varying), kemu({"issued": 5, "expires": 9}, varying)
    kafka.next_step()
    kemu.next_step()
    second = kafka({"issued": 6, "expires": 10}, varying), kemu({"issued": 5, "expires": 9}, varying)
    assert first[0] == first[1] and second[0] == second[1] == {"issued": "<step:timestamp#1>",
                                                                "expires": "<step:timestamp#2>"}
    kemu.next_step()
    # Within a step an equality still counts: a token whose expiry is its issue time differs.
    assert kemu({"issued": 5, "expires": 5}, varying) != second[0]
