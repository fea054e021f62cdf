"""The exact rank-sum claim test (``bench/reproduce/rank_claims.py``): its tails against scipy's exact permutation
p-values, and its verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from sgbench.bench.reproduce import rank_claims


@pytest.mark.parametrize("lower, higher", [
    ([1, 2, 2, 3, 5], [2, 4, 4, 6, 7, 8]),                 # ties across the groups
    ([3, 1, 4, 1, 5, 9, 2, 6], [5, 3, 5, 8, 9, 7, 9, 3]),
    ([1, 2, math.inf], [math.inf, math.inf, 3]),  # inf (a chain that never visited every mode) ties at the top
])
def test_rank_sum_tails_are_the_exact_permutation_p_values(lower, higher):
    def exact(alternative):
        return scipy.stats.mannwhitneyu(lower, higher, alternative=alternative,
                                        method=scipy.stats.PermutationMethod(n_resamples=np.inf)).pvalue

    below, above = rank_claims.rank_sum_tails(lower, higher)
    assert below == pytest.approx(exact("less"), rel=1e-12) and above == pytest.approx(exact("greater"), rel=1e-12)


def test_rank_ordering_verdicts():
    fast, slow = [3000.0 + 100 * k for k in range(10)], [9000.0 + 500 * k for k in range(10)]
    held = rank_claims.rank_ordering("w", "here", fast, slow, "A", "B")
    assert held.verdict == "held" and held.error_rate == 0.05 and "P(W <= w) = 5.4e-06" in held.reason
    assert rank_claims.rank_ordering("w", "here", slow, fast, "A", "B").verdict == "contradicted"
    # interleaved, and every chain short of all modes (all inf): inside the noise both ways
    assert rank_claims.rank_ordering("w", "here", fast[::2] + slow[::2], fast[1::2] + slow[1::2], "A",
                                   "B").verdict == "within noise"
    never = rank_claims.rank_ordering("w", "here", [math.inf] * 10, [math.inf] * 10, "A", "B")
    assert never.verdict == "within noise" and "A: inf, inf" in never.ours
