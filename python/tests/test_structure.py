"""The shape of the package: no import cycles among plait_bench's modules, and rendering depends on
analysis, never the reverse. Imports are read from the source (ast), function-level ones included."""

from __future__ import annotations

import ast
from pathlib import Path

import plait_bench

PACKAGE = Path(plait_bench.__file__).parent

# computations over the stored runs: medians, efficiencies, paired ratios, intervals, verdicts
ANALYSIS = {"analysis", "suite", "loops", "amr"}
# what draws or prints them: markdown, figures, terminal tables, the command line
RENDERING = {"report", "report_loops", "report_amr", "report_tables", "markdown", "table", "plots", "summary",
             "trace", "cli"}
# libraries that only rendering uses
RENDERING_LIBRARIES = {"matplotlib", "rich", "click"}


def module_names() -> set[str]:
    return {p.stem for p in PACKAGE.glob("*.py")}


def imports_of(source: str, modules: set[str]) -> tuple[set[str], set[str]]:
    """(package modules, other top-level packages) that `source` imports, anywhere in the file."""
    own: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "plait_bench":
                    own.update(parts[1:2])
                else:
                    other.add(parts[0])
        elif isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            if node.level == 0 and parts[0] != "plait_bench":
                other.add(parts[0])
            elif node.level == 1 or parts[0] == "plait_bench":
                inner = parts[1:] if node.level == 0 else parts
                if inner and inner[0]:
                    own.add(inner[0])
                else:  # from . import db, suite
                    own.update(a.name for a in node.names if a.name in modules)
    return own & modules, other


def import_graph() -> dict[str, set[str]]:
    mods = module_names()
    return {m: imports_of((PACKAGE / f"{m}.py").read_text(), mods)[0] - {m} for m in sorted(mods)}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (c := visit(n)):
                return c
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (c := visit(m)):
            return c
    return None


def reachable(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Every module `start` imports, directly or through others, with one import chain to it."""
    seen = {start: [start]}
    todo = [start]
    while todo:
        m = todo.pop()
        for n in sorted(graph.get(m, ())):
            if n not in seen:
                seen[n] = seen[m] + [n]
                todo.append(n)
    del seen[start]
    return seen


def test_the_module_sets_name_real_modules():
    mods = module_names()
    assert ANALYSIS <= mods, ANALYSIS - mods
    assert RENDERING <= mods, RENDERING - mods
    assert not ANALYSIS & RENDERING


def test_the_checks_see_function_level_imports_and_cycles():
    src = "from . import db, suite\nfrom .analysis import Dataset\n\ndef f():\n    from .report import x\n    import rich.table\n"
    own, other = imports_of(src, {"db", "suite", "analysis", "report"})
    assert own == {"db", "suite", "analysis", "report"} and other == {"rich"}
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle among plait_bench modules: " + " -> ".join(cycle)


def test_analysis_does_not_import_rendering():
    graph = import_graph()
    mods = module_names()
    bad = []
    for m in sorted(ANALYSIS):
        chains = {m: [m], **reachable(graph, m)}
        for n, chain in chains.items():
            if n in RENDERING:
                bad.append(" -> ".join(chain))
            libs = imports_of((PACKAGE / f"{n}.py").read_text(), mods)[1] & RENDERING_LIBRARIES
            bad += [" -> ".join([*chain, lib]) for lib in sorted(libs)]
    assert not bad, "analysis modules import rendering: " + "; ".join(bad)
