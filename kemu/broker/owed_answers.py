"""The bytes of answers a broker has built and its connections have not sent yet, held in memory, across all
of them.

Kafka sends a Fetch answer's records from the segment files with `sendfile`, out of one page cache that every
reader shares: an answer a slow client has not taken costs its heap nothing. kemu does too for records read
from a file (kemu.wire.file_region), which are not counted here; what is counted is what answers hold in
memory: records from the active segment's cache, short reads, everything else encoded. Before the regions,
500 connections that each asked 50 partitions' worth and read nothing back held 9.8 GB within two seconds.
A Fetch built while more than `limit` bytes are owed gets, of its records in memory, what is left (at least
one batch, as Kafka's first partition always gets: every consumer still moves on), so what slow clients can
hold is bounded by the limit and a batch per connection."""

from __future__ import annotations

# Twice fetch.max.bytes and some: a consumer's biggest answer and the next one never wait for each other.
DEFAULT_OWED_ANSWER_BYTES = 128 * 1024 * 1024


class OwedAnswers:
    __slots__ = ("limit", "used")

    def __init__(self, limit: int = DEFAULT_OWED_ANSWER_BYTES) -> None:
        self.limit = limit
        self.used = 0  # kept by each connection's RequestOrder (kemu.server.request_order)

    def left(self) -> int:
        return self.limit - self.used
