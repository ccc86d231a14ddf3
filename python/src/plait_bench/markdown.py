"""Markdown output shared by the report sections: a table of plain cells (through the table model), the efficiency cell."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .table import Table, to_markdown

if TYPE_CHECKING:
    from .analysis import Summary


def md_table(header: list[str], rows: list[list[str]], escape: bool = False) -> str:
    """A markdown table of plain-text cells (the table model's to_markdown): a header row, a `|---|`
    rule, one line per row (no trailing newline).

    escape=True writes a `|` inside a body cell as `\\|`, for cells that carry free text (run
    messages, target numbers); the header is written as given.
    """
    return to_markdown(Table.of(header, rows), escape=escape)


def pct_cell(s: Summary | None) -> str:
    """A fraction's median and min–max as percentages ("97.3% [93.2–100.1]"), "–" without runs."""
    return "–" if s is None else f"{s.median * 100:.1f}% [{s.lo * 100:.1f}–{s.hi * 100:.1f}]"
