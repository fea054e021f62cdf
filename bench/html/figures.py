"""Figures of the pages: :func:`pyplot` and :func:`png_bytes`, which every page's figure goes through, and each
gate cell's relative second-moment error beside the bias the method is allowed (``sgbench gate``,
``sgbench validate``)."""

from __future__ import annotations

import io

import numpy as np


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_bytes(fig, dpi=None, tight: bool = False) -> bytes:
    """The matplotlib figure ``fig`` as PNG bytes (``tight``: cropped to its content, legends outside the axes
    included); the figure is closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    pyplot().close(fig)
    return buffer.getvalue()


def error_bar_figure(series: dict[str, tuple], title: str) -> bytes:
    """PNG: per cell (rows) and coordinate, mean relative second-moment error +- 2 standard errors
    of each named series ``{label: (cell names, means, ses)}``, one vector per cell (cells may
    differ in dimension)."""
    plt = pyplot()
    first = next(iter(series.values()))
    names = list(first[0])
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(names) + 1.5))
    offsets = np.linspace(-0.25, 0.25, len(series))
    for offset, (label, (_, means, ses)) in zip(offsets, series.items()):
        for row, (m, s) in enumerate(zip(means, ses)):
            m, s = np.atleast_1d(m), np.atleast_1d(s)
            y = np.full(len(m), row + offset)
            ax.errorbar(m, y, xerr=2 * s, fmt="o", ms=3, lw=1, label=label if row == 0 else None,
                        color=f"C{list(series).index(label)}")
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("relative second-moment error per coordinate (± 2 se)")
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: never over the points
    fig.tight_layout()
    return png_bytes(fig)
