r"""Ordering claims tested on a few independent replicates per setting (chains, trials): Welch's t-test.

``sgbench.bench.reproduce.claims.ordering`` takes each setting's standard errors as known and compares
:math:`z` with a normal quantile. Where a standard error is estimated from a handful of replicates (4 chains:
3 degrees of freedom), the statistic has Student's heavier tails, and the normal critical value would call a true
claim contradicted far more often than the rate it states (6 one-sided comparisons at 5 %: each beyond
:math:`z = 2.39` with probability 0.0083 under the normal law, 0.048 under :math:`t_3`). Here each setting's
statistic is Welch's

.. math:: t = s\,\frac{\bar b - \bar w}{\sqrt{v_b / n_b + v_w / n_w}}, \qquad
          \nu = \frac{(v_b / n_b + v_w / n_w)^2}{(v_b / n_b)^2 / (n_b - 1) + (v_w / n_w)^2 / (n_w - 1)},

for the replicates :math:`b` of what the claim says is better and :math:`w` of what it says is worse (sample
variances :math:`v`, ``ddof = 1``), :math:`s = +1` when higher is better and :math:`-1` when lower is, compared with
the Bonferroni critical value :math:`t_\nu(1 - \alpha / m)` of :math:`m` one-sided comparisons (Welch 1947,
Biometrika 34:28-35; the approximation is for normal replicates). Over the settings the verdicts are those of
``claims.ordering``: contradicted when some setting's :math:`t` is below minus its critical value, held when every
one's is above it, within noise otherwise; where the claim is true, the family calls it contradicted with probability
at most :math:`\alpha` (the error rate stated).

A run that failed (a chain diverged, so its scores are not finite) counts against the sampler that ran it: its
:math:`t` is :math:`-\infty` when the claim's better sampler failed, :math:`+\infty` when the worse one did, 0 when
both did (an observed event, no sampling tolerance). Replicates with no spread at all and different means give
:math:`\pm\infty`, equal means 0.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.special

from sgbench.bench.reproduce.claims import CONTRADICTED, FAMILY_RATE, HELD, WITHIN_NOISE, Claim


@dataclasses.dataclass(frozen=True)
class Replicates:
    """One setting of an ordering claim: the independent replicates of what the claim says is better and of what it
    says is worse (None, or any non-finite replicate: that run failed).

    Attributes:
        setting: the setting's name ("T=0.1", "SGLD and its expansion").
        better: the replicates of what the claim says is better (at least 2 unless failed).
        worse: the replicates of what it says is worse (at least 2 unless failed).
    """

    setting: str
    better: tuple | None
    worse: tuple | None

    def __post_init__(self):
        for name in ("better", "worse"):
            values = getattr(self, name)
            if values is not None and len(values) < 2:
                raise ValueError(f"{self.setting}: {name} needs at least 2 replicates for a spread, got {len(values)}")

    @staticmethod
    def _finite(values) -> np.ndarray | None:
        """The replicates as an array, or None when the run failed."""
        if values is None:
            return None
        x = np.asarray(values, dtype=np.float64)
        return x if np.all(np.isfinite(x)) else None

    def welch(self, higher_is_better: bool) -> tuple[float, float]:
        """``(t, degrees of freedom)`` of Welch's statistic, positive when the ordering is as claimed (module
        docstring; the degrees of freedom are infinite where there is no sampling noise: a failed run, or no
        spread)."""
        better, worse = self._finite(self.better), self._finite(self.worse)
        if better is None or worse is None:
            return (0.0 if better is None and worse is None else -math.inf if better is None else math.inf), math.inf
        sign = 1.0 if higher_is_better else -1.0
        difference = sign * (better.mean() - worse.mean())
        vb, vw = better.var(ddof=1) / better.size, worse.var(ddof=1) / worse.size
        if vb + vw == 0.0:
            return (0.0 if difference == 0.0 else math.copysign(math.inf, difference)), math.inf
        df = (vb + vw) ** 2 / (vb**2 / (better.size - 1) + vw**2 / (worse.size - 1))
        return difference / math.sqrt(vb + vw), float(df)

    def text(self, better_label: str, worse_label: str, higher_is_better: bool) -> str:
        """``setting: BETTER mean ± se vs WORSE mean ± se (t = ..., df = ...)``, se the standard error of the mean;
        a failed run reads ``failed``."""
        def value(values):
            x = self._finite(values)
            return "failed" if x is None else f"{x.mean():.3g} ± {x.std(ddof=1) / math.sqrt(x.size):.2g}"

        t, df = self.welch(higher_is_better)
        return (f"{self.setting}: {better_label} {value(self.better)} vs {worse_label} {value(self.worse)} "
                f"(t = {t:.2g}, df = {df:.2g})")


def critical_t(df: float, comparisons: int, rate: float = FAMILY_RATE) -> float:
    r"""The one-sided Bonferroni critical value :math:`t_{df}(1 - rate / comparisons)` (df may be fractional)."""
    return float(-scipy.special.stdtrit(df, rate / comparisons))


def replicate_ordering(words: str, where: str, settings, better_label: str, worse_label: str,
                       higher_is_better: bool, paper: str = "", reason: str = "", rate: float = FAMILY_RATE) -> Claim:
    """The claim "``better_label`` is better than ``worse_label`` at every setting", each setting tested by Welch's
    t on its replicates at the Bonferroni critical value of ``len(settings)`` one-sided comparisons (module
    docstring).

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        settings: the :class:`Replicates` of every setting the claim is tested at (at least one).
        better_label: the name of what the claim says is better ("PX-SGHMC").
        worse_label: the name of what it says is worse ("SGHMC").
        higher_is_better: True when a higher value is better (ensemble ambiguity, modes visited), False when a
            lower one is (error, NLL).
        paper: the paper's values behind the claim.
        reason: what else the reader needs (a setting the paper states it for that is not run, and why).
        rate: the family's false-contradiction rate.

    Returns:
        the claim with its verdict and error rate ``rate``; ``ours`` lists every setting's values, ``t`` and
        degrees of freedom.
    """
    settings = list(settings)
    if not settings:
        raise ValueError("an ordering claim needs at least one setting's replicates")
    scores = [s.welch(higher_is_better) for s in settings]
    critical = [critical_t(df, len(settings), rate) for _, df in scores]
    against = [s.setting for s, (t, _), c in zip(settings, scores, critical) if t < -c]
    inside = [s.setting for s, (t, _), c in zip(settings, scores, critical) if t <= c]
    if against:
        verdict, why = CONTRADICTED, f"reversed beyond the noise at {', '.join(against)}"
    elif not inside:
        verdict, why = HELD, ""
    else:
        verdict, why = WITHIN_NOISE, f"inside the noise at {', '.join(inside)}"
    direction = "higher" if higher_is_better else "lower"
    test = (f"{direction} is better; one-sided Welch t-test at each of {len(settings)} "
            f"setting{'s' if len(settings) > 1 else ''}, critical t = "
            f"{', '.join(f'{c:.2f}' for c in critical)} (Bonferroni at {100 * rate:g} %)")
    return Claim(words, where, verdict, paper=paper,
                 ours="; ".join(s.text(better_label, worse_label, higher_is_better) for s in settings),
                 reason="; ".join(part for part in (why, test, reason) if part), error_rate=rate)
