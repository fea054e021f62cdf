"""The suite's one plotting setup: every figure is a ``matplotlib.figure.Figure`` made here with matplotlib's
object-oriented API, and turned into PNG bytes here, so drawing one leaves the caller's matplotlib as it was.

pyplot is never imported and ``matplotlib.use`` never called: a user plotting interactively (Jupyter, a GUI
backend) who calls one of the suite's figure functions keeps their backend. A ``Figure`` made directly, with an
Agg canvas attached to it alone, renders with Agg whatever the process's backend, and pyplot's figure manager
never tracks it, so nothing needs closing: it is freed with its last reference. Its settings (dpi, fonts,
layout) come from ``matplotlib.rcParams`` as a pyplot figure's do, so a figure looks the same either way.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib loads when a figure is drawn, not when the suite is imported
    from matplotlib.figure import Figure


def new_figure(figsize: tuple[float, float], dpi: float | None = None, layout: str | None = None) -> Figure:
    """A figure without axes, outside pyplot, on an Agg canvas of its own (so ``fig.canvas.draw()`` renders it, as
    a pyplot figure's canvas does on the Agg backend).

    Args:
        figsize: (width, height) in inches.
        dpi: dots per inch (None: ``rcParams["figure.dpi"]``).
        layout: matplotlib's layout engine, ``"constrained"``, ``"tight"`` or None (``rcParams``' default).

    Returns:
        The ``matplotlib.figure.Figure``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], dpi: float | None = None,
             layout: str | None = None, **grid: Any) -> tuple[Figure, Any]:
    """A figure and its grid of axes, as ``matplotlib.pyplot.subplots`` makes them, outside pyplot.

    Args:
        nrows: rows of axes.
        ncols: columns of axes.
        figsize: (width, height) in inches.
        dpi: dots per inch (None: ``rcParams["figure.dpi"]``).
        layout: matplotlib's layout engine (see :func:`new_figure`).
        **grid: ``Figure.subplots``' options (``squeeze``, ``sharex``, ``sharey``, ...).

    Returns:
        (figure, axes): one ``Axes``, or an array of them, as ``Figure.subplots`` returns them.
    """
    fig = new_figure(figsize, dpi=dpi, layout=layout)
    return fig, fig.subplots(nrows, ncols, **grid)


def png_bytes(fig: Figure, dpi: float | None = None, tight: bool = False) -> bytes:
    """The figure as PNG bytes.

    Args:
        fig: a matplotlib figure.
        dpi: dots per inch of the image (None: ``rcParams["savefig.dpi"]``, by default the figure's own).
        tight: crop the image to the figure's content (legends outside the axes included).

    Returns:
        The PNG file's bytes.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    return buffer.getvalue()
