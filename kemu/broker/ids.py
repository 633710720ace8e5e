"""Topic and cluster ids the way Kafka makes them.

Kafka's `Uuid.randomUuid()` is a random (version 4) UUID, re-drawn if it is the all-zero id, the
metadata topic's id (1) or if its base64 text starts with '-' (which would read as a command-line flag).
A cluster id is such a UUID's 22-character URL-safe base64 text, as `kafka-storage.sh random-uuid` prints.
"""

from __future__ import annotations

import base64
import uuid

_RESERVED = frozenset({0, 1})


def random_uuid() -> uuid.UUID:
    while True:
        candidate = uuid.uuid4()
        if candidate.int not in _RESERVED and not uuid_text(candidate).startswith("-"):
            return candidate


def uuid_text(value: uuid.UUID) -> str:
    """Kafka's `Uuid.toString()`: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def new_cluster_id() -> str:
    return uuid_text(random_uuid())
