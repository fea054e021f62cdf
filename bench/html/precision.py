"""A value written to the precision its standard error allows: :func:`value_with_error`, so that
``0.0123456`` with standard error ``0.0021`` reads ``0.012 ± 0.002`` rather than digits the estimate
does not have."""

from __future__ import annotations

import math

FALLBACK = ".4g"  # a value whose standard error is unknown: the page's usual 4 significant digits
SCIENTIFIC = (-4, 6)  # decimal exponents outside [-4, 6) are written as (m ± s)eN


def _exponent(x: float, digits: int = 1) -> int:
    """The decimal exponent of ``x`` once rounded to ``digits`` significant digits (0.0096 -> -2 for one)."""
    return int(f"{x:.{digits - 1}e}".split("e")[1])


def value_with_error(value, se, digits: int = 1) -> str:
    """``value ± se`` with ``se`` rounded to ``digits`` significant digits and ``value`` to the
    same decimal place (``0.0123456, 0.0021`` -> ``"0.012 ± 0.002"``; ``12345.6, 230`` ->
    ``"12300 ± 200"``), in the form ``(1.23 ± 0.02)e-7`` when the larger of the two is below
    1e-4 or from 1e6 up.

    Args:
        value: the estimate (a number; None or NaN is missing).
        se: its standard error; when it is None, not finite or not positive the precision is unknown
            and the value alone is written to 4 significant digits.
        digits: significant digits kept of ``se`` (1, or 2 to show more of the error's own size).

    Returns:
        The text; "" for a missing value, "inf" or "-inf" for an infinite one.
    """
    if value is None or math.isnan(value):
        return ""
    value = float(value)
    if math.isinf(value) or se is None or not math.isfinite(se) or se <= 0:
        return format(value, FALLBACK)
    se = float(se)
    place = digits - 1 - _exponent(se, digits)  # decimals kept: the last significant digit of se
    value, se = round(value, place) + 0.0, round(se, place)  # + 0.0: no "-0.0"
    magnitude = _exponent(max(abs(value), se), 15)  # of the larger, unrounded: 9.96e-7 -> -7
    if SCIENTIFIC[0] <= magnitude < SCIENTIFIC[1]:
        decimals = max(place, 0)
        return f"{value:.{decimals}f} ± {se:.{decimals}f}"
    scale, decimals = 10.0 ** magnitude, place + magnitude
    return f"({value / scale + 0.0:.{decimals}f} ± {se / scale:.{decimals}f})e{magnitude}"
