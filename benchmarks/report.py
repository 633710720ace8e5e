"""The side-by-side report: rows of per-broker cells, a Markdown table with kemu/peer ratios, and JSON.

A cell holds a number, or says why there is none: FAILED (the measurement ran and its check failed, or
the broker broke) or n/a (the broker does not offer the feature, or cannot run here). Reasons become
numbered notes under the table, one note per distinct reason, so a broker missing an API yields one
note rather than sixteen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

REFERENCE = "kemu"


@dataclass(frozen=True)
class Cell:
    value: float | None = None
    failure: str | None = None
    not_applicable: str | None = None

    @classmethod
    def failed(cls, why: str) -> Cell:
        return cls(failure=why)

    @classmethod
    def absent(cls, why: str) -> Cell:
        return cls(not_applicable=why)


@dataclass
class Row:
    metric: str
    cells: dict[str, Cell] = field(default_factory=dict)

    def ratio(self, peer: str) -> float | None:
        """kemu's value over the peer's, when both are numbers."""
        ours, theirs = self.cells.get(REFERENCE), self.cells.get(peer)
        if ours is None or theirs is None or ours.value is None or theirs.value is None or theirs.value == 0:
            return None
        return ours.value / theirs.value


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    short: str


def format_number(value: float) -> str:
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


class _Notes:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def number(self, text: str) -> int:
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1


def _cell_text(cell: Cell | None, label: str, notes: _Notes) -> str:
    if cell is None:
        return "—"
    if cell.failure is not None:
        return f"FAILED [{notes.number(f'{label}: {cell.failure}')}]"
    if cell.not_applicable is not None:
        return f"n/a [{notes.number(f'{label}: {cell.not_applicable}')}]"
    assert cell.value is not None
    return format_number(cell.value)


def format_table(rows: list[Row], columns: list[Column], footnotes: Sequence[str] = ()) -> str:
    """Markdown: metric, one column per broker, then kemu/peer for each peer present; notes below."""
    peers = [column for column in columns if column.key != REFERENCE]
    with_ratios = any(column.key == REFERENCE for column in columns)
    header = ["metric", *(column.label for column in columns)]
    if with_ratios:
        header += [f"kemu/{peer.short}" for peer in peers]
    notes = _Notes()
    body: list[list[str]] = []
    for row in rows:
        line = [row.metric, *(_cell_text(row.cells.get(c.key), c.label, notes) for c in columns)]
        if with_ratios:
            line += [format_ratio(row.ratio(peer.key)) for peer in peers]
        body.append(line)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def render(line: list[str]) -> str:
        cells = [text.ljust(widths[0]) if i == 0 else text.rjust(widths[i]) for i, text in enumerate(line)]
        return "| " + " | ".join(cells) + " |"

    divider = "|" + "|".join(("-" * (w + 1) + (":" if i else "-")) for i, w in enumerate(widths)) + "|"
    lines = [render(header), divider, *(render(line) for line in body)]
    if notes.texts or footnotes:
        lines.append("")
    lines += [f"[{number}] {text}" for number, text in enumerate(notes.texts, 1)]
    lines += [f"- {text}" for text in footnotes]
    return "\n".join(lines)


def to_json(rows: list[Row], columns: list[Column]) -> list[dict[str, Any]]:
    peers = [column.key for column in columns if column.key != REFERENCE]
    document: list[dict[str, Any]] = []
    for row in rows:
        entry: dict[str, Any] = {"metric": row.metric, "values": {}, "failed": {}, "not_applicable": {}}
        for column in columns:
            cell = row.cells.get(column.key)
            entry["values"][column.key] = None if cell is None else cell.value
            if cell is not None and cell.failure is not None:
                entry["failed"][column.key] = cell.failure
            if cell is not None and cell.not_applicable is not None:
                entry["not_applicable"][column.key] = cell.not_applicable
        if any(column.key == REFERENCE for column in columns):
            entry["ratio_kemu_over"] = {peer: row.ratio(peer) for peer in peers}
        document.append(entry)
    return document
