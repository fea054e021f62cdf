r"""Claims tested on paired differences over a few replicates (data splits), with Student's t.

Where two methods are run on the same replicates (MILE and the deep ensemble it starts from, on the same data
split), the claim "A is better than B" at a setting is about the mean of the per-replicate differences
:math:`d_1..d_n`, signed so that a positive difference goes the claimed way. With a handful of replicates (the MILE
paper's 3 splits) the standard error of their mean is itself rough, so the statistic
:math:`t = \bar d / (s_d / \sqrt n)` is compared with Student's t quantile at :math:`n - 1` degrees of freedom, not
the normal one (``sgbench.bench.reproduce.claims.ordering``'s z), which at 2 degrees of freedom would call a true
claim contradicted many times more often than stated. Over ``m`` settings the one-sided critical value is
Bonferroni's, :math:`t_{n-1}^{-1}(1 - \alpha / m)`, so that a true claim is called contradicted with probability at
most :math:`\alpha` (for differences normal across replicates).

- :func:`paired_ordering`: "better at every setting" (the paper's "consistently").
- :func:`paired_somewhere`: "better at some setting" (the paper's "often").
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.stats

from sgbench.bench.reproduce.claims import CONTRADICTED, FAMILY_RATE, HELD, WITHIN_NOISE, Claim


@dataclasses.dataclass(frozen=True)
class Paired:
    """One setting of a claim: the per-replicate differences, positive where the claim goes its way (non-finite
    ones, of a replicate where a method produced no value, are left out)."""

    setting: str
    differences: tuple[float, ...]

    def finite(self) -> np.ndarray:
        """The finite differences."""
        values = np.asarray(self.differences, dtype=float)
        return values[np.isfinite(values)]

    def t(self) -> float:
        r""":math:`\bar d / (s_d / \sqrt n)`; NaN with fewer than 2 finite differences (no spread to judge by);
        ``±inf`` when they are all equal and not 0, 0 when all are 0."""
        values = self.finite()
        if values.size < 2:
            return math.nan
        mean, se = float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))
        if se == 0.0:
            return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
        return mean / se

    def critical(self, comparisons: int, rate: float = FAMILY_RATE) -> float:
        r"""The one-sided Bonferroni critical value :math:`t_{n-1}^{-1}(1 - rate / comparisons)` (NaN with fewer
        than 2 finite differences)."""
        n = self.finite().size
        return float(scipy.stats.t.isf(rate / comparisons, n - 1)) if n >= 2 else math.nan

    def text(self, label: str, comparisons: int, rate: float = FAMILY_RATE) -> str:
        """``setting: LABEL +0.081 ± 0.014 over 3 (t = 5.8, critical 4.3)``."""
        values = self.finite()
        if values.size == 0:
            return f"{self.setting}: no {label}"
        spread = f" ± {values.std(ddof=1) / math.sqrt(values.size):.2g}" if values.size > 1 else ""
        return (f"{self.setting}: {label} {values.mean():+.3g}{spread} over {values.size} (t = {self.t():.2g}, "
                f"critical {self.critical(comparisons, rate):.2g})")


def _scores(settings, rate: float) -> list[tuple[Paired, float, float]]:
    """``(setting, t, critical t)`` of each setting, Bonferroni over all of them."""
    settings = list(settings)
    if not settings:
        raise ValueError("a claim on paired differences needs at least one setting")
    return [(s, s.t(), s.critical(len(settings), rate)) for s in settings]


def _test(settings: int, rate: float) -> str:
    """The test's description in a claim's reason."""
    return (f"paired one-sided t-test over the replicates at each of {settings} setting{'s' if settings > 1 else ''}, "
            f"Bonferroni at {rate:g}")


def paired_ordering(words: str, where: str, settings, label: str, paper: str = "", reason: str = "",
                    rate: float = FAMILY_RATE) -> Claim:
    """The claim "better at every setting": contradicted when some setting's ``t`` (:meth:`Paired.t`) is below
    minus its critical value, held when every setting's is above its critical value, within the noise otherwise (a
    setting without a spread is inside the noise). Where the claim holds, each setting's ``t`` falls below minus
    its critical value with probability at most ``rate / m``, so the error rate is ``rate``.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        settings: the :class:`Paired` of every setting the paper states the claim for (at least one).
        label: what the differences are ("DE − MILE RMSE").
        paper: the paper's values behind the claim.
        reason: what else the reader needs.
        rate: the family's false-contradiction rate.

    Returns:
        the claim with its verdict; ``ours`` lists every setting's mean difference, its standard error, ``t`` and
        critical value.
    """
    scores = _scores(settings, rate)
    against = [s.setting for s, t, c in scores if t < -c]
    inside = [s.setting for s, t, c in scores if not t > c]
    if against:
        verdict, why = CONTRADICTED, f"reversed beyond the noise at {', '.join(against)}"
    elif not inside:
        verdict, why = HELD, ""
    else:
        verdict, why = WITHIN_NOISE, f"inside the noise at {', '.join(inside)}"
    return Claim(words, where, verdict, paper=paper,
                 ours="; ".join(s.text(label, len(scores), rate) for s, _, _ in scores),
                 reason="; ".join(part for part in (why, _test(len(scores), rate), reason) if part), error_rate=rate)


def paired_somewhere(words: str, where: str, settings, label: str, paper: str = "", reason: str = "",
                     rate: float = FAMILY_RATE) -> Claim:
    """The claim "better at some setting": held when some setting's ``t`` is above its critical value,
    contradicted when every setting's is below minus its critical value, within the noise otherwise. Where the
    claim holds at a setting, that setting's ``t`` falls below minus its critical value with probability at most
    ``rate / m``, the error rate stated.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        settings: the :class:`Paired` of every setting the claim ranges over (at least one).
        label: what the differences are.
        paper: the paper's values behind the claim.
        reason: what else the reader needs.
        rate: the false-hold rate over the settings when the claim is false everywhere.

    Returns:
        the claim with its verdict.
    """
    scores = _scores(settings, rate)
    beyond = [s.setting for s, t, c in scores if t > c]
    if beyond:
        verdict, why = HELD, f"beyond the noise at {', '.join(beyond)}"
    elif all(t < -c for _, t, c in scores):
        verdict, why = CONTRADICTED, "reversed beyond the noise at every setting"
    else:
        verdict, why = WITHIN_NOISE, "nowhere beyond the noise in the claimed direction"
    return Claim(words, where, verdict, paper=paper,
                 ours="; ".join(s.text(label, len(scores), rate) for s, _, _ in scores),
                 reason="; ".join(part for part in (why, _test(len(scores), rate), reason) if part),
                 error_rate=rate / len(scores))
