"""The report's figures (drawn with :mod:`sgbench.base.figures`, no pyplot): b² against step size and running
b² against gradient evaluations, with their styles, legends and log axes."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from sgbench.base.figures import new_figure, png_bytes
from sgbench.bench.sweeps.report.best import lines_of_runs
from sgbench.bench.sweeps.report.settings import sorted_runs, without_absent_settings
from sgbench.bench.sweeps.report.values import B2, B2_STD, STEP_SIZE, count_text, metric, number_text

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", ":", "-.")


def _styles(n: int) -> list[dict]:
    """``n`` distinct matplotlib styles: the ten tab10 colours, each with its own marker, then the
    same colours with other line styles and markers."""
    from matplotlib import colormaps

    colors = colormaps["tab10"].colors
    return [{"color": colors[i % 10], "marker": _MARKERS[(i + i // 10) % 10],
             "linestyle": _LINESTYLES[(i // 10) % len(_LINESTYLES)]} for i in range(n)]


def _figure(width: float, height: float):
    """A report figure: 110 dpi, constrained layout."""
    return new_figure((width, height), dpi=110, layout="constrained")


def _text_width(fig, text: str, font) -> float:
    """The width of ``text`` (its widest line) as ``fig`` renders it.

    Args:
        fig: the figure whose canvas renders the text.
        text: the text, lines separated by newlines.
        font: a ``matplotlib.font_manager.FontProperties``.

    Returns:
        The width in inches.
    """
    renderer = fig.canvas.get_renderer()
    return max(renderer.get_text_width_height_descent(line, font, ismath=False)[0]
               for line in text.split("\n")) / renderer.dpi


def _wrapped(fig, text: str, font, width_inches: float) -> str:
    """``text`` broken at spaces into lines no wider than ``width_inches`` as ``fig`` renders them.

    Args:
        fig: the figure whose canvas renders the text.
        text: the text (one line).
        font: a ``matplotlib.font_manager.FontProperties``.
        width_inches: the widest a line may be; a word wider than that has a line of its own.

    Returns:
        The text with newlines in place of the spaces where it breaks.
    """
    lines = []
    for word in text.split(" "):
        if lines and _text_width(fig, f"{lines[-1]} {word}", font) <= width_inches:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def _fit(text, width_inches: float) -> None:
    """Break a title or label at spaces so that it is no wider than ``width_inches``.

    Args:
        text: a ``matplotlib.text.Text`` of a figure (a title, a suptitle).
        width_inches: the widest a line may be.
    """
    text.set_text(_wrapped(text.figure, text.get_text(), text.get_fontproperties(), width_inches))


def _fit_titles(fig) -> None:
    """Break the title of each visible axes of ``fig`` at spaces so that none is wider than its axes
    (a layout centres a title over its axes and lets a longer one run past both ends, out of the
    figure or over its neighbour's). Lays the figure out to learn the axes' widths.

    Args:
        fig: a figure with its axes, titles and legends drawn in.
    """
    fig.draw_without_rendering()
    for ax in fig.axes:
        if ax.get_visible() and ax.get_title():
            _fit(ax.title, ax.get_position().width * fig.get_figwidth())


def _legend_layout(fig, labels) -> tuple[int, list[str], int]:
    """A legend of 8-point ``labels`` across ``fig``'s width: as many columns (at most five) as its
    widest label leaves room for, and labels wider than a column broken at spaces, as rendered.

    Args:
        fig: the figure whose width the legend spans.
        labels: the legend's labels.

    Returns:
        (columns, wrapped labels, rows of text).
    """
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    font = FontProperties(size=8)
    em = 8 / 72
    handle = (rcParams["legend.handlelength"] + rcParams["legend.handletextpad"]
              + rcParams["legend.columnspacing"]) * em  # a handle, the gap to its text and to the next column
    usable = fig.get_size_inches()[0] - 2 * (rcParams["legend.borderpad"] + rcParams["legend.borderaxespad"]) * em
    widest = max(_text_width(fig, label, font) for label in labels)
    ncol = max(1, min(5, len(labels), int(usable // (widest + handle))))
    wrapped = [_wrapped(fig, label, font, usable / ncol - handle) for label in labels]
    rows = math.ceil(len(labels) / ncol) * max(label.count("\n") + 1 for label in wrapped)
    return ncol, wrapped, rows


def _legend(fig, ax, handles, labels) -> None:
    """The legend inside ``ax`` when it has at most three short entries, else in rows of its own under
    the axes (the figure grows to hold them, labels too wide for a column broken into lines): never
    outside the figure.

    Args:
        fig: the figure.
        ax: the axes that holds a short legend.
        handles: the legend's handles.
        labels: their labels, one a handle.
    """
    if len(labels) <= 3 and max(map(len, labels)) <= 45:
        ax.legend(handles, labels, fontsize=8, loc="best")
        return
    ncol, wrapped, rows = _legend_layout(fig, labels)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + 0.17 * (rows + 1))
    fig.legend(handles, wrapped, fontsize=8, loc="outside lower center", ncol=ncol, frameon=False)


def _log_limits(low: float, high: float, top_room: float = 0.0) -> tuple[float, float]:
    """Log-axis limits around [low, high] with a margin, at least a factor 4 wide, and
    ``top_room`` (a fraction of the height) left free above; limits are kept within [1e-100, 1e100]
    (a b² far beyond, ~1e257 from a run far from the truth, is left above the axis)."""
    lo, hi = (math.log10(min(max(v, 1e-100), 1e100)) for v in (low, high))
    if hi - lo < math.log10(4):
        middle = (lo + hi) / 2
        lo, hi = middle - math.log10(2), middle + math.log10(2)
    margin = 0.08 * (hi - lo)
    lo, hi = lo - margin, hi + margin
    hi += top_room * (hi - lo) / (1 - top_room)
    return 10 ** lo, 10 ** hi


def _log_ticks(axis) -> None:
    """Ticks at 1, 2 and 5 times the powers of ten, labelled plainly, on a log ``axis`` that spans
    less than three decades (matplotlib's own would be two or three labels, or crowded minor ones)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    if math.log10(high / low) >= 3:
        return
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}" if 1e-3 <= v < 1e5 else f"{v:.0e}"))
    axis.set_minor_formatter(NullFormatter())


def b2_figure(frame: pd.DataFrame):
    """The figure of :func:`plot_b2` (None when no run has a b² or a step size)."""
    from matplotlib.lines import Line2D

    frame = sorted_runs(without_absent_settings(frame))
    b2, std, diverged = metric(frame, B2), metric(frame, B2_STD), metric(frame, "num_diverged_chains")
    points = np.isfinite(b2) & (b2 > 0)
    if STEP_SIZE not in frame or not points.any():
        return None
    lines = lines_of_runs(frame)
    handles, labels = [], []
    fig = _figure(8, 5)
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    top = ax.get_xaxis_transform()  # x in data coordinates, y in axes coordinates
    any_all_diverged = False
    for index, (line, style) in enumerate(zip(lines, _styles(len(lines)))):
        rows = frame.index.isin(line.runs.index)
        ok = rows & points
        lost = rows & ~np.isfinite(b2) & (diverged >= frame["num_chains"])
        if ok.any():
            handles.append(ax.errorbar(frame.loc[ok, STEP_SIZE], b2[ok], yerr=std[ok].fillna(0), ms=5, capsize=3,
                                       **style))
        elif lost.any():
            handles.append(Line2D([], [], **style))
        if ok.any() or lost.any():  # a line without truth draws nothing: the headline says so
            labels.append(line.label)
        if lost.any():
            any_all_diverged = True
            height = 0.96 - 0.04 * (index % 5)  # lines diverging at one step size stay apart
            ax.plot(frame.loc[lost, STEP_SIZE], np.full(lost.sum(), height), "x", color=style["color"], ms=9,
                    mew=2, transform=top, clip_on=False)
        for x, y, d, n in zip(frame.loc[ok, STEP_SIZE], b2[ok], diverged[ok], frame.loc[ok, "num_chains"]):
            if d > 0:
                ax.annotate(f"{d:.0f}/{n} diverged", (x, y), textcoords="offset points", xytext=(5, 5),
                            fontsize=7, color=style["color"])
    low = np.where(b2 - std > 0, b2 - std, b2)[points].min()
    high = (b2 + std.fillna(0))[points].max()
    for n in sorted(set(frame["num_steps"] // frame["thin"]))[:3]:
        if 1 / n >= low / 3 and 1 / n <= high * 3:  # near the points: drawn, and the axis widened to it
            low, high = min(low, 1 / n), max(high, 1 / n)
            handles.append(ax.axhline(1 / n, color="grey", linestyle=":", linewidth=1))
            labels.append(f"1/n: exact i.i.d. sampling, n = {count_text(n)} draws per chain")
        else:
            handles.append(Line2D([], [], color="grey", linestyle=":", linewidth=1))
            side = "below" if 1 / n < low else "above"
            labels.append(f"1/n = {1 / n:.0e} (exact i.i.d. sampling, n = {count_text(n)}): {side} the plot")
    ax.set_ylim(*_log_limits(low, high, top_room=0.22 if any_all_diverged else 0.0))
    step_sizes = frame[STEP_SIZE].astype(float).unique()
    if len(step_sizes) == 1:  # a single step size: give the log axis a width
        ax.set_xlim(step_sizes[0] / 3, step_sizes[0] * 3)
    if any_all_diverged:
        handles.append(Line2D([], [], marker="x", color="black", linestyle="", ms=9, mew=2))
        labels.append("every chain diverged (no b²)")
    _log_ticks(ax.xaxis)
    _log_ticks(ax.yaxis)
    ax.set_xlabel("step size h")
    ax.set_ylabel("b² (mean over dims, chain average ± 1 bootstrap std)")
    targets = {line.target for line in lines}
    ax.set_title("Second-moment bias against step size" + (f" on {targets.pop()}" if len(targets) == 1 else ""))
    ax.grid(True, which="major", alpha=0.3)
    _legend(fig, ax, handles, labels)
    _fit_titles(fig)
    return fig


def plot_b2(frame: pd.DataFrame) -> bytes:
    """PNG (Agg) of b^2 (mean over dims, chain average) against step size, log-log, one line per
    setting, y axis fitted to the points; points where every chain diverged are drawn as x at the
    top. Raises ValueError when no run has a b² or a step size."""
    fig = b2_figure(frame)
    if fig is None:
        raise ValueError("no run has a b² and a step size to plot")
    return png_bytes(fig)


def running_b2_figure(frame: pd.DataFrame):
    """The figure of :func:`plot_running_b2` (None when no run recorded checkpoints)."""
    from matplotlib.lines import Line2D

    frame = sorted_runs(without_absent_settings(frame))
    curves = {index: json.loads(text).get("b2_mean_pooled") for index, text in frame["curves"].items()}
    curves = {index: c for index, c in curves.items() if c and c["value"]}
    if not curves:
        return None
    lines = [line for line in lines_of_runs(frame) if any(i in curves for i in line.runs.index)]
    # Step sizes to 12 digits: 10 * 3e-4 and 3e-3 are one step size.
    step_size = frame[STEP_SIZE].astype(float).map(lambda h: float(f"{h:.12g}")) if STEP_SIZE in frame else \
        pd.Series(math.nan, index=frame.index)
    sizes = sorted(step_size[list(curves)].unique())
    styles = dict(zip(sizes, _styles(len(sizes))))
    ncols = 1 if len(lines) == 1 else 2
    nrows = math.ceil(len(lines) / ncols)
    fig = _figure(8 if ncols == 1 else 10, 5 if nrows == 1 else 2.6 * nrows + 0.6)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    values = []
    for ax, line in zip(axes, lines):
        for index in line.runs.index:
            if index in curves:
                value = np.array(curves[index]["value"], dtype=float)
                values.append(value[np.isfinite(value) & (value > 0)])
                ax.loglog(curves[index]["grad_evals"], value, ms=3, **styles[step_size[index]])
        if len(lines) > 1:
            ax.set_title(line.label, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    for index, ax in enumerate(axes):
        ax.set_visible(index < len(lines))
        if index + ncols >= len(lines):  # the lowest panel of its column
            ax.set_xlabel("gradient evaluations per chain")
            ax.xaxis.set_tick_params(labelbottom=True)
        if index % ncols == 0:
            ax.set_ylabel("running b² (mean over dims, pooled)", fontsize=9 if nrows > 1 else 10)
    values = np.concatenate(values)
    reference = "b² = 0.01 (Hoffman & Sountsov)"
    if len(values):
        low, high = values.min(), values.max()
        if low / 3 <= 0.01 <= high * 3:  # near the curves: drawn, and the axis widened to it
            low, high = min(low, 0.01), max(high, 0.01)
            for ax in axes[:len(lines)]:
                ax.axhline(0.01, color="grey", linestyle=":", linewidth=1)
        else:
            reference += f": {'below' if 0.01 < low else 'above'} the plot"
        axes[0].set_ylim(*_log_limits(low, high))
    _log_ticks(axes[0].xaxis)
    _log_ticks(axes[0].yaxis)
    handles = [Line2D([], [], ms=4, **styles[h]) for h in sizes]
    handles.append(Line2D([], [], color="grey", linestyle=":", linewidth=1))
    title = fig.suptitle("Running second-moment bias" + (f": {lines[0].label}" if len(lines) == 1 else
                                                         ", per line of runs"))
    _fit(title, fig.get_figwidth() - 0.2)  # the layout keeps a few points free at each edge
    _legend(fig, axes[0], handles, [f"h = {number_text(h)}" for h in sizes] + [reference])
    _fit_titles(fig)
    return fig


def plot_running_b2(frame: pd.DataFrame) -> bytes | None:
    """PNG of the pooled running b^2 (mean over dims) against gradient evaluations per chain,
    log-log: one panel per line of runs, one curve per step size (one colour and marker per step
    size across panels); None if no run recorded checkpoints."""
    fig = running_b2_figure(frame)
    return None if fig is None else png_bytes(fig)
