r"""A paper's claim as the paper states it, and what our numbers say about it.

Every reproduction lists the claims its table or figure is meant to show, each quoted in the paper's words with
the section and sentence it comes from, and gives each one of four verdicts:

- ``held``: our numbers bear the claim out beyond their sampling noise, at every setting the paper states it for;
- ``contradicted``: at some setting our numbers go against it beyond the noise (``sgbench reproduce`` exits 1);
- ``within noise``: neither: somewhere the difference the claim is about is inside the noise (a larger scale
  would tell);
- ``not testable``: the suite cannot test it (the reason says why: data not shipped, a quantity not computed).

A testable claim states its **error rate**: the probability that its check calls it contradicted when it is true
(at the boundary of the claim, the worst case). Claims over several settings test every setting at once with the
Bonferroni critical value :math:`z = \Phi^{-1}(1 - \alpha / m)` for ``m`` one-sided comparisons, so the family's
false-contradiction rate is at most :math:`\alpha` (``FAMILY_RATE``, 5 %). A setting's ``z`` is that of two values
with known standard errors (:class:`Comparison`), or, where the standard errors are estimated from a few runs, that
of Welch's t at the same tail probability (:class:`RunsComparison`), or, for two methods run on the same
replicates, that of the paired t (:class:`PairedComparison`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import scipy.special

HELD, CONTRADICTED, WITHIN_NOISE, NOT_TESTABLE = "held", "contradicted", "within noise", "not testable"
VERDICTS = (HELD, CONTRADICTED, WITHIN_NOISE, NOT_TESTABLE)
FAMILY_RATE = 0.05  # a claim's false-contradiction rate, over all the settings it is tested at
ROUNDING = 1e-12  # relative size below which a mean of differences is the rounding of a sum that cancels
NOT_RUN = "none of the settings the paper states it for was run (a smaller grid than the paper's)"


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a paper and its verdict.

    Attributes:
        words: the claim in the paper's words (quoted; an ellipsis where words are left out).
        where: where the paper states it: section or table, and which sentence ("appendix A.5.1, first sentence").
        verdict: one of ``VERDICTS``.
        paper: the paper's values behind the claim, as text ("" when it states none).
        ours: our values behind the verdict, with their intervals.
        reason: what the check tests and, where the verdict is not ``held``, why (required when not testable).
        error_rate: the probability that the check calls the claim contradicted when it is true (0 for a claim
            about an observed event, such as runs that diverged; None: not testable).
    """

    words: str
    where: str
    verdict: str
    paper: str = ""
    ours: str = ""
    reason: str = ""
    error_rate: float | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")
        if self.verdict == NOT_TESTABLE:
            if not self.reason or self.error_rate is not None:
                raise ValueError("a claim that is not testable gives its reason and no error rate")
        elif self.error_rate is None or not 0.0 <= self.error_rate < 1.0:
            raise ValueError(f"a tested claim states its error rate in [0, 1), got {self.error_rate!r}")

    def row(self) -> dict:
        """The claim as a row of the claims table."""
        rate = "" if self.error_rate is None else f"{100 * self.error_rate:.3g} %"
        return {"claim": f"“{self.words}”", "where": self.where, "paper": self.paper, "ours": self.ours,
                "verdict": self.verdict, "error rate": rate, "reason": self.reason}

    def lines(self, number: int) -> list[str]:
        """The claim as printed by ``sgbench reproduce``: its verdict, words and place, then its values and
        reason, indented."""
        rate = "" if self.error_rate is None else f" (error rate {100 * self.error_rate:.3g} %)"
        out = [f"{number:>2}. {self.verdict.upper()}{rate}: “{self.words}” ({self.where})"]
        out += [f"    {label}: {text}" for label, text in (("paper", self.paper), ("ours", self.ours),
                                                             ("reason", self.reason)) if text]
        return out


