"""One table model for the report's Markdown and the terminal's rich tables.

A Table has a title, columns (name, alignment), rows of cells, an optional caption, and rows that
open a new section. A cell is a sequence of parts: plain text, or a Mark that says what a piece of
text means (failed runs, a verdict met or not met, an interval within or outside its target, ...),
never how it looks. The renderers decide the look: to_markdown writes the `| a | b |` table of the
report (a mark as bold text or plain), to_rich a rich.Table for the terminal (a mark as a colour;
every piece of text escaped, so a `[` in a study's name is never read as markup). A newline in a
cell is a line break: `<br>` in Markdown, a new line in the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Union

if TYPE_CHECKING:
    import rich.table

# what a mark says
FAILED = "failed"  # runs that failed: "2 FAILED"
MET = "met"  # a target's verdict
NOT_MET = "not met"
WITHIN = "within"  # what an interval says about a target
OUTSIDE = "outside"
WARN = "warn"  # a number to read with care (an --auto calibration that did not converge)
WORSE = "worse"  # a change for the worse, for the better, or neither (history)
BETTER = "better"
SAME = "same"


@dataclass(frozen=True)
class Mark:
    """A piece of a cell with a meaning (one of the kinds above)."""

    kind: str
    text: str


def failed(n: int) -> Mark:
    """n failed runs."""
    return Mark(FAILED, f"{n} FAILED")


Part = Union[str, Mark]
Cell = tuple[Part, ...]


def cell(value: Part | Iterable[Part] | None) -> Cell:
    """A cell from a string, a mark, several parts or None (an empty cell)."""
    if value is None:
        return ()
    if isinstance(value, (str, Mark)):
        return (value,)
    return tuple(value)


@dataclass(frozen=True)
class Column:
    name: str
    align: str = "left"  # "left" or "right"


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    dim: bool = False  # a row of context (e.g. the serial times under the efficiencies)
    section: bool = False  # the row opens a new section (a rule above it in the terminal)


@dataclass
class Table:
    columns: list[Column]
    rows: list[Row] = field(default_factory=list)
    title: str = ""
    caption: str = ""

    @classmethod
    def of(cls, header: Iterable[str | Column], rows: Iterable[Iterable] = (), title: str = "",
           caption: str = "") -> "Table":
        """A table from column names (or Columns) and rows of cells."""
        t = cls([c if isinstance(c, Column) else Column(c) for c in header], title=title, caption=caption)
        for r in rows:
            t.add(*r)
        return t

    def add(self, *cells: Part | Iterable[Part] | None, dim: bool = False, section: bool = False) -> None:
        self.rows.append(Row(tuple(cell(c) for c in cells), dim, section))


# ---- Markdown ----------------------------------------------------------------------------------

_MD: dict[str, Callable[[str], str]] = {
    FAILED: lambda t: f"**{t}**",
    MET: lambda t: f"**{t}**",
    NOT_MET: lambda t: f"**{t.upper()}**",
    WARN: lambda t: f"({t})",
}


def md_text(c: Cell, escape: bool = True) -> str:
    """A cell as Markdown: marks as the report writes them (failed runs and verdicts in bold, a warning in brackets, the others as plain text), `|` as
    `\\|` when escape, a newline as `<br>`."""
    out = []
    for p in c:
        text = p.text if isinstance(p, Mark) else p
        if escape:
            text = text.replace("|", "\\|")
        out.append(_MD.get(p.kind, str)(text) if isinstance(p, Mark) else text)
    return "".join(out).replace("\n", "<br>")


def to_markdown(t: Table, escape: bool = True, align: bool = False) -> str:
    """The table's Markdown: a header row, a rule, one line per row (no trailing newline). The title
    and the caption are the section's to write (a heading, a caption paragraph); sections and dim rows
    look like any other row. escape: `|` in a body cell written as `\\|` (the header is written as
    given). align: the rule says each column's alignment (`---:` for a right one); off, every column
    gets `---`, as the report's tables have."""
    rule = ("---:" if align and c.align == "right" else "---" for c in t.columns)
    out = ["| " + " | ".join(c.name for c in t.columns) + " |", "|" + "|".join(rule) + "|"]
    out += ["| " + " | ".join(md_text(c, escape) for c in r.cells) + " |" for r in t.rows]
    return "\n".join(out)


# ---- terminal ----------------------------------------------------------------------------------

_RICH: dict[str, str] = {
    FAILED: "[red]({})[/]",
    MET: "[green]{}[/]",
    NOT_MET: "[red]{}[/]",
    WITHIN: "[green]{}[/]",
    OUTSIDE: "[red]{}[/]",
    WARN: "[yellow]({})[/]",
    WORSE: "[red]{}[/]",
    BETTER: "[green]{}[/]",
    SAME: "[white]{}[/]",
}


def rich_text(c: Cell) -> str:
    """A cell as rich markup: its text escaped, a mark in its colour (failed runs red, in brackets)."""
    from rich.markup import escape

    return "".join(_RICH.get(p.kind, "{}").format(escape(p.text)) if isinstance(p, Mark) else escape(p) for p in c)


def to_rich(t: Table) -> "rich.table.Table":
    """The table for the terminal: title and caption, columns justified as given, dim rows dimmed, a
    rule above a row that opens a section."""
    from rich.markup import escape
    from rich.table import Table as RichTable

    out = RichTable(title=escape(t.title) if t.title else None, caption=escape(t.caption) if t.caption else None)
    for c in t.columns:
        out.add_column(escape(c.name), justify=c.align)
    for i, r in enumerate(t.rows):
        if r.section and i > 0:
            out.add_section()
        out.add_row(*(rich_text(c) for c in r.cells), style="dim" if r.dim else None)
    return out
