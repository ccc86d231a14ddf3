"""Matplotlib helpers shared by the report figures: one colour and marker per runtime, error bars,
plain log axes and the red crosses of failed runs."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from .analysis import Summary  # noqa: E402
from .registry import compiler_of, default_compiler, omp_lib_of, runtime_of  # noqa: E402

COLORS = {"plait": "tab:blue", "tbb": "tab:green", "libomp": "tab:orange", "gomp": "tab:red", "serial": "black",
          "mpi": "tab:purple"}
MARKERS = {"plait": "o", "tbb": "s", "libomp": "^", "gomp": "v", "serial": "D", "mpi": "P"}


def series_style(series: str) -> dict:
    rt = runtime_of(series)
    lib = omp_lib_of(series)
    if lib:  # an OpenMP binary on another library: that library's colour, the binary's marker, dash-dot
        return {"color": COLORS.get("plait" if lib == "plait" else "libomp"), "marker": MARKERS.get(rt, "o"),
                "linestyle": "-."}
    st = {"color": COLORS.get(rt, None), "marker": MARKERS.get(rt, "o")}
    if compiler_of(series) != default_compiler(rt):  # another compiler's build: same colour, hollow marker, dashed
        st.update(markerfacecolor="none", linestyle="--")
    return st


def errbar(ax, xs, sums: list[Summary], label: str, scale: float = 1.0, **kw) -> None:
    if not xs:
        return
    meds = [s.median * scale for s in sums]
    lo = [max(0.0, (s.median - s.lo) * scale) for s in sums]
    hi = [max(0.0, (s.hi - s.median) * scale) for s in sums]
    ax.errorbar(xs, meds, yerr=[lo, hi], label=label, capsize=3, linewidth=1.4, markersize=5, **kw)


_PLAIN = FuncFormatter(lambda v, _: f"{v:g}")


def plain_log(ax, axes: str = "x") -> None:
    """Log axes labelled 5, 10, 20 rather than 2x10^1 (only the powers of ten past three decades,
    where 1-2-5 labels would run into each other); call it after plotting."""
    for a in axes:
        axis = ax.xaxis if a == "x" else ax.yaxis
        lo, hi = ax.get_xlim() if a == "x" else ax.get_ylim()
        wide = lo > 0 and hi / lo > 1e3
        axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
        axis.set_major_formatter(_PLAIN)
        axis.set_minor_formatter(NullFormatter())


def failed_marks(ax, xs, counts, y, label_done: list, series: str = "") -> None:
    """Red crosses at the bottom of the plot for configurations with failed runs, annotated per series."""
    if not any(counts):
        return
    k = label_done[1] if len(label_done) > 1 else 0
    for x, n in zip(xs, counts):
        if n:
            ax.scatter([x], [y], marker="x", color="red", s=60, zorder=5,
                       label=None if label_done[0] else "failed run(s)")
            ax.annotate(f"{series}: {n} failed" if series else f"{n} failed", (x, y), textcoords="offset points",
                        xytext=(4, 4 + 9 * k), fontsize=7, color=series_style(series).get("color") or "red")
            label_done[0] = True
    if len(label_done) > 1:
        label_done[1] += 1
    else:
        label_done.append(1)


def save_captioned(fig, path: Path, note: str, *, top: float = 1.0, dpi: int = 120) -> Path:
    """Writes `fig` to `path` with `note` (what the figure is made of) in small type at its foot,
    laid out above that line, and closes it. Returns `path`."""
    import matplotlib.pyplot as plt

    fig.text(0.01, 0.005, note, fontsize=6)
    fig.tight_layout(rect=(0, 0.03, 1, top))
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
