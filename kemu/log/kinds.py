"""The log's enums that a broker names before any partition log is open (a partition's default arguments),
kept apart so that start-up need not load the partition log, its segments and the validator."""

from __future__ import annotations

from enum import Enum


class FetchIsolation(Enum):
    LOG_END = "log_end"
    """Up to the log end offset (replicas, internal readers)."""
    HIGH_WATERMARK = "high_watermark"
    """read_uncommitted consumers."""
    TXN_COMMITTED = "txn_committed"
    """read_committed consumers: up to the last stable offset."""


class AppendOrigin(Enum):
    """Who is appending: clients get the strict checks; coordinators (transaction markers, group and
    transaction state) may write control batches and pre-set offsets."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
