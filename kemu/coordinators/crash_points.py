"""Where a crash test may stop the transaction coordinator inside the two-phase commit.

Its own small module so that what names a crash point (a test's fault script, `kemu serve`'s handle) need
not import the coordinator itself at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum


class CrashPoint(StrEnum):
    """Where in marker writing a crash test may stop the broker (for a commit or an abort alike)."""

    AFTER_PREPARE = "after-prepare"  # PrepareCommit/PrepareAbort is journaled; no marker is written yet
    PARTIAL_MARKERS = "partial-markers"  # markers are written to some of the transaction's partitions only
    BEFORE_COMPLETE = "before-complete"  # every marker is written; CompleteCommit/CompleteAbort is not journaled


# Called with the point and the transactional id; it stops the broker by raising, or returns to go on.
CrashHook = Callable[[CrashPoint, str], None]
