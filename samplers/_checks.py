"""Validation of user-facing numbers, with errors that name the parameter and the accepted range."""

from __future__ import annotations

import math
import numbers


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def positive_finite(name: str, value) -> float:
    """``value`` as a float, or ValueError unless 0 < value < inf."""
    x = _number(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return x


def integer_at_least(name: str, value, minimum: int) -> int:
    """``value`` as an int, or ValueError unless it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def one_of(name: str, value, allowed) -> str:
    """``value``, or ValueError unless it is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {value!r}")
    return value
