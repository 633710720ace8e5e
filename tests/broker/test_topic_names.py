from __future__ import annotations

import pytest

from kemu.broker.topic_names import has_collision_chars, invalid_name_reason, is_internal, unify_collision_chars


@pytest.mark.parametrize("name", ["a", "orders", "A-b_c.d", "x" * 249, "__consumer_offsets", "0"])
def test_legal_names(name: str) -> None:
    assert invalid_name_reason(name) is None


@pytest.mark.parametrize(("name", "reason"), [
    ("", "Topic name is invalid: the empty string is not allowed"),
    (".", "Topic name is invalid: '.' is not allowed"),
    ("..", "Topic name is invalid: '..' is not allowed"),
    ("x" * 250, "Topic name is invalid: the length of '" + "x" * 250 + "' is longer than the max allowed length 249"),
    ("a b", "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'"),
    ("é", "Topic name is invalid: 'é' contains one or more characters other than ASCII alphanumerics, "
          "'.', '_' and '-'"),
    ("\U0001f600" * 125, "Topic name is invalid: the length of '" + "\U0001f600" * 125
     + "' is longer than the max allowed length 249"),  # 250 UTF-16 units, as Java counts them
])
def test_illegal_names_get_kafkas_message(name: str, reason: str) -> None:
    assert invalid_name_reason(name) == reason


def test_internal_topics() -> None:
    assert is_internal("__consumer_offsets")
    assert is_internal("__transaction_state")
    assert not is_internal("__my_topic")


def test_collision_chars() -> None:
    assert has_collision_chars("a.b") and has_collision_chars("a_b") and not has_collision_chars("ab")
    assert unify_collision_chars("a.b_c") == "a_b_c"
