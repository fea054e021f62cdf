"""How the cells of a page's table are written, so that the table stays narrow enough to read: a vector
(list, tuple or array: per-coordinate estimates) as its first few numbers and its length
(:func:`vector_text`), an estimate beside its standard error as one ``value ± se`` (:func:`error_text`),
and text as escaped HTML that may break after "_" and "/" (:func:`breakable`), so that a long identifier
or path wraps inside its column instead of widening the table."""

from __future__ import annotations

import re

import numpy as np
from markupsafe import Markup, escape

from sgbench.bench.html.precision import value_with_error

SHOWN = 3  # the entries of a vector written before "…"
NO_BREAK = "\u00a0"  # inside "value ± se" and "… (N values)": a narrow column breaks between entries, not in one
BREAK_AFTER = re.compile(r"([_/])")  # where an identifier or a path may wrap
LONG = 60  # characters from which text is a paragraph: given a column wide enough to read (CSS span.long)


def breakable(text) -> Markup:
    """``text`` (``str()`` of it) escaped, with a line-break opportunity (``<wbr>``) after each "_" and "/",
    and inside ``<span class="long">`` from :data:`LONG` characters.

    Args:
        text: anything; Markup is kept as it is (trusted HTML).

    Returns:
        The HTML.
    """
    if isinstance(text, Markup):
        return text
    text = str(text)
    html = Markup(BREAK_AFTER.sub(r"\1<wbr>", str(escape(text))))
    return Markup('<span class="long">{}</span>').format(html) if len(text) >= LONG else html


def is_vector(value) -> bool:
    """Whether ``value`` is a list, tuple or array of at least one dimension."""
    return isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.ndim > 0)


def _entry(value) -> str:
    """One entry of a vector: a float to 3 significant digits, anything else as text."""
    if isinstance(value, float | np.floating):
        return f"{value:.3g}"
    return str(value)


def _joined(texts: list[str]) -> str:
    """At most :data:`SHOWN` of ``texts``, then "… (N values)" (unbreakable) when there are more."""
    if len(texts) <= SHOWN:
        return ", ".join(texts)
    return ", ".join(texts[:SHOWN]) + f", …{NO_BREAK}({len(texts)}{NO_BREAK}values)"


def vector_text(values) -> str:
    """A vector as a short line: ``[0.0123, 0.45, 1.2]`` reads ``0.0123, 0.45, 1.2`` and a longer one
    ``0.0123, 0.45, 1.2, … (10 values)``; an array of several dimensions is read flat.

    Args:
        values: a list, tuple or array.

    Returns:
        The text ("" for an empty vector).
    """
    return _joined([_entry(v) for v in np.ravel(np.asarray(values, dtype=object))])


def error_text(value, se) -> str:
    """An estimate with its standard error, each entry to the precision the error allows
    (:func:`~sgbench.bench.html.precision.value_with_error`) with no-break spaces around "±" (a wrapping
    column keeps each entry on one line); vectors (broadcast against each other) are shortened as by
    :func:`vector_text`.

    Args:
        value: a number or a vector of them.
        se: its standard error, of the same shape or a scalar.

    Returns:
        The text, e.g. ``0.012 ± 0.002`` or ``0.012 ± 0.002, 0.31 ± 0.01, … (8 values)``.
    """
    if not (is_vector(value) or is_vector(se)):
        return value_with_error(value, se).replace(" ", NO_BREAK)
    values, errors = np.broadcast_arrays(np.asarray(value, dtype=float), np.asarray(se, dtype=float))
    return _joined([value_with_error(v, s).replace(" ", NO_BREAK) for v, s in zip(values.ravel(), errors.ravel())])
