"""Claims about shares of trials (``bench/reproduce/count_claims.py``): the exact binomial range test and Fisher's
test, their verdicts and their stated false-contradiction rates, computed exactly."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from sgbench.bench.reproduce import count_claims
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, WITHIN_NOISE


@pytest.mark.parametrize("count, total, verdict", [
    (10, 24, CONTRADICTED),     # 0.42, interval 0.22-0.63: below 0.78
    (24, 24, WITHIN_NOISE),     # all 24: P(X >= 24 | 0.86) = 0.86^24 = 0.027 > 0.025, not beyond the noise
    (20, 24, WITHIN_NOISE),     # 0.83, interval 0.63-0.95
    (99, 100, CONTRADICTED),    # interval 0.95-1.0: above 0.86
    (8200, 10_000, HELD),       # interval 0.81-0.83: inside 0.78-0.86
])
def test_share_between_is_exact(count, total, verdict):
    claim = count_claims.share_between("rates between 78% and 86%", "sec. 1", count, total, 0.78, 0.86, "NaN chains")
    assert claim.verdict == verdict, claim
    assert claim.ours.startswith(f"NaN chains: {count} of {total} = ")


@pytest.mark.parametrize("total", [24, 100])
def test_share_between_calls_a_true_claim_contradicted_at_most_at_its_stated_rate(total):
    """The probability of a contradiction, summed exactly over every count, at its largest over shares across the
    claimed range, is the stated error rate, itself at most 5 %."""
    low, high = 0.78, 0.86
    verdicts = [count_claims.share_between("w", "s", k, total, low, high, "x").verdict for k in range(total + 1)]
    rejected = np.array([v == CONTRADICTED for v in verdicts])
    stated = count_claims.between_error_rate(total, low, high)
    worst = max(scipy.stats.binom.pmf(np.arange(total + 1), total, p)[rejected].sum()
                for p in np.linspace(low, high, 81))
    assert stated == pytest.approx(worst, abs=1e-12) and stated <= 0.05  # the largest at an end of the range
    assert count_claims.share_between("w", "s", 10, total, low, high, "x").error_rate == stated


def test_share_between_refuses_impossible_counts():
    with pytest.raises(ValueError, match="0 <= count <= total"):
        count_claims.share_between("w", "s", 5, 4, 0.1, 0.2, "x")
    with pytest.raises(ValueError, match="low <= high"):
        count_claims.share_between("w", "s", 1, 4, 0.3, 0.2, "x")


@pytest.mark.parametrize("lower, higher, verdict", [
    ((0, 24), (10, 24), HELD),           # Fisher p = 3e-4
    ((3, 24), (3, 24), WITHIN_NOISE),
    ((2, 24), (5, 24), WITHIN_NOISE),    # p = 0.21
    ((20, 24), (2, 24), CONTRADICTED),
])
def test_share_below_by_fishers_exact_test(lower, higher, verdict):
    claim = count_claims.share_below("A fails less", "sec. 2", lower, higher, "A", "B")
    assert claim.verdict == verdict and claim.error_rate == 0.05
    assert f"A {lower[0]} of {lower[1]}" in claim.ours and "Fisher's exact p = " in claim.ours


def test_share_text_gives_the_exact_interval():
    assert count_claims.share_text(0, 24) == "0 of 24 = 0.00 (95 % interval 0.00-0.14)"  # 1 - 0.025^(1/24) = 0.142
