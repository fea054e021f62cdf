r"""Samples paired with their scores :math:`s(x) = \nabla_x \log p(x)`, the input of the Stein
discrepancies (``ksd``, ``fssd``): validation, thinning, pooling over chains, and the scores of a
``targets`` Target, full batch or stochastic.

The MAMBA paper (section 3 "Estimating KSD/FSSD" and appendix B.2)
computes these discrepancies either from full-batch gradients of thinned samples (its experiments:
thin by 10) or from the stochastic gradients of the sampler. Stochastic scores
:math:`\tilde s_i = s(x_i) + e_i` with zero-mean noise drawn independently for each sample leave
every term of a Stein statistic that is linear in each of two *different* samples' scores
unbiased (U-statistics), and add :math:`E\lVert e_i\rVert^2`-terms to the diagonal ones
(V-statistics); see ``ksd``.

Samples are (n, d) (one chain) or (chains, n, d) with draws along the second-to-last axis.
"""

from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.base.arguments import integer_at_least, one_of
from sgbench.base.draws import jax_draws
from sgbench.base.float64 import in_float64_mode
from sgbench.reference.metrics._chains import chain_draws

OVER_CHAINS = ("pooled", "per_chain")
# Samples whose exact gradients are evaluated together: bounds the (batch, N) intermediates of
# data targets (full-batch likelihood gradients over N data).
SCORE_BATCH = 256
# Target -> its compiled full-batch score function: the KSDs of a tuning run score many arms' draws against one
# target, and a fresh closure per call was traced and compiled anew each time (1.3 s each at 2520 parameters).
# Weak keys: the entry goes with the target; keyed by the object, not its parameters, since a target's methods
# can be replaced on one object.
_FULL_BATCH_SCORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _full_batch_scores(target):
    """The jitted ``flat (n, d) -> grad_logdensity`` of each row of ``target``, in batches of ``SCORE_BATCH``."""
    try:
        return _FULL_BATCH_SCORES[target]
    except KeyError:
        function = jax.jit(lambda flat: jax.lax.map(target.grad_logdensity, flat, batch_size=SCORE_BATCH))
        _FULL_BATCH_SCORES[target] = function
        return function


def thin_draws(x: np.ndarray, thin: int) -> np.ndarray:
    """Every ``thin``-th draw along axis -2, the last of each group (draws thin-1, 2 thin-1, ...),
    as the drivers thin (``sgbench.bench.running.config.RunConfig``).

    Args:
        x: draws, shape (..., n, d).
        thin: keep every ``thin``-th draw, an integer in [1, n].

    Returns:
        shape (..., n // thin, d) (a view).

    Raises:
        ValueError: ``thin`` is not an integer in [1, n].
    """
    integer_at_least("thin", thin, 1)
    if thin > x.shape[-2]:
        raise ValueError(f"thin must be an integer in [1, n={x.shape[-2]}], got {thin}")
    return x[..., thin - 1 :: thin, :]


def check_samples_and_scores(samples, scores, thin: int = 1, min_draws: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``samples`` and ``scores`` of the same shape, (n, d) or (chains, n, d), as float64 arrays
    (chains, n', d) thinned by ``thin`` with n' >= ``min_draws``. ValueError on a shape mismatch or on
    non-finite values (their count is reported; nothing is dropped).

    Args:
        samples: draws, shape (n, d) or (chains, n, d).
        scores: their scores, the shape of ``samples``.
        thin: keep every ``thin``-th draw, >= 1.
        min_draws: the least number of draws per chain after thinning.

    Returns:
        (samples, scores): float64 arrays of shape (chains, n', d).

    Raises:
        ValueError: a shape mismatch or another shape, a non-finite value, a bad ``thin``, or too few draws.
    """
    x = chain_draws(samples, "samples", allow_single_chain=True)
    if np.shape(scores) != np.shape(samples):
        raise ValueError(f"scores must have the shape of samples {np.shape(samples)}, got shape {np.shape(scores)}")
    s = chain_draws(scores, "scores", allow_single_chain=True)
    x, s = thin_draws(x, thin), thin_draws(s, thin)
    if x.shape[1] < min_draws:
        raise ValueError(f"samples must hold at least {min_draws} draws per chain after thinning by {thin}, "
                         f"got {x.shape[1]}")
    return x, s


def chain_groups(x: np.ndarray, over_chains: str) -> np.ndarray:
    """(groups, n', d) of draws (chains, n, d): one group of all chains' draws concatenated
    ("pooled"), or one group per chain ("per_chain").

    Args:
        x: draws, shape (chains, n, d).
        over_chains: ``"pooled"`` or ``"per_chain"``.

    Returns:
        shape (1, chains * n, d) (pooled) or ``x`` itself (per chain).

    Raises:
        ValueError: an unknown ``over_chains``.
    """
    one_of("over_chains", over_chains, set(OVER_CHAINS))
    return x.reshape(1, -1, x.shape[-1]) if over_chains == "pooled" else x


@in_float64_mode
def target_scores(samples, target, *, stochastic: bool = False, key=None, thin: int = 1):
    """(thinned samples, their scores), both float64 NumPy arrays of the shape of ``samples``,
    (n', d) or (chains, n', d).

    Full batch: ``target.grad_logdensity`` at each kept draw. Stochastic: ``target.stochastic_grad``
    with an independent draw of ``target.draw_spec`` per kept draw, drawn by
    ``sgbench.base.draws.jax_draws`` from the JAX PRNG ``key`` (float64 variates).

    Args:
        samples: draws, shape (n, d) or (chains, n, d), finite, d the target's dimension.
        target: a ``sgbench.targets`` Target.
        stochastic: whether to use the stochastic gradient instead of the exact one.
        key: a JAX PRNG key (required with ``stochastic``; not read otherwise).
        thin: keep every ``thin``-th draw first, >= 1.

    Returns:
        (samples, scores): float64 NumPy arrays of shape (n', d) or (chains, n', d).

    Raises:
        ValueError: another shape or dimension, a non-finite value, a bad ``thin``, or ``stochastic`` without a
            ``key``.
    """
    x = chain_draws(samples, "samples", allow_single_chain=True)
    if x.shape[-1] != target.dim:
        raise ValueError(f"samples must have dimension {target.dim} of target {target.name!r}, got shape "
                         f"{np.shape(samples)}")
    x = thin_draws(x, thin)
    flat = jnp.asarray(x.reshape(-1, x.shape[-1]))
    if stochastic:
        if key is None:
            raise ValueError("key must be a JAX PRNG key when stochastic=True")
        draws = jax_draws(key, target.draw_spec, leading=(flat.shape[0],), dtype="float64")
        scores = jax.lax.map(lambda args: target.stochastic_grad(*args), (flat, draws), batch_size=SCORE_BATCH)
    else:
        scores = _full_batch_scores(target)(flat)
    scores = np.asarray(scores, dtype=np.float64)
    shape = x.shape[1:] if np.ndim(samples) == 2 else x.shape
    return x.reshape(shape), scores.reshape(shape)
