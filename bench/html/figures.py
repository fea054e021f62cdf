"""Each gate cell's relative second-moment error beside the bias the method is allowed (``sgbench gate``,
``sgbench validate``), drawn with the suite's plotting setup (:mod:`sgbench.base.figures`)."""

from __future__ import annotations

import numpy as np

from sgbench.base.figures import png_bytes, subplots

ERROR_XLABEL = "relative second-moment error per coordinate (± 2 se)"


def error_bar_figure(series: dict[str, tuple], title: str, xlabel: str = ERROR_XLABEL) -> bytes:
    """PNG: per cell (rows) and coordinate, the mean error +- 2 standard errors of each named series,
    each point on the row of its own cell.

    Args:
        series: ``{label: (cell names, means, ses)}``, one mean vector and one standard-error vector per
            cell name (cells may differ in dimension). The rows are the names of all series in order of
            first appearance; a series that lacks a cell has no point on its row.
        title: the figure's title.
        xlabel: what the error is (the default: the relative second-moment error per coordinate).

    Returns:
        The PNG bytes. ValueError when a series has not one mean and one standard error per name.
    """
    for label, (names, means, ses) in series.items():
        if not len(names) == len(means) == len(ses):
            raise ValueError(f"series {label!r} has {len(names)} cell names, {len(means)} means and "
                             f"{len(ses)} standard errors; it needs one of each per cell")
    rows = list(dict.fromkeys(name for names, _, _ in series.values() for name in names))
    row_of = {name: row for row, name in enumerate(rows)}
    fig, ax = subplots(figsize=(9, 0.32 * len(rows) + 1.5))
    offsets = np.linspace(-0.25, 0.25, len(series)) if len(series) > 1 else [0.0]
    for index, (offset, (label, (names, means, ses))) in enumerate(zip(offsets, series.items())):
        for at, (name, m, s) in enumerate(zip(names, means, ses)):
            m, s = np.atleast_1d(m), np.atleast_1d(s)
            ax.errorbar(m, np.full(len(m), row_of[name] + offset), xerr=2 * s, fmt="o", ms=3, lw=1,
                        label=None if at else label, color=f"C{index}")
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: never over the points
    fig.tight_layout()
    return png_bytes(fig)
