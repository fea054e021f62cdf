"""HTML pages of verdicts (``sgbench gate``, ``sgbench validate``): the verdict, tables (pandas)
and a figure of each cell's relative second-moment error beside the bias the method is allowed."""

from __future__ import annotations

import base64
import datetime
import html
import io
from pathlib import Path

import numpy as np
import pandas as pd

from bench.sweeps.report import STYLE

# verdict tables hold text (cell names, reasons): left-aligned, top-aligned, long names broken
TABLE_STYLE = """\
table.verdict td { text-align: left; vertical-align: top; overflow-wrap: break-word; min-width: 4em; }
table.verdict th { text-align: left; }
"""


def error_bar_figure(series: dict[str, tuple], title: str) -> bytes:
    """PNG: per cell (rows) and coordinate, mean relative second-moment error +- 2 standard errors
    of each named series ``{label: (cell names, means, ses)}``, one vector per cell (cells may
    differ in dimension)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def write_page(path: Path, title: str, verdict: str, passed: bool, tables: dict[str, pd.DataFrame],
               figures: dict[str, bytes], notes: str = "") -> Path:
    """Write one self-contained HTML page; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    colour = "#1a7f37" if passed else "#cf222e"
    parts = [f'<p style="font-size:1.3em;color:{colour}"><strong>{html.escape(verdict)}</strong></p>']
    if notes:
        parts.append(f"<p>{html.escape(notes)}</p>")
    for heading, frame in tables.items():
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(frame.to_html(index=False, border=0, classes="runs verdict",
                                   float_format=lambda v: f"{v:.4g}") if len(frame) else "<p>(none)</p>")
    for heading, png in figures.items():
        encoded = base64.b64encode(png).decode("ascii")
        parts.append(f'<h2>{html.escape(heading)}</h2>\n<img alt="{html.escape(heading)}" '
                     f'src="data:image/png;base64,{encoded}">')
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    parts.append(f"<p><small>written {stamp} UTC</small></p>")
    page = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>'
            f"\n<style>\n{STYLE}{TABLE_STYLE}</style>\n</head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
            + "\n".join(parts) + "\n</body>\n</html>\n")
    path.write_text(page, encoding="utf-8")
    return path