def not_testable(words: str, where: str, reason: str, paper: str = "") -> Claim:
    """A claim the suite cannot test, with the reason."""
    return Claim(words, where, NOT_TESTABLE, paper=paper, reason=reason)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One setting of an ordering claim: the value the claim says is lower and the one it says is higher, each
    with its standard error (NaN: unknown, counted as 0). A failed run may take an infinite value: ``+inf`` is above
    any finite value, ``-inf`` below it."""

    setting: str
    lower: float
    lower_se: float
    higher: float
    higher_se: float

    def z(self) -> float:
        r""":math:`z = (h - l) / \sqrt{s_l^2 + s_h^2}` for the values ``lower`` :math:`l` and ``higher`` :math:`h`
        and their standard errors :math:`s`: positive when the ordering is as claimed.

        Returns:
            ``z``; where a value is infinite, the difference ``higher - lower`` itself, ``±inf`` by its sign
            (``lower = +inf`` or ``higher = -inf``: ``-inf``; ``lower = -inf`` or ``higher = +inf``: ``+inf``), or 0
            where both are infinite with the same sign (``inf - inf``, NaN); where both standard errors are 0,
            ``±inf`` when the values differ and 0 when they are equal.
        """
        difference = self.higher - self.lower
        if math.isinf(self.lower) or math.isinf(self.higher):
            return 0.0 if math.isnan(difference) else difference
        spread = math.hypot(*(s if math.isfinite(s) else 0.0 for s in (self.lower_se, self.higher_se)))
        if spread == 0.0:
            return 0.0 if difference == 0.0 else math.copysign(math.inf, difference)
        return difference / spread

    def text(self, lower_label: str, higher_label: str) -> str:
        """``setting: LOWER a ± s vs HIGHER b ± s (z = ...)`` (z to one decimal)."""
        def value(mean, se):
            return f"{mean:.3g}" + (f" ± {se:.2g}" if math.isfinite(mean) and math.isfinite(se) and se > 0 else "")

        return (f"{self.setting}: {lower_label} {value(self.lower, self.lower_se)} vs {higher_label} "
                f"{value(self.higher, self.higher_se)} (z = {self.z():.1f})")


@dataclasses.dataclass(frozen=True)
class RunsComparison(Comparison):
    r"""A :class:`Comparison` of two means over independent runs (chains, trials), tested by Welch's t: for the
    runs :math:`x` of what the claim says is lower and :math:`y` of what it says is higher, with the standard
    errors :math:`s_x, s_y` of their means,

    .. math:: t = \frac{\bar y - \bar x}{\sqrt{s_x^2 + s_y^2}}, \qquad
              \nu = \frac{(s_x^2 + s_y^2)^2}{s_x^4 / (n_x - 1) + s_y^4 / (n_y - 1)}, \qquad
              z = \Phi^{-1}(F_\nu(t)),

    (Welch 1947, Biometrika 34:28-35; the approximation is for normal runs), so that ``ordering``, ``somewhere``
    and the normal critical value :math:`\Phi^{-1}(1 - \alpha / m)` they compare :math:`z` with test :math:`t`
    against Student's :math:`t_\nu(1 - \alpha / m)`: the same tail probability. The plain z of the standard
    errors would call a true ordering contradicted too often: with 10 runs a side (9 to 18 degrees of freedom) up
    to twice its stated rate; with 4 (3 degrees of freedom) 6 one-sided comparisons at 5 % are each beyond
    :math:`2.39` with probability 0.048 under :math:`t_3`, not the 0.0083 of the normal law.

    Attributes:
        lower_runs: the runs behind ``lower``.
        higher_runs: the runs behind ``higher``.
    """

    lower_runs: int = 2
    higher_runs: int = 2

    @classmethod
    def of(cls, setting: str, lower, higher, failed: float = math.inf) -> RunsComparison:
        """The comparison of the runs' values ``lower`` (claimed lower) and ``higher``: each mean with its standard
        error (the standard deviation over the runs, ``ddof = 1``, over the square root of their number; NaN for
        one run). A side with a failed run (a value not finite) takes the value ``failed``, an observed event with
        no sampling tolerance: ``+inf`` (the default) above any finite value, so it counts against a side claimed
        lower; ``-inf`` below it, against a side claimed higher. A claim that a score is lower-is-better lists
        (better, worse) as (``lower``, ``higher``) with the default; one that is higher-is-better lists (worse,
        better) with ``failed=-math.inf``. A failed run on both sides is a tie (:meth:`Comparison.z`).

        Args:
            setting: the setting's name ("T=0.1", "SGLD").
            lower: the runs' values of what the claim says is lower (at least one).
            higher: the runs' values of what it says is higher (at least one).
            failed: the value of a side with a failed run, ``math.inf`` or ``-math.inf``.

        Returns:
            the comparison, with the number of runs of each side.
        """
        if not math.isinf(failed):
            raise ValueError(f"a failed run's value is +inf or -inf, got {failed!r}")

        def mean_se(values):
            values = np.asarray(values, dtype=np.float64)
            if not values.size:
                raise ValueError(f"{setting}: each side of a comparison needs at least one run")
            if not np.all(np.isfinite(values)):
                return failed, math.nan
            se = float(np.std(values, ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
            return float(np.mean(values)), se

        return cls(setting, *mean_se(lower), *mean_se(higher), len(lower), len(higher))

    def z(self) -> float:
        r"""The normal quantile :math:`\Phi^{-1}(F_\nu(t))` of Welch's t statistic's distribution function (class
        docstring); :meth:`Comparison.z` where a value is infinite or both standard errors are 0; 0 (the noise
        cannot be told) where both values are finite and a side has a single run, whose spread is unknown."""
        base = super().z()
        a, b = (s ** 2 if math.isfinite(s) else 0.0 for s in (self.lower_se, self.higher_se))
        if math.isfinite(self.lower) and math.isfinite(self.higher) and min(self.lower_runs, self.higher_runs) < 2:
            return 0.0
        if not math.isfinite(base) or base == 0.0:
            return base
        nu = (a + b) ** 2 / (a ** 2 / (self.lower_runs - 1) + b ** 2 / (self.higher_runs - 1))
        # the tail beyond |t| of Student's t (stdtr: its CDF), and the normal quantile of that tail (ndtri)
        return math.copysign(-float(scipy.special.ndtri(scipy.special.stdtr(nu, -abs(base)))), base)


@dataclasses.dataclass(frozen=True)
class PairedComparison(Comparison):
    r"""A :class:`Comparison` of two methods run on the same replicates (MILE and the deep ensemble it starts from,
    on one data split), tested on the per-replicate differences :math:`d_1..d_n`, signed so that a positive one
    goes the claim's way: ``lower`` is 0, ``higher`` their mean :math:`\bar d` with standard error
    :math:`s_d / \sqrt n`, and :meth:`z` is :math:`\Phi^{-1}(F_{n-1}(t))` for the paired statistic
    :math:`t = \bar d \sqrt n / s_d`, so that the normal critical values of :func:`ordering` and :func:`somewhere`
    are Student's at :math:`n - 1` degrees of freedom (at 3 replicates the normal quantile of t itself would call a
    true claim contradicted several times more often than stated).

    Attributes:
        pairs: the number of finite differences.
    """

    pairs: int = 2

    @classmethod
    def of(cls, setting: str, differences) -> PairedComparison:
        """The comparison of the signed per-replicate ``differences`` (positive: the claim's way). A NaN one, of a
        replicate where neither method or one of unknown standing produced a value, is left out. An infinite one
        is a replicate where one method failed (diverged), an observed event with no sampling tolerance that
        counts against it: ``-inf`` against the claim, ``+inf`` for it; the comparison's mean is then that
        infinity (both signs among the replicates: a tie, mean NaN and z 0). A mean within rounding of 0 (at most
        1e-12 of the largest difference: differences that cancel, such as accuracies on the same test points) is
        0."""
        values = np.asarray(differences, dtype=np.float64)
        values = values[~np.isnan(values)]
        failures = values[np.isinf(values)]
        if failures.size:
            signs = set(np.sign(failures).tolist())
            return cls(setting, 0.0, 0.0, math.copysign(math.inf, signs.pop()) if len(signs) == 1 else math.nan,
                       math.nan, values.size)
        mean = float(values.mean()) if values.size else math.nan
        if values.size and abs(mean) <= ROUNDING * float(np.max(np.abs(values))):
            mean = 0.0
        se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
        return cls(setting, 0.0, 0.0, mean, se, values.size)

    def z(self) -> float:
        """The normal quantile of the paired t's distribution function; ``±inf`` where a method failed on a
        replicate (:meth:`of`) or the differences are all equal and not 0; 0 (the noise cannot be told) with fewer
        than 2 differences, and for failures on both sides."""
        if math.isinf(self.higher):
            return self.higher
        if self.pairs < 2 or math.isnan(self.higher):
            return 0.0
        base = super().z()
        if not math.isfinite(base) or base == 0.0:
            return base
        return math.copysign(-float(scipy.special.ndtri(scipy.special.stdtr(self.pairs - 1, -abs(base)))), base)

    def text(self, lower_label: str, higher_label: str) -> str:
        """``setting: HIGHER over LOWER +0.081 ± 0.014 over 3 pairs (z = ...)``."""
        spread = f" ± {self.higher_se:.2g}" if math.isfinite(self.higher_se) else ""
        return (f"{self.setting}: {higher_label} over {lower_label} {self.higher:+.3g}{spread} over {self.pairs} "
                f"pairs (z = {self.z():.1f})")


def critical_z(comparisons: int, rate: float = FAMILY_RATE) -> float:
    r"""The one-sided Bonferroni critical value :math:`\Phi^{-1}(1 - rate / comparisons)`."""
    from sgbench.reference.checks import z_critical

    return z_critical(rate, comparisons, two_sided=False)


def ordering(words: str, where: str, comparisons, lower_label: str, higher_label: str, paper: str = "",
             reason: str = "", rate: float = FAMILY_RATE) -> Claim:
    """The claim "``lower_label``'s value is below ``higher_label``'s at every setting", tested at every setting
    with the Bonferroni critical value of ``len(comparisons)`` one-sided comparisons (:func:`critical_z`):
    contradicted when some setting's ``z`` (:meth:`Comparison.z`) is below ``-z``, held when every setting's is
    above ``z``, within noise otherwise. Its error rate is ``rate``: where the claim is true, each setting's
    ``z`` falls below ``-z`` with probability at most ``rate / m``.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        comparisons: the :class:`Comparison` of every setting the paper states the claim for that was run (none:
            the claim is not testable, ``NOT_RUN``).
        lower_label: the name of what the claim says is lower ("SGLRW").
        higher_label: the name of what the claim says is higher ("SGLD").
        paper: the paper's values behind the claim.
        reason: what else the reader needs (a setting the paper states it for that is not run, and why).
        rate: the family's false-contradiction rate.

    Returns:
        the claim with its verdict; ``ours`` lists every setting's values and ``z``.
    """
    comparisons = list(comparisons)
    if not comparisons:
        return not_testable(words, where, NOT_RUN + (f"; {reason}" if reason else ""), paper=paper)
    z = critical_z(len(comparisons), rate)
    scores = [c.z() for c in comparisons]
    if min(scores) < -z:
        verdict, against = CONTRADICTED, [c.setting for c, s in zip(comparisons, scores) if s < -z]
        why = f"reversed beyond the noise at {'; '.join(against)}"
    elif min(scores) > z:
        verdict, why = HELD, ""
    else:
        verdict = WITHIN_NOISE
        why = f"inside the noise at {'; '.join(c.setting for c, s in zip(comparisons, scores) if s <= z)}"
    test = (f"one-sided z-test at each of {len(comparisons)} setting{'s' if len(comparisons) > 1 else ''}, "
            f"critical |z| = {z:.2f} (Bonferroni)")
    return Claim(words, where, verdict, paper=paper,
                 ours="; ".join(c.text(lower_label, higher_label) for c in comparisons),
                 reason="; ".join(part for part in (why, test, reason) if part), error_rate=rate)


def somewhere(words: str, where: str, comparisons, lower_label: str, higher_label: str, paper: str = "",
              reason: str = "", rate: float = FAMILY_RATE) -> Claim:
    """The claim "``lower_label``'s value is below ``higher_label``'s at some setting" (the paper's "occasionally",
    "in some cases"): held when some setting's ``z`` (:meth:`Comparison.z`) is above the Bonferroni critical value
    of ``len(comparisons)`` one-sided comparisons, contradicted when every setting's is below its negative, within
    noise otherwise. Where the claim is true at a setting, that setting's ``z`` falls below ``-z`` with probability
    at most ``rate / m``, the error rate stated.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        comparisons: the :class:`Comparison` of every setting the claim ranges over that was run (none: not
            testable).
        lower_label: the name of what the claim says is lower somewhere.
        higher_label: the name of what it is compared with.
        paper: the paper's values behind the claim.
        reason: what else the reader needs.
        rate: the false-hold rate over the settings when the claim is false everywhere.

    Returns:
        the claim with its verdict.
    """
    comparisons = list(comparisons)
    if not comparisons:
        return not_testable(words, where, NOT_RUN + (f"; {reason}" if reason else ""), paper=paper)
    z = critical_z(len(comparisons), rate)
    scores = [c.z() for c in comparisons]
    if max(scores) > z:
        verdict, why = HELD, f"beyond the noise at {'; '.join(c.setting for c, s in zip(comparisons, scores) if s > z)}"
    elif max(scores) < -z:
        verdict, why = CONTRADICTED, "reversed beyond the noise at every setting"
    else:
        verdict, why = WITHIN_NOISE, "nowhere beyond the noise in the claimed direction"
    test = f"one-sided z-tests at {len(comparisons)} settings, critical |z| = {z:.2f} (Bonferroni)"
    return Claim(words, where, verdict, paper=paper,
                 ours="; ".join(c.text(lower_label, higher_label) for c in comparisons),
                 reason="; ".join(part for part in (why, test, reason) if part), error_rate=rate / len(comparisons))


def tally(claims) -> str:
    """``"2 held, 1 contradicted, 0 within noise, 1 not testable"``."""
    verdicts = [claim.verdict for claim in claims]
    return ", ".join(f"{verdicts.count(v)} {v}" for v in VERDICTS)


def claims_frame(claims) -> pd.DataFrame:
    """The claims table: one row per claim (:meth:`Claim.row`)."""
    return pd.DataFrame([claim.row() for claim in claims],
                        columns=["claim", "where", "paper", "ours", "verdict", "error rate", "reason"])
