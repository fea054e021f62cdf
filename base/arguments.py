"""Validation of user-facing numbers, with errors that name the parameter and the accepted range."""

from __future__ import annotations

import inspect
import math
import numbers


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def finite(name: str, value) -> float:
    """``value`` as a float, or ValueError unless it is finite; the arguments and the TypeError are
    those of :func:`positive_finite`, without its bound."""
    x = _number(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return x


def positive_finite(name: str, value) -> float:
    """``value`` as a float, or ValueError unless 0 < value < inf.

    Args:
        name: the parameter's name, for the message.
        value: the value given.

    Returns:
        float.

    Raises:
        TypeError: ``value`` is not a real number (a bool is not one).
        ValueError: ``value`` is not finite and > 0.
    """
    x = _number(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return x


def in_interval(name: str, value, low: float, high: float, low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float, or ValueError unless it lies in the interval from ``low`` to ``high``
    (each end closed unless ``low_open`` / ``high_open``).

    Args:
        name: the parameter's name, for the message.
        value: the value given.
        low: the lower end.
        high: the upper end.
        low_open: whether ``low`` is excluded.
        high_open: whether ``high`` is excluded.

    Returns:
        float.

    Raises:
        TypeError: ``value`` is not a real number (a bool is not one).
        ValueError: ``value`` lies outside the interval.
    """
    x = _number(name, value)
    above = low < x if low_open else low <= x
    below = x < high if high_open else x <= high
    if not (above and below):
        raise ValueError(f"{name} must be a number in {'(' if low_open else '['}{low:g}, {high:g}"
                         f"{')' if high_open else ']'}, got {value!r}")
    return x


def integer_at_least(name: str, value, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int, or ValueError unless it is an integer >= ``minimum`` (and <= ``maximum``
    if given: a size beyond what can be held in memory).

    Args:
        name: the parameter's name, for the message.
        value: the value given.
        minimum: the smallest accepted value.
        maximum: the largest accepted value, or None.

    Returns:
        int.

    Raises:
        TypeError: ``value`` is not an integer (a bool is not one).
        ValueError: ``value`` < ``minimum`` or > ``maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}")
    return int(value)


def one_of(name: str, value, allowed) -> str:
    """``value``, or ValueError unless it is one of ``allowed``.

    Args:
        name: the parameter's name, for the message.
        value: the value given.
        allowed: the accepted values: a tuple, or a dict (its keys).

    Returns:
        ``value``.

    Raises:
        ValueError: ``value`` is not in ``allowed`` (the message lists them, sorted); an unhashable
            value (a list, a dict) is not in a dict of them either.
    """
    try:
        known = value in allowed
    except TypeError:  # an unhashable value looked up in a dict
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {sorted(allowed)}, got {value!r}")
    return value


def check_keywords(what: str, function, given, prefix: str = "", skip=("self",), also: str = "") -> None:
    """ValueError naming the first of ``given`` that ``function`` does not accept, and what it
    does accept (shown with ``prefix``). Names in ``skip`` are not user parameters.

    Args:
        what: what is checked, for the message (e.g. ``"sampler 'sgld'"``).
        function: the callable (or class) whose signature lists the accepted keywords.
        given: the keywords given (a dict or an iterable of names).
        prefix: shown before every name in the message.
        skip: parameter names that are not user parameters.
        also: what else it accepts, in words, added to the message (a target's ``noise_*`` parameters).

    Raises:
        ValueError: a keyword of ``given`` is not accepted.
    """
    parameters = inspect.signature(function).parameters
    accepted = [n for n, p in parameters.items() if n not in ("self", *skip) and p.kind is not p.VAR_KEYWORD]
    for key in given:
        if key not in accepted:
            shown = ", ".join(prefix + a for a in accepted) or "none"
            raise ValueError(f"{what} has no parameter {prefix + key!r}; it accepts: {shown}{also}")


def float_array(name: str, value, accepted: str = "a number or a vector of numbers"):
    """``value`` as a float64 array, or ValueError naming ``name`` and what it ``accepted`` where it is
    not numbers (a string, a dict, a ragged list).

    Args:
        name: the parameter's name, for the message.
        value: the value given.
        accepted: what the parameter accepts, for the message.

    Returns:
        a float64 ndarray (any shape).

    Raises:
        ValueError: ``value`` cannot be read as an array of numbers.
    """
    import numpy as np

    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be {accepted}, got {value!r}") from None


def number_or_vector(name: str, value, minimum: float = 0.0, minimum_open: bool = False):
    """``value`` as a float, or as a float64 vector (1-d), whose entries are finite and >= ``minimum``
    (> ``minimum`` if ``minimum_open``); ValueError otherwise. A per-coordinate hyperparameter (a
    friction, a noise estimate, an initial average) is either.

    Args:
        name: the parameter's name, for the message.
        value: a number or a 1-d array-like.
        minimum: the bound on every entry.
        minimum_open: whether ``minimum`` itself is excluded.

    Returns:
        a float, or a float64 array of shape (n,).

    Raises:
        ValueError: ``value`` is not a finite number or a non-empty vector within the bound.
    """
    import numpy as np

    accepted = f"a finite number {'>' if minimum_open else '>='} {minimum:g} or a vector of them"
    array = float_array(name, value, accepted)
    above = array > minimum if minimum_open else array >= minimum
    if array.ndim > 1 or array.size == 0 or not np.all(np.isfinite(array)) or not np.all(above):
        empty = " (an empty vector has none)" if array.size == 0 else ""
        raise ValueError(f"{name} must be {accepted}, got {value!r}{empty}")
    return float(array) if array.ndim == 0 else array


def vector_length_matches(name: str, value, position) -> None:
    """ValueError unless ``value`` is a number or a vector of the position's dimension.

    Args:
        name: the parameter's name, for the message.
        value: a number or a vector.
        position: a position, shape (..., dim).

    Raises:
        ValueError: ``value`` is a vector whose length is not ``dim``.
    """
    import numpy as np

    if np.ndim(value) == 1 and np.shape(value) != np.shape(position)[-1:]:
        raise ValueError(f"{name} has length {np.shape(value)[0]}, but the position has dimension "
                         f"{np.shape(position)[-1]}")
