r"""Second-moment bias :math:`b^2` (Hoffman & Sountsov 2022), as in section 3.2 and appendix C of
the SMILE paper:

.. math:: b^2_i = \frac{(\hat E[x_i^2] - E[x_i^2])^2}{\operatorname{Var}[x_i^2]},

averaged over dimensions (ICG, Rosenbrock) or maximised over them (the funnel). Table 1 reports
the average over 10 chains of the per-chain :math:`b^2` with the standard deviation of that
average under a bootstrap over chains; we also report :math:`b^2` of the pooled chains.

Under exact independent sampling of :math:`n` draws, :math:`n\,b^2_i \to \chi^2_1`, so
:math:`E[b^2_i] \approx 1/n` (for a Gaussian coordinate exactly :math:`1/n`): :math:`b^2` of a
correct sampler is :math:`\tau_{int}/n` plus the squared bias of the method.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from sgbench.base.arguments import integer_at_least, one_of
from sgbench.reference.metrics import register

REDUCTIONS = {"mean": np.mean, "max": np.max}


@register("b2")
def b2(second_moment, truth, over_dims: str = "mean"):
    """:math:`b^2` of estimates ``second_moment`` (..., dim) of E[x^2], reduced ``over_dims``
    ("mean", "max", or "none" for per-dimension values) over the coordinates the truth states (an external truth
    may leave some unstated: NaN; none stated gives NaN).

    Args:
        second_moment: estimates of E[x^2], shape (..., dim).
        truth: the target's Truth (its ``second_moment`` and ``second_moment_var``, of dimension dim).
        over_dims: ``"mean"``, ``"max"`` or ``"none"``.

    Returns:
        b^2, shape (...) (a number for one estimate); shape (..., dim) for ``"none"``.

    Raises:
        ValueError: ``second_moment`` is not of the truth's dimension, or an unknown ``over_dims``.
    """
    second_moment = np.asarray(second_moment, dtype=np.float64)
    if second_moment.shape[-1] != truth.dim:
        raise ValueError(
            f"second_moment has {second_moment.shape[-1]} dimensions, the truth has {truth.dim}"
        )
    per_dim = (second_moment - truth.second_moment) ** 2 / truth.second_moment_var
    if over_dims == "none":
        return per_dim
    reduce = REDUCTIONS[one_of("over_dims", over_dims, set(REDUCTIONS) | {"none"})]
    stated = np.isfinite(truth.second_moment) & np.isfinite(truth.second_moment_var)
    if not stated.any():
        return np.full(per_dim.shape[:-1], np.nan)
    return reduce(per_dim[..., stated], axis=-1)


def _std(values) -> float:
    """The standard deviation of ``values``, scaled first so that huge finite values (b^2 of chains far
    from the truth, ~1e155) do not overflow its squares into inf."""
    values = np.asarray(values, dtype=np.float64)
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    if scale == 0.0 or not np.isfinite(scale):
        return float(np.std(values))
    return scale * float(np.std(values / scale))


@dataclasses.dataclass(frozen=True)
class B2Summary:
    """b^2 of one run: pooled over chains, per chain, chain average and bootstrap spreads."""

    over_dims: str
    per_chain: np.ndarray
    chain_average: float
    chain_average_bootstrap_std: float
    pooled: float
    pooled_bootstrap_std: float

    def as_dict(self, prefix: str) -> dict[str, float]:
        """The four summary numbers (not ``per_chain``) under keys starting with ``prefix``.

        Args:
            prefix: the keys' prefix (e.g. ``"b2"``).

        Returns:
            dict with ``{prefix}_chain_average``, ``{prefix}_chain_average_bootstrap_std``, ``{prefix}_pooled`` and
            ``{prefix}_pooled_bootstrap_std``.
        """
        return {
            f"{prefix}_chain_average": self.chain_average,
            f"{prefix}_chain_average_bootstrap_std": self.chain_average_bootstrap_std,
            f"{prefix}_pooled": self.pooled,
            f"{prefix}_pooled_bootstrap_std": self.pooled_bootstrap_std,
        }


def b2_summary(chain_second_moments, truth, over_dims="mean", num_bootstrap=1000, seed=0) -> B2Summary:
    """Summarise per-chain estimates of E[x^2] (chains, dim) of equally long chains.

    The bootstrap draws the chains with replacement ``num_bootstrap`` times (appendix C) and
    reports the standard deviation of the chain average and of the pooled b^2 over resamples; with one
    chain there is no spread over chains to resample, and both standard deviations are NaN (not 0).

    Args:
        chain_second_moments: each chain's estimate of E[x^2], shape (chains, dim), chains >= 1.
        truth: the target's Truth.
        over_dims: ``"mean"`` or ``"max"`` (how :func:`b2` reduces over dimensions).
        num_bootstrap: the number of bootstrap resamples, >= 1.
        seed: the seed of the resampling (NumPy's ``default_rng``).

    Returns:
        the B2Summary.

    Raises:
        ValueError: no chain, ``num_bootstrap`` < 1, or as :func:`b2`.
    """
    m = np.asarray(chain_second_moments, dtype=np.float64)
    integer_at_least("number of chains", m.shape[0], 1)
    integer_at_least("num_bootstrap", num_bootstrap, 1)
    per_chain = b2(m, truth, over_dims)
    resample = np.random.default_rng(seed).integers(0, m.shape[0], size=(num_bootstrap, m.shape[0]))
    one_chain = m.shape[0] < 2
    return B2Summary(
        over_dims=over_dims,
        per_chain=per_chain,
        chain_average=float(per_chain.mean()),
        chain_average_bootstrap_std=math.nan if one_chain else _std(per_chain[resample].mean(axis=1)),
        pooled=float(b2(m.mean(axis=0), truth, over_dims)),
        pooled_bootstrap_std=math.nan if one_chain else _std(b2(m[resample].mean(axis=1), truth, over_dims)),
    )
