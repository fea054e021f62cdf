r"""The running :math:`b^2` curve and the gradient evaluations a sampler needs to reach a small
bias, following Hoffman & Sountsov (2022, "Tuning-free generalized Hamiltonian Monte Carlo",
AISTATS), whose :math:`b^2` the SMILE paper (section 3.2,
appendix C) reports; :math:`b^2` itself is ``sgbench.reference.metrics.b2``.

At checkpoints :math:`k = 1..K` (after :math:`g_k` gradient evaluations) a driver records the
running estimate :math:`\hat E_k[x^2]` of each chain (the average of its draws so far);
:math:`b^2(k)` is the :math:`b^2` of that running average (mean or max over dimensions).

- per chain: :math:`b^2_c(k) = b^2(\hat E_{c,k}[x^2])`;
- pooled: :math:`b^2(k) = b^2(\frac1C\sum_c \hat E_{c,k}[x^2])`, the running average of all
  chains together (equal weights: chains of equal length; leave diverged chains out first).

Gradient evaluations to threshold :math:`\tau` (Hoffman & Sountsov use :math:`\tau = 0.01`):
:math:`g_{k^*}` with :math:`k^* = \min\{k : b^2(j) < \tau \text{ for all } j \ge k\}`, the first
checkpoint after which the curve stays below :math:`\tau` up to the last checkpoint; ``inf`` if the
last checkpoint is not below :math:`\tau` (never reached, or a NaN: a NaN is never "below").
"Stays" can only be judged up to the last recorded checkpoint.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sgbench.base.arguments import one_of, positive_finite
from sgbench.reference.metrics import register
from sgbench.reference.metrics.b2 import b2

OVER_DIMS = ("mean", "max")


class B2Curve(NamedTuple):
    """b^2 of running averages: per chain (chains, checkpoints) and pooled (checkpoints,)."""

    per_chain: np.ndarray
    pooled: np.ndarray


@register("b2_curve")
def b2_curve(running_second_moments, truth, over_dims: str = "mean") -> B2Curve:
    """b^2 curves of running estimates of E[x^2], shaped (chains, checkpoints, dim), reduced
    ``over_dims`` ("mean" or "max"); NaN estimates are an error (reported with their count).

    Args:
        running_second_moments: running estimates of E[x^2], shape (chains, checkpoints, dim), at least one chain
            and one checkpoint.
        truth: the target's Truth.
        over_dims: ``"mean"`` or ``"max"``.

    Returns:
        the B2Curve: ``per_chain`` (chains, checkpoints) and ``pooled`` (checkpoints,).

    Raises:
        ValueError: another shape, a NaN estimate, an unknown ``over_dims``, or a dimension other than the truth's.
    """
    one_of("over_dims", over_dims, set(OVER_DIMS))
    m = np.asarray(running_second_moments, dtype=np.float64)
    if m.ndim != 3:
        raise ValueError(f"running_second_moments must have shape (chains, checkpoints, dim), got shape {m.shape}")
    if m.shape[0] < 1 or m.shape[1] < 1:
        raise ValueError(f"running_second_moments must hold at least 1 chain and 1 checkpoint, got shape {m.shape}")
    nan = np.isnan(m).any(axis=-1)
    if nan.any():
        raise ValueError(f"running_second_moments has NaN at {int(nan.sum())} of {nan.size} (chain, checkpoint) "
                         f"pairs, in chains {np.flatnonzero(nan.any(axis=1)).tolist()[:10]}; they are not dropped")
    return B2Curve(per_chain=b2(m, truth, over_dims), pooled=b2(m.mean(axis=0), truth, over_dims))


@register("gradient_evaluations_to_threshold")
def gradient_evaluations_to_threshold(curve, grad_evals, threshold: float = 0.01):
    """Gradient evaluations until ``curve`` (..., checkpoints) drops below ``threshold`` and stays
    there (definition in the module docstring); ``grad_evals``: the non-decreasing counts at the
    checkpoints, broadcastable to ``curve`` (e.g. (checkpoints,) or (chains, checkpoints)).
    A float for one curve, else an array of curve.shape[:-1]; inf where never reached.

    Args:
        curve: b^2 curves, shape (..., checkpoints), at least one checkpoint.
        grad_evals: the gradient evaluations at the checkpoints, finite, >= 0 and non-decreasing, broadcastable to
            ``curve``.
        threshold: tau, > 0.

    Returns:
        the gradient evaluations to threshold: a float for one curve, else an array of shape ``curve.shape[:-1]``;
        inf where the last checkpoint is not below ``threshold``.

    Raises:
        ValueError: ``threshold`` is not finite and > 0, ``curve`` has no checkpoint, or ``grad_evals`` does not
            broadcast or is not finite, >= 0 and non-decreasing.
    """
    threshold = positive_finite("threshold", threshold)
    curve = np.asarray(curve, dtype=np.float64)
    if curve.ndim < 1 or curve.shape[-1] < 1:
        raise ValueError(f"curve must have at least one checkpoint on its last axis, got shape {curve.shape}")
    g = np.asarray(grad_evals, dtype=np.float64)
    try:
        g = np.broadcast_to(g, curve.shape)
    except ValueError:
        raise ValueError(f"grad_evals of shape {g.shape} does not broadcast to the curve's shape {curve.shape}; "
                         "give one count per checkpoint") from None
    if not np.all(np.isfinite(g)) or np.any(g < 0) or np.any(np.diff(g, axis=-1) < 0):
        raise ValueError("grad_evals must be finite, >= 0 and non-decreasing along the checkpoints")
    below = curve < threshold
    stays_below = np.flip(np.logical_and.accumulate(np.flip(below, axis=-1), axis=-1), axis=-1)
    first = np.argmax(stays_below, axis=-1)
    reached = np.take_along_axis(g, first[..., None], axis=-1)[..., 0]
    result = np.where(stays_below[..., -1], reached, np.inf)
    return float(result) if result.ndim == 0 else result
