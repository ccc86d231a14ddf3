"""The table model (plait_bench/table.py) and its two renderers: Markdown for the report, rich for the terminal."""

from rich.console import Console

from plait_bench.markdown import md_table
from plait_bench.table import (BETTER, MET, NOT_MET, OUTSIDE, SAME, WARN, WITHIN, WORSE, Column, Mark, Table, cell,
                               failed, md_text, rich_text, to_markdown, to_rich)


def _terminal(t: Table, styles: bool = False) -> str:
    c = Console(record=True, width=120, force_terminal=True, color_system="truecolor", file=open("/dev/null", "w"))
    c.print(to_rich(t))
    return c.export_text(styles=styles)


def test_markdown_is_md_table():
    rows = [["a", "1 | 2"], ["b", "3"]]
    assert to_markdown(Table.of(["x", "y"], rows), escape=False) == md_table(["x", "y"], rows)
    assert to_markdown(Table.of(["x", "y"], rows)) == md_table(["x", "y"], rows, escape=True)
    assert md_table(["x", "y"], rows) == "| x | y |\n|---|---|\n| a | 1 | 2 |\n| b | 3 |"


def test_markdown_escapes_bars_in_the_body_only():
    t = Table.of(["a|b", "c"], [["x|y", [Mark(NOT_MET, "not | met")]]])
    assert to_markdown(t).splitlines() == ["| a|b | c |", "|---|---|", "| x\\|y | **NOT \\| MET** |"]


def test_markdown_alignment_only_when_asked():
    t = Table([Column("name"), Column("n", "right")])
    t.add("a", "1")
    assert to_markdown(t).splitlines()[1] == "|---|---|"
    assert to_markdown(t, align=True).splitlines()[1] == "|---|---:|"


def test_markdown_marks_sections_and_line_breaks():
    t = Table.of(["v"], title="not written", caption="nor this")
    t.add(["1.0", " ", failed(2)])
    t.add(Mark(MET, "met"), section=True)
    t.add(Mark(NOT_MET, "not met"), dim=True)
    t.add(["P=1: 3", "\n", "P=2: 4"])
    t.add([Mark(WITHIN, "within"), Mark(OUTSIDE, "outside"), " ", Mark(WARN, "1 not converged")])
    t.add(None)
    assert to_markdown(t).splitlines()[2:] == [
        "| 1.0 **2 FAILED** |", "| **met** |", "| **NOT MET** |", "| P=1: 3<br>P=2: 4 |",
        "| withinoutside (1 not converged) |", "|  |"]
    assert "not written" not in to_markdown(t) and "nor this" not in to_markdown(t)


def test_cells_from_strings_marks_and_parts():
    assert cell(None) == () and cell("a") == ("a",) and cell(failed(1)) == (Mark("failed", "1 FAILED"),)
    assert cell(["a", failed(1)]) == ("a", failed(1))
    assert md_text(cell("a|b"), escape=False) == "a|b"


def test_rich_marks_are_colours():
    assert rich_text(cell(["0.5", " ", failed(3)])) == "0.5 [red](3 FAILED)[/]"
    assert rich_text(cell(Mark(MET, "met"))) == "[green]met[/]"
    assert rich_text(cell(Mark(NOT_MET, "not met"))) == "[red]not met[/]"
    assert rich_text(cell(Mark(WITHIN, "within"))) == "[green]within[/]"
    assert rich_text(cell(Mark(OUTSIDE, "outside"))) == "[red]outside[/]"
    assert rich_text(cell(Mark(WARN, "2 not converged"))) == "[yellow](2 not converged)[/]"
    assert [rich_text(cell(Mark(k, "x"))) for k in (WORSE, BETTER, SAME)] == ["[red]x[/]", "[green]x[/]", "[white]x[/]"]
    out = _terminal(Table.of(["v"], [[["1", " ", failed(2)]], [Mark(MET, "met")]]), styles=True)
    assert "\x1b[31m(2 FAILED)" in out and "\x1b[32mmet" in out


def test_rich_escapes_user_text():
    assert rich_text(cell("[red]x")) == "\\[red]x"
    assert rich_text(cell(Mark(MET, "[bold]"))) == "[green]\\[bold][/]"
    t = Table.of(["study [x]", "n"], [["[bold]b[/bold]", "median [min–max]"]], title="t [min–max]",
                 caption="c [red]")
    out = _terminal(t)
    for s in ("study [x]", "[bold]b[/bold]", "median [min–max]", "t [min–max]", "c [red]"):
        assert s in out, s


def test_rich_alignment_sections_and_dim_rows():
    t = Table([Column("name"), Column("n", "right")], title="T")
    t.add("a", "1")
    t.add("bbbbbb", "22222", section=True)
    t.add("c", "3", dim=True)
    rt = to_rich(t)
    assert [c.justify for c in rt.columns] == ["left", "right"]
    assert rt.rows[0].end_section and not rt.rows[1].end_section
    assert rt.rows[2].style == "dim"
    lines = _terminal(t).splitlines()
    assert any(line.startswith("│ a      │     1 │") for line in lines)
    assert any(line.startswith("├") for line in lines)  # the section rule
