r"""Claims about shares of independent trials in which an event happened (chains that failed), tested exactly.

A share :math:`k / n` of :math:`n` independent trials, each with the event at probability :math:`p`, is
Binomial(:math:`n`, :math:`p`); the tests here use its exact law, not a normal approximation, which fails at the
small counts and the shares near 0 or 1 that failure rates have (MILE paper, Table 5: 0 % and 78-86 %).

- :func:`share_between`: "the share is between ``low`` and ``high``" (the paper's "failure rates between 78 % and
  86 %"): contradicted when the exact two-sided :math:`1 - \alpha` (Clopper-Pearson) interval of :math:`p` lies
  wholly outside ``[low, high]``, held when it lies wholly inside, within the noise otherwise.
- :func:`share_below`: "A's share is below B's" (two samplers' failure rates): Fisher's exact one-sided test.

Each states its false-contradiction rate (``sgbench.bench.reproduce.claims``: the probability that the check calls
the claim contradicted when it is true, at the claim's boundary, the worst case).
"""

from __future__ import annotations

import numpy as np
import scipy.stats

from sgbench.bench.reproduce.claims import CONTRADICTED, FAMILY_RATE, HELD, WITHIN_NOISE, Claim


def share_text(count: int, total: int, rate: float = FAMILY_RATE) -> str:
    """``"10 of 24 = 0.42 (95 % interval 0.22-0.63)"``: the share with its exact two-sided :math:`1 - rate`
    Clopper-Pearson interval."""
    interval = scipy.stats.binomtest(count, total).proportion_ci(1 - rate, method="exact")
    return (f"{count} of {total} = {count / total:.2f} ({100 * (1 - rate):.3g} % interval "
            f"{interval.low:.2f}-{interval.high:.2f})")


def between_error_rate(total: int, low: float, high: float, rate: float = FAMILY_RATE) -> float:
    r"""The false-contradiction rate of :func:`share_between` at ``total`` trials, exactly: the largest probability,
    over shares :math:`p` in ``[low, high]``, that :math:`X \sim` Binomial(``total``, :math:`p`) falls in its
    rejection region :math:`\{X \le c_-\} \cup \{X \ge c_+\}` (:math:`c_-` the largest count whose lower tail at
    ``low`` is at most ``rate / 2``, :math:`c_+` the smallest whose upper tail at ``high`` is). That probability is
    quasi-convex in :math:`p` (its derivative, :math:`n` times the Binomial(:math:`n - 1`, :math:`p`) mass at
    :math:`c_+ - 1` less that at :math:`c_-`, changes sign at most once, from - to +, as their ratio grows with
    :math:`p`), so its largest value is at ``low`` or ``high``; at most ``rate``, less at small ``total`` (the
    counts are discrete).

    Args:
        total: the number of trials.
        low: the lower end of the claimed range of the share, ``0 <= low <= high``.
        high: its upper end, ``high <= 1``.
        rate: the test's level (the two tails get half each).

    Returns:
        the rate.
    """
    counts = np.arange(total + 1)
    rejected = ((scipy.stats.binom.cdf(counts, total, low) <= rate / 2)
                | (scipy.stats.binom.sf(counts - 1, total, high) <= rate / 2))
    return float(max(scipy.stats.binom.pmf(counts, total, p)[rejected].sum() for p in (low, high)))


