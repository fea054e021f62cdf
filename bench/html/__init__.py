"""One HTML writer for every page the suite writes (the run report, gate, validate, power, speed,
reproductions): a Jinja2 template (``templates/page.html.j2``) and one style sheet
(``templates/style.css``), so every page has one look: a title, an optional headline (green when
passed, red when failed), sections of tables (pandas) and figures (matplotlib PNGs, embedded), and
when it was written.

A table fits a 1280-pixel window: vector cells are shortened, text wraps after "_" and "/", and a
table still too wide scrolls sideways in its box (:mod:`sgbench.bench.html.cells`). An estimate and its
standard error can share one column, rounded to the precision the error allows
(:mod:`sgbench.bench.html.precision`), and a legend under a table says what its columns are.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from sgbench.base import provenance
from sgbench.bench.html.cells import breakable, error_text, is_vector, vector_text
from sgbench.bench.html.figures import error_bar_figure
from sgbench.bench.html.precision import value_with_error

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def _template():
    import jinja2

    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                     undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return environment.get_template("page.html.j2")


def _is_text(value) -> bool:
    """Whether a cell is written as text: not a number, a truth value or a missing value."""
    missing = value is None or (pd.api.types.is_scalar(value) and pd.isna(value))
    return not (missing or isinstance(value, bool | int | float | np.bool_ | np.number))


def _shown(frame: pd.DataFrame, errors: Mapping[str, str], escape_cells: bool) -> pd.DataFrame:
    """``frame`` as its table shows it (:mod:`sgbench.bench.html.cells`): each value column of ``errors`` written
    with its standard-error column (which is dropped), every vector cell shortened, and (``escape_cells``)
    text cells escaped and breakable; numbers and missing values as they are."""
    missing = sorted({*errors, *errors.values()} - set(frame.columns), key=str)
    if missing:
        raise ValueError(f"errors names columns the table does not have: {', '.join(map(str, missing))}")
    shown = frame.copy()
    for value, se in errors.items():
        shown[value] = pd.Series([error_text(v, s) for v, s in zip(frame[value], frame[se])], index=frame.index,
                                 dtype=object)
    shown = shown.drop(columns=list(errors.values()))
    for position in range(shown.shape[1]):
        column = shown.iloc[:, position]
        if pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype):
            cells = [vector_text(v) if is_vector(v) else v for v in column]
            cells = [breakable(v) if escape_cells and _is_text(v) else v for v in cells]
            shown.isetitem(position, pd.Series(cells, index=column.index, dtype=object))
    return shown


def _legend(columns, legend: Mapping[str, str]) -> Markup:
    """A definition list of the columns among ``columns`` that ``legend`` describes, in table order."""
    items = Markup("").join(Markup("<dt>{}</dt><dd>{}</dd>").format(name, legend[name])
                            for name in columns if name in legend)
    return Markup('\n<dl class="legend">{}</dl>').format(items) if items else Markup("")


def table(frame: pd.DataFrame, classes: str = "runs verdict", escape_cells: bool = True,
          errors: Mapping[str, str] | None = None, legend: Mapping[str, str] | None = None) -> Markup:
    """``frame`` as an HTML table inside a box that scrolls sideways should the table still be wider than
    the page, or "(none)" when it is empty.

    Numbers are written to 4 significant digits and missing values blank; a vector cell (list, tuple or
    array) as its first few entries and its length; text and the column names may wrap after "_" and "/".

    Args:
        frame: the rows.
        classes: the table's CSS classes (``verdict``: cells left-aligned and wrapping; ``report``: on one line).
        escape_cells: whether cell text is escaped (False: text cells are trusted HTML, written as they are).
        errors: ``{value column: its standard-error column}``: each such value is written ``value ± se`` to
            the precision its error allows (:func:`~sgbench.bench.html.precision.value_with_error`) under the value
            column's name, and the standard-error column is left out.
        legend: ``{column: a one-line description}``, written under the table as a definition list in the
            table's column order; columns the table does not have are left out, so one legend can serve
            tables with optional columns.

    Returns:
        The table (and its legend) as Markup. ValueError when ``errors`` names a column ``frame`` lacks.
    """
    if not len(frame):
        return Markup("<p>(none)</p>")
    shown = _shown(frame, errors or {}, escape_cells)
    columns = shown.columns
    shown.columns = [breakable(name) for name in columns]
    html = shown.to_html(index=False, border=0, classes=classes, escape=False, na_rep="",
                         float_format=lambda v: f"{v:.4g}")
    return Markup('<div class="table">\n{}\n</div>').format(Markup(html)) + _legend(columns, legend or {})


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
                              written=provenance.utc_now())
    path.write_text(page, encoding="utf-8")
    return path


def write_page(path: Path, title: str, verdict: str, passed: bool, tables: dict[str, pd.DataFrame],
               figures: dict[str, bytes], notes: str = "", legends: Mapping[str, Mapping[str, str]] | None = None,
               errors: Mapping[str, Mapping[str, str]] | None = None) -> Path:
    """A verdict page (gate, validate, power, speed): the verdict, then each table and each figure under its
    heading.

    Args:
        path: the file to write.
        title: the page's title.
        verdict: the headline.
        passed: colours the headline green (True) or red (False).
        tables: ``{heading: frame}``.
        figures: ``{heading: PNG bytes}``, after the tables.
        notes: a line under the headline.
        legends: ``{table heading: {column: description}}``: the words under a table (:func:`table`'s ``legend``).
        errors: ``{table heading: {value column: standard-error column}}``: columns of a table written as
            ``value ± se`` (:func:`table`'s ``errors``).

    Returns:
        ``path``. ValueError when ``legends`` or ``errors`` name a heading ``tables`` lacks.
    """
    legends, errors = legends or {}, errors or {}
    unknown = sorted({*legends, *errors} - set(tables))
    if unknown:
        raise ValueError(f"legends or errors name tables the page does not have: {', '.join(unknown)}")
    sections = [(heading, table(frame, errors=errors.get(heading), legend=legends.get(heading)))
                for heading, frame in tables.items()]
    sections += [(heading, image(png, heading)) for heading, png in figures.items()]
    return render_page(path, title, sections, headline=verdict, passed=passed, intro=notes)


__all__ = ["error_bar_figure", "image", "render_page", "table", "value_with_error", "write_page"]
