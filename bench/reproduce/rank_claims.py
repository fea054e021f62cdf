r"""Claims tested on independent replicates of two groups (chains) without a normal approximation: the exact
one-sided Wilcoxon-Mann-Whitney rank-sum test, for claims that one group's values tend to be below the other's
(SMILE appendix D: the steps a chain takes to visit every mode)."""

from __future__ import annotations

import math

import numpy as np

from sgbench.bench.reproduce.claims import CONTRADICTED, FAMILY_RATE, HELD, WITHIN_NOISE, Claim


def rank_ordering(words: str, where: str, lower, higher, lower_label: str, higher_label: str, paper: str = "",
                  reason: str = "", rate: float = FAMILY_RATE) -> Claim:
    r"""The claim "``lower_label``'s values tend to be below ``higher_label``'s", tested on independent replicates
    of each (chains) by the exact one-sided Wilcoxon-Mann-Whitney rank-sum test: the sum :math:`W` of the lower
    group's mid-ranks in the pooled values (ties share their mean rank; inf ranks above every finite value) against
    its exact law under exchangeability, every split of the pooled values into the two groups equally likely
    (:func:`rank_sum_tails`). Held when :math:`P(W \le w) \le` ``rate``, contradicted when
    :math:`P(W \ge w) \le` ``rate``, within noise otherwise. The error rate is ``rate``: where the two laws are
    equal (the claim's boundary) the second tail is at most ``rate`` with probability at most ``rate``, whatever
    the laws; where the claim is true, less. It needs no normal approximation for 10 replicates a side.

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        lower: the values the claim says are lower (one per replicate).
        higher: the values the claim says are higher.
        lower_label: the name of the lower group.
        higher_label: the name of the higher group.
        paper: the paper's values behind the claim.
        reason: what the values are and what else the reader needs.
        rate: the false-contradiction rate.

    Returns:
        the claim with its verdict; ``ours`` gives both groups' values and both tails.
    """
    below, above = rank_sum_tails(lower, higher)
    if below <= rate:
        verdict, why = HELD, f"{lower_label} below beyond the noise"
    elif above <= rate:
        verdict, why = CONTRADICTED, f"{lower_label} above beyond the noise"
    else:
        verdict, why = WITHIN_NOISE, "inside the noise"

    def values(group):
        return ", ".join("inf" if math.isinf(v) else f"{v:.6g}" for v in sorted(group))

    test = (f"exact one-sided rank-sum test, {len(lower)} against {len(higher)}, at {100 * rate:.3g} % each way "
            f"(P(W <= w) = {below:.2g}, P(W >= w) = {above:.2g})")
    return Claim(words, where, verdict, paper=paper,
                 ours=f"{lower_label}: {values(lower)}; {higher_label}: {values(higher)}",
                 reason="; ".join(part for part in (why, test, reason) if part), error_rate=rate)


def rank_sum_tails(lower, higher) -> tuple[float, float]:
    r"""``(P(W <= w), P(W >= w))`` of the rank-sum :math:`W` of ``lower`` in the pooled values, under the exact
    permutation law (each of the :math:`\binom{n_1 + n_2}{n_1}` splits equally likely), with mid-ranks for ties:
    the number of splits of each rank sum counted by dynamic programming over the pooled values (doubled ranks are
    integers)."""
    import scipy.stats

    pooled = np.concatenate([np.asarray(lower, dtype=np.float64), np.asarray(higher, dtype=np.float64)])
    doubled = np.rint(2 * scipy.stats.rankdata(pooled)).astype(int)
    n = len(lower)
    ways = np.zeros((n + 1, int(doubled.sum()) + 1))
    ways[0, 0] = 1.0
    for rank in doubled:  # ways[k, s]: subsets of k of the values seen so far whose doubled ranks sum to s
        ways[1:, rank:] += ways[:-1, :-rank].copy()
    law = ways[n] / ways[n].sum()
    observed = int(doubled[:n].sum())
    return float(law[:observed + 1].sum()), float(law[observed:].sum())