def share_between(words: str, where: str, count: int, total: int, low: float, high: float, label: str,
                  paper: str = "", reason: str = "", rate: float = FAMILY_RATE) -> Claim:
    r"""The claim "the share of the event among the trials is between ``low`` and ``high``", tested exactly:
    contradicted when :math:`P(X \le k \mid low) \le rate / 2` (the share is below the range beyond the noise) or
    :math:`P(X \ge k \mid high) \le rate / 2` (above it); held when both :math:`P(X \ge k \mid low)` and
    :math:`P(X \le k \mid high)` are at most ``rate / 2`` (inside it beyond the noise: the Clopper-Pearson
    :math:`1 - rate` interval inside ``[low, high]``); within the noise otherwise.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        count: the trials with the event (``k``).
        total: the trials (``n``, at least 1).
        low: the lower end of the claimed range, ``0 <= low <= high``.
        high: its upper end, ``high <= 1``.
        label: what the share is of ("naive MCLMC's NaN chains").
        paper: the paper's values behind the claim.
        reason: what else the reader needs.
        rate: the test's level.

    Returns:
        the claim with its verdict; its error rate is :func:`between_error_rate`.
    """
    if not 0 <= count <= total or total < 1 or not 0.0 <= low <= high <= 1.0:
        raise ValueError(f"need 0 <= count <= total, total >= 1 and 0 <= low <= high <= 1, got {count}, {total}, "
                         f"{low}, {high}")
    below = scipy.stats.binom.cdf(count, total, low) <= rate / 2
    above = scipy.stats.binom.sf(count - 1, total, high) <= rate / 2
    inside = (scipy.stats.binom.sf(count - 1, total, low) <= rate / 2
              and scipy.stats.binom.cdf(count, total, high) <= rate / 2)
    if below or above:
        verdict, why = CONTRADICTED, f"{'below' if below else 'above'} {low if below else high:g} beyond the noise"
    elif inside:
        verdict, why = HELD, ""
    else:
        verdict, why = WITHIN_NOISE, f"the interval of the share reaches outside {low:g}-{high:g}"
    test = (f"exact binomial test of the share against {low:g} and {high:g}, {rate / 2:.3g} in each tail "
            "(Clopper-Pearson interval)")
    return Claim(words, where, verdict, paper=paper, ours=f"{label}: {share_text(count, total, rate)}",
                 reason="; ".join(part for part in (why, test, reason) if part),
                 error_rate=between_error_rate(total, low, high, rate))


def share_below(words: str, where: str, lower: tuple[int, int], higher: tuple[int, int], lower_label: str,
                higher_label: str, paper: str = "", reason: str = "", rate: float = FAMILY_RATE) -> Claim:
    """The claim "``lower_label``'s share of the event is below ``higher_label``'s", by Fisher's exact one-sided
    test of the 2 x 2 table (event or not, by sampler): held when its p-value for "below" is at most ``rate``,
    contradicted when its p-value for "above" is, within the noise otherwise. Where the two shares are equal (the
    claim's boundary) the test for "above" rejects with probability at most ``rate`` (Fisher's test is exact
    conditionally on the margins, conservative unconditionally), the error rate stated.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        lower: ``(count, total)`` of what the claim says has the lower share.
        higher: ``(count, total)`` of what the claim says has the higher share.
        lower_label: the name of the first.
        higher_label: the name of the second.
        paper: the paper's values behind the claim.
        reason: what else the reader needs.
        rate: the test's level.

    Returns:
        the claim with its verdict and both p-values.
    """
    table = [[lower[0], lower[1] - lower[0]], [higher[0], higher[1] - higher[0]]]
    p_below = float(scipy.stats.fisher_exact(table, alternative="less").pvalue)
    p_above = float(scipy.stats.fisher_exact(table, alternative="greater").pvalue)
    if p_below <= rate:
        verdict, why = HELD, ""
    elif p_above <= rate:
        verdict, why = CONTRADICTED, "above beyond the noise"
    else:
        verdict, why = WITHIN_NOISE, "the difference is inside the noise"
    return Claim(words, where, verdict, paper=paper,
                 ours=(f"{lower_label} {share_text(*lower, rate)}; {higher_label} {share_text(*higher, rate)}; "
                       f"Fisher's exact p = {p_below:.2g} (below), {p_above:.2g} (above)"),
                 reason="; ".join(part for part in (why, f"Fisher's exact one-sided test at {rate:g}", reason)
                                  if part), error_rate=rate)
