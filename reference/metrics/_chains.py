"""Validation of the inputs of the sample-quality metrics: draws (chains, draws, dim) and per-chain
streamed :class:`~sgbench.reference.metrics.moments.Moments`.

Non-finite draws are reported (how many chains and draws) and never dropped: a metric of the
finite draws only would silently score a diverged run as a healthy one. The driver reports
diverged chains; leave them out explicitly before calling a metric.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics.moments import Moments


def _first(indices: np.ndarray, limit: int = 10) -> str:
    shown = indices[:limit].tolist()
    return f"{shown}{' ...' if indices.size > limit else ''}"


def chain_draws(samples, name: str = "samples", *, min_chains: int = 1, min_draws: int = 1,
                allow_single_chain: bool = False) -> np.ndarray:
    """``samples`` as a float64 array (chains, draws, dim), or ValueError naming ``name``.

    With ``allow_single_chain`` an array (draws, dim) is read as one chain. Requires at least
    ``min_chains`` chains and ``min_draws`` draws per chain and only finite values.

    Args:
        samples: draws, shape (chains, draws, dim) (or (draws, dim) with ``allow_single_chain``).
        name: the argument's name, for the message.
        min_chains: the least number of chains accepted.
        min_draws: the least number of draws per chain accepted.
        allow_single_chain: whether a 2-d array (draws, dim) is read as one chain.

    Returns:
        float64 array of shape (chains, draws, dim).

    Raises:
        ValueError: another shape, too few chains or draws, or a value that is not finite (the message counts the
            draws and chains that have one).
    """
    x = np.asarray(samples, dtype=np.float64)
    if allow_single_chain and x.ndim == 2:
        x = x[None]
    if x.ndim != 3 or x.shape[-1] < 1:
        accepted = "(draws, dim) or (chains, draws, dim)" if allow_single_chain else "(chains, draws, dim)"
        raise ValueError(f"{name} must have shape {accepted} with dim >= 1, got shape {x.shape}"
                         + ("" if allow_single_chain else "; pass one chain as x[None]"))
    chains, draws, _ = x.shape
    if chains < min_chains:
        raise ValueError(f"{name} must hold at least {min_chains} chains, got {chains} (shape {x.shape})")
    if draws < min_draws:
        raise ValueError(f"{name} must hold at least {min_draws} draws per chain, got {draws} (shape {x.shape})")
    bad_draw = ~np.all(np.isfinite(x), axis=-1)
    if bad_draw.any():
        bad_chains = np.flatnonzero(bad_draw.any(axis=1))
        raise ValueError(
            f"{name} has non-finite values (NaN or inf) in {int(bad_draw.sum())} of {chains * draws} draws, "
            f"in {bad_chains.size} of {chains} chains (chains {_first(bad_chains)}); they are not dropped: "
            "leave the diverged chains out explicitly before computing this metric")
    return x


def chain_moments(moments: Moments, name: str = "moments", *, min_chains: int = 1, min_count: int = 1) -> Moments:
    """Per-chain ``moments`` (count (chains,), mean (chains, dim), ...) as float64 NumPy arrays, or
    ValueError naming ``name``: at least ``min_chains`` chains, each with ``count >= min_count``
    draws, and only finite values.

    Args:
        moments: per-chain Moments (count (chains,), mean, m2, mean_sq, m2_sq (chains, dim)).
        name: the argument's name, for the message.
        min_chains: the least number of chains accepted.
        min_count: the least number of draws each chain must count.

    Returns:
        the Moments with float64 NumPy fields.

    Raises:
        TypeError: ``moments`` is not a Moments.
        ValueError: not per chain, too few chains or draws, or a value that is not finite.
    """
    if not isinstance(moments, Moments):
        raise TypeError(f"{name} must be a sgbench.reference.metrics.Moments, got {type(moments).__name__}")
    m = Moments(*(np.asarray(field, dtype=np.float64) for field in moments))
    if m.mean.ndim != 2 or m.count.shape != m.mean.shape[:1]:
        raise ValueError(f"{name} must be per chain: count (chains,) and mean (chains, dim), got shapes "
                         f"{m.count.shape} and {m.mean.shape}")
    if m.count.shape[0] < min_chains:
        raise ValueError(f"{name} must hold at least {min_chains} chains, got {m.count.shape[0]}")
    short = np.flatnonzero(m.count < min_count)
    if short.size:
        raise ValueError(f"{name} must count at least {min_count} draws in every chain; chains {_first(short)} "
                         f"count {m.count[short][:10].tolist()}")
    bad = np.flatnonzero(~np.all([np.isfinite(f).reshape(f.shape[0], -1).all(axis=1) for f in m], axis=0))
    if bad.size:
        raise ValueError(f"{name} has non-finite values in {bad.size} of {m.count.shape[0]} chains "
                         f"(chains {_first(bad)}); they are not dropped: leave those chains out explicitly")
    return m


def pooled_moments(moments: Moments) -> Moments:
    """The moments of all chains' draws together (Chan et al.'s merge over the chain axis).

    Args:
        moments: per-chain Moments (count (chains,), the other fields (chains, dim)), at least one chain.

    Returns:
        the pooled Moments: count a number, the other fields (dim,).
    """
    pooled = Moments(*(field[0] for field in moments))
    for c in range(1, moments.count.shape[0]):
        pooled = pooled.merge(Moments(*(field[c] for field in moments)))
    return pooled


def check_dim(name: str, got: int, expected: int, what: str) -> None:
    """ValueError unless ``got == expected`` dimensions.

    Args:
        name: the argument whose dimension is checked, for the message.
        got: its dimension.
        expected: the dimension it must have.
        what: what has the expected dimension, for the message (e.g. ``"the truth"``).

    Raises:
        ValueError: ``got != expected``.
    """
    if got != expected:
        raise ValueError(f"{name} has dimension {got}, {what} has dimension {expected}")
