"""One HTML writer for every page the suite writes (the run report, gate, validate, power, speed,
reproductions): a Jinja2 template (``templates/page.html.j2``) and one style sheet
(``templates/style.css``), so every page has one look: a title, an optional headline (green when
passed, red when failed), sections of tables (pandas) and figures (matplotlib PNGs, embedded), and
when it was written.
"""

from __future__ import annotations

import base64
import datetime
import functools
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape

from bench.html.figures import error_bar_figure

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def _template():
    import jinja2

    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                     undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return environment.get_template("page.html.j2")


def table(frame: pd.DataFrame, classes: str = "runs verdict", escape_cells: bool = True) -> Markup:
    """``frame`` as an HTML table (numbers to 4 significant digits, missing values blank), or "(none)"
    when it is empty."""
    if not len(frame):
        return Markup("<p>(none)</p>")
    return Markup(frame.to_html(index=False, border=0, classes=classes, escape=escape_cells, na_rep="",
                                float_format=lambda v: f"{v:.4g}"))


def image(png: bytes, alt: str) -> Markup:
    """A PNG embedded in the page (the page stays one self-contained file)."""
    encoded = base64.b64encode(png).decode("ascii")
    return Markup(f'<img alt="{escape(alt)}" src="data:image/png;base64,{encoded}">')


def render_page(path: Path, title: str, sections, headline: str = "", passed: bool | None = None,
                intro: str = "") -> Path:
    """Write one page.

    Args:
        path: the file to write (its folder is made).
        title: the page's title and first heading.
        sections: ``(heading, body)`` pairs; a body is text (escaped) or ``Markup`` (from :func:`table`,
            :func:`image`, or trusted HTML).
        headline: the verdict or the main result, shown first.
        passed: colours the headline (None: neutral).
        intro: a line under the headline.

    Returns:
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    page = _template().render(title=title, headline=headline, passed=passed, intro=intro, sections=list(sections),
                              style=Markup((TEMPLATES / "style.css").read_text(encoding="utf-8")),
                              written=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))
    path.write_text(page, encoding="utf-8")
    return path


def write_page(path: Path, title: str, verdict: str, passed: bool, tables: dict[str, pd.DataFrame],
               figures: dict[str, bytes], notes: str = "") -> Path:
    """A verdict page (gate, validate, power, speed): the verdict, then each table and each figure
    under its heading; returns its path."""
    sections = [(heading, table(frame)) for heading, frame in tables.items()]
    sections += [(heading, image(png, heading)) for heading, png in figures.items()]
    return render_page(path, title, sections, headline=verdict, passed=passed, intro=notes)


__all__ = ["error_bar_figure", "image", "render_page", "table", "write_page"]
