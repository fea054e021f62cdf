"""Input validation shared by the checks: errors name the parameter and the accepted range."""

from __future__ import annotations

import numpy as np

from sgbench.base.arguments import in_interval

ALTERNATIVES = ("two-sided", "greater", "less")


def check_alpha(alpha, name: str = "alpha") -> float:
    """``alpha`` as a float, or ValueError unless 0 < alpha < 1."""
    return in_interval(name, alpha, 0.0, 1.0, low_open=True, high_open=True)


def finite_array(name: str, value) -> np.ndarray:
    """``value`` as a float64 array, or ValueError naming ``name`` unless every entry is finite."""
    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {int(np.sum(~np.isfinite(array)))} non-finite entries")
    return array


def replicates(name: str, value) -> np.ndarray:
    """Independent replicates (replicates, ...coords) as float64, or ValueError: at least 2, finite."""
    x = finite_array(name, value)
    if x.ndim < 1 or x.shape[0] < 2:
        raise ValueError(f"{name} must have shape (replicates, ...) with at least 2 replicates, got shape {x.shape}")
    return x


def on_coordinates(name: str, value, shape: tuple, minimum: float | None = None, positive: bool = False):
    """``value`` broadcast to the coordinates' ``shape`` (float64), or ValueError naming ``name``:
    not broadcastable, non-finite, below ``minimum``, or not > 0 with ``positive``."""
    array = finite_array(name, value)
    try:
        fits = np.broadcast_shapes(array.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name} must have the coordinates' shape {tuple(shape)} (or broadcast to it), "
                         f"got shape {array.shape}")
    if minimum is not None and np.any(array < minimum):
        raise ValueError(f"{name} must be >= {minimum:g} (finite), got minimum {array.min():.6g}")
    if positive and np.any(array <= 0):
        raise ValueError(f"{name} must be > 0 (finite), got minimum {array.min():.6g}")
    return np.broadcast_to(array, shape).astype(np.float64)


def tail_probability(alpha: float, comparisons: int, alternative: str) -> float:
    """The level of each one-sided test of a Bonferroni family of ``comparisons`` coordinates:
    alpha / (2 m) for two-sided tests (both sides), alpha / m for one-sided ones."""
    return alpha / (2 * comparisons) if alternative == "two-sided" else alpha / comparisons


def decide(upper, lower, critical: float, alternative: str):
    """Per coordinate: (passed, excess). ``upper`` standardizes against expected + allowance (large
    when the estimate lies above), ``lower`` against expected - allowance; ``excess`` is the larger
    of ``upper`` and ``-lower`` over the sides the alternative tests, and a coordinate passes iff
    it is <= ``critical``."""
    excess = np.full(np.shape(upper), -np.inf)
    if alternative in ("two-sided", "greater"):
        excess = np.maximum(excess, upper)
    if alternative in ("two-sided", "less"):
        excess = np.maximum(excess, -np.asarray(lower))
    return excess <= critical, excess


def worst(excess) -> tuple[float, int]:
    """(the largest excess, its flat index); NaN propagates (a NaN statistic fails)."""
    flat = np.ravel(excess)
    if np.any(np.isnan(flat)):
        index = int(np.flatnonzero(np.isnan(flat))[0])
        return float("nan"), index
    index = int(np.argmax(flat))
    return float(flat[index]), index
