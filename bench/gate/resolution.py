r"""The bias a verification must be able to detect: ``--detect``.

Every mean check reports the deviation it detects with probability 0.9 at its false-failure rate
(``detectable``, ``sgbench.reference.checks.result``). The user states the smallest bias that matters as a
relative error of the variance, :math:`r = \sigma^2_{\text{sampler}}/\sigma^2 - 1` (default
``DEFAULT_DETECT`` = 0.1), and the same number as a mean error in standard deviations, :math:`\delta_m = r`.
(For a Gaussian a mean error :math:`\delta_m` costs :math:`\delta_m^2/2` in Kullback-Leibler divergence and a
variance error :math:`r` about :math:`r^2/4`, so the mean's threshold is the more lenient by that measure; per
chain the two statistics have about the same spread, so one number keeps both checks' resolutions alike.) A
check that passed but detects only deviations larger than these could not have failed on the bias asked
about, so the verification is INCONCLUSIVE, never PASSED.

Against a law with a bias of its own (a claimed reference's at its step, an exact discrete-time law, a design
bias :math:`\beta^r`), the deviation that matters is relative to that law: a detectable :math:`d` in :math:`r`
is :math:`d/(1 + \beta^r)` of the law's variance, and a mean deviation :math:`d/\sqrt{1 + \beta^r}` of its
standard deviation; these are compared with the thresholds. (A bug that inflates the variance by 10 % is
the same bug at a step whose discretisation bias is large.)

Its detectable deviation shrinks as :math:`1/\sqrt C` in the number of independent chains :math:`C` (the
checks' standard errors are over chains, and ``sgbench validate`` scales the reference's chains with the
candidate's), so :math:`C\,(d/\delta)^2` chains would decide, :math:`d` the detectable deviation now.

Why 0.1 by default: a 10 % error in a marginal variance (a Kullback-Leibler divergence of about 0.0025 per
coordinate) is small against the discretisation biases the validated samplers show at practical steps,
yet resolved by ``sgbench validate``'s default ``DEFAULT_CHAINS`` = 256 chains x 4000 scored steps on
the validation targets at such steps (measured in docs/gates_derivations.md, section "sgbench validate").
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from sgbench.base.arguments import positive_finite

DEFAULT_DETECT = 0.1
DEFAULT_CHAINS = 256  # sgbench validate's chains per target: they resolve DEFAULT_DETECT at typical steps
CHECKS = {"mean": "mean error (standard deviations)", "second_moment": "relative variance error r"}


@dataclasses.dataclass(frozen=True)
class Resolution:
    """The bias to detect: ``relative_variance`` r (> 0), and r standard deviations of the mean."""

    relative_variance: float = DEFAULT_DETECT

    def __post_init__(self):
        object.__setattr__(self, "relative_variance", positive_finite("detect (--detect)", self.relative_variance))

    def threshold(self, check: str) -> float | None:
        """The bias check ``check`` must detect (None for checks without a bias scale: finite, b2, ...)."""
        return self.relative_variance if check in CHECKS else None

    def shortfalls(self, checks, num_chains: int) -> list[str]:
        """Why ``checks`` (CheckResults) cannot resolve this bias, in words, with the chains that would.

        Args:
            checks: the checks a PASSED would rest on.
            num_chains: the chains they were made with.

        Returns:
            one line per passed check whose largest detectable deviation, relative to the law it is compared
            with, exceeds its threshold; empty when every one resolves it.
        """
        return [f"the {name} check detects only a {CHECKS[name]} of {_beyond(detectable, wanted)}, not {wanted:.2g} "
                f"(--detect {self.relative_variance:g}); about {need} chains (--chains) would decide"
                for name, detectable, wanted, need in self._short(checks, num_chains)]

    def chains_needed(self, checks, num_chains: int) -> int:
        """The chains that would let every passed check of ``checks`` resolve this bias (``num_chains`` where each
        does already)."""
        return max([num_chains] + [need for *_, need in self._short(checks, num_chains)])

    def _short(self, checks, num_chains: int) -> list[tuple]:
        """(check name, largest detectable deviation relative to the law, threshold, chains that would resolve it)
        of each passed check that does not resolve this bias."""
        found = []
        ratio = _variance_ratio(checks)
        for check in checks:
            wanted = self.threshold(check.name)
            if wanted is None or not check.passed:
                continue
            scaled = np.atleast_1d(check.detectable) / (ratio if check.name == "second_moment" else np.sqrt(ratio))
            detectable = float(np.nanmax(scaled))
            if detectable > wanted:
                found.append((check.name, detectable, wanted, math.ceil(num_chains * (detectable / wanted) ** 2)))
        return found


def _beyond(detectable: float, wanted: float) -> str:
    """``detectable`` with the digits that show it beyond ``wanted`` (0.1004, not 0.1, against 0.1)."""
    for digits in range(2, 6):
        if f"{detectable:.{digits}g}" != f"{wanted:.{digits}g}":
            return f"{detectable:.{digits}g}"
    return f"{detectable:.6g}"


def _variance_ratio(checks) -> np.ndarray:
    """Per coordinate, the variance of the law the checks compare with over the target's, :math:`1 + \beta^r`
    (the ``second_moment`` check's ``expected``; 1 without one)."""
    for check in checks:
        if check.name == "second_moment":
            bias = np.atleast_1d(np.asarray(check.expected, dtype=np.float64))
            return np.maximum(1 + np.where(np.isfinite(bias), bias, 0.0), np.finfo(float).eps)
    return np.ones(1)
