"""Kafka's rules for topic names (`org.apache.kafka.common.internals.Topic`)."""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 249
GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
SHARE_GROUP_STATE_TOPIC = "__share_group_state"
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_GROUP_STATE_TOPIC})

_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def invalid_name_reason(name: str, subject: str = "Topic name") -> str | None:
    """Kafka's InvalidTopicException message for an illegal name (Topic.validate: "<subject> is invalid:
    <why>"), or None when the name is legal. The length is Java's, in UTF-16 code units."""
    why = _why_invalid(name)
    return None if why is None else f"{subject} is invalid: {why}"


def _why_invalid(name: str) -> str | None:
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name.encode("utf-16-le", "surrogatepass")) // 2 > MAX_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    if not _LEGAL.fullmatch(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_message(name: str) -> str | None:
    """The message of Kafka's `Topic.validate` (the broker's check in DescribeProducers, say), or None for a
    legal name. Worded otherwise than the controller's CreateTopics check above."""
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > MAX_NAME_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    elif not _LEGAL.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"


def is_internal(name: str) -> bool:
    return name in INTERNAL_TOPICS


def has_collision_chars(name: str) -> bool:
    """'.' and '_' collide in metric names, so Kafka refuses topics differing only in them."""
    return "." in name or "_" in name


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")
