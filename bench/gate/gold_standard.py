r"""What a check holds a run to, and where chains can start: a target's truth and draws from it, analytic
or from its stored gold-standard NUTS run.

A target with an analytic truth (``target.truth``) and an exact sampler (``target.sample``) gives both
directly, with standard errors 0. A target whose truth is moments without draws (Inference Gym's) starts chains
from the Gaussian of its stated means and variances, and from its initial position in coordinates it does not
state. A data posterior without one (``logreg``, ``bnn``, ``pmf``) has a
stored reference (``sgbench.reference.store``): the moments of long NUTS runs with their Monte Carlo standard
errors, and the thinned draws themselves, from which starts are resampled.

The checks compare each chain's standardised mean error :math:`m = (\bar x - \mu)/\sigma` and relative
second-moment error :math:`r = \overline{(x - \mu)^2}/\sigma^2 - 1` with 0. With an estimated truth
:math:`(\hat\mu, \hat\sigma^2)` the statistic is off by the truth's own error: to first order
:math:`\delta m = -\delta\mu/\sigma` and :math:`\delta r = -\delta\sigma^2/\sigma^2` (the mean's error
enters :math:`r` only at second order, since :math:`r` is centred at :math:`\hat\mu`). :func:`allowance`
turns the stored standard errors into that allowance, which the checks add to their own (the same
widening as a stored design bias's standard error, ``sgbench.bench.gate.truth``).
"""

from __future__ import annotations

import numpy as np

from sgbench.targets._truth import Truth


def truth_of(target) -> Truth:
    """``target``'s truth: analytic, or the moments of its stored NUTS reference.

    Args:
        target: a target object.

    Returns:
        a :class:`targets.Truth`. ``sgbench.reference.store.ReferenceFileError`` (naming the command that builds
        it) when the target has no analytic truth and no stored reference.
    """
    if target.truth is not None:
        return target.truth
    from sgbench.reference import store

    return store.load(target)


def draws(target, key, n: int) -> np.ndarray:
    """``n`` draws from ``target``: its exact sampler, or resampled (with replacement, uniformly) from
    its stored NUTS draws, or (a truth of moments only) from the Gaussian of its truth (module docstring).

    Args:
        target: a target object.
        key: a JAX key.
        n: how many.

    Returns:
        (n, dim) float64.
    """
    import jax
    import jax.numpy as jnp

    from sgbench.targets._contract import NoExactSamplerError

    if target.truth is not None:
        try:
            return np.asarray(target.sample(key, n), dtype=np.float64)
        except NoExactSamplerError:
            mean = np.asarray(target.truth.mean, dtype=np.float64)
            sd = np.sqrt(np.diag(np.asarray(target.truth.covariance, dtype=np.float64)))
            stated = np.isfinite(mean) & np.isfinite(sd)
            with jax.enable_x64(True):
                normal = np.asarray(jax.random.normal(key, (n, target.dim), dtype=jnp.float64))
            return np.where(stated, np.where(stated, mean, 0) + np.where(stated, sd, 0) * normal,
                            np.asarray(target.initial_position(), dtype=np.float64))
    from sgbench.reference import store

    stored = np.asarray(store.load_draws(target), dtype=np.float64).reshape(-1, target.dim)
    index = np.asarray(jax.random.randint(key, (n,), 0, stored.shape[0]))
    return stored[index]


def allowance(truth: Truth) -> dict:
    r"""The standard errors that an estimated truth adds to the checks' statistics (module docstring),
    in the form of a design bias of zero (``sgbench.bench.gate.truth.truth_checks``).

    Args:
        truth: the target's truth.

    Returns:
        ``mean_error`` and ``second_moment_error`` (zeros) with their ``_se``: the mean's standard error
        over :math:`\sigma`, and the variance's relative standard error; ``num_chains`` infinite.
    """
    variance = np.diag(np.asarray(truth.covariance, dtype=np.float64))
    variance_se = np.diag(np.asarray(truth.covariance_se, dtype=np.float64))
    zeros = np.zeros_like(variance)
    return {"mean_error": zeros, "mean_error_se": np.asarray(truth.mean_se, dtype=np.float64) / np.sqrt(variance),
            "second_moment_error": zeros, "second_moment_error_se": variance_se / variance,
            "num_chains": np.inf, "num_diverged": 0}


def is_estimated(truth: Truth) -> bool:
    """Whether ``truth`` carries standard errors (a NUTS reference) rather than being analytic."""
    return bool(np.any(np.asarray(truth.mean_se) > 0) or np.any(np.asarray(truth.covariance_se) > 0))
