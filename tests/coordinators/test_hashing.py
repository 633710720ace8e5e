"""kemu.hashing: the internal-topic partition of a group or transactional id, as Kafka computes it."""

from __future__ import annotations

from kemu.hashing import java_abs, java_string_hash, partition_for


def test_negative_hash_codes_are_negated_not_masked() -> None:
    # Kafka's Utils.abs(-1906497762) is 1906497762 (partition 12 of 50); the partitioner's bit mask would
    # give 240985886 (partition 36), where Kafka 4.3's AddOffsetsToTxn does not put the group.
    assert java_string_hash("my-group") == -1906497762
    assert partition_for("my-group", 50) == 12


def test_integer_min_value_is_partition_zero() -> None:
    assert java_string_hash("polygenelubricants") == -(1 << 31)
    assert java_abs(-(1 << 31)) == 0
    assert partition_for("polygenelubricants", 50) == 0


def test_positive_hash_codes_are_kept() -> None:
    assert partition_for("g", 50) == 103 % 50
