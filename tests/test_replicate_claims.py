"""Ordering claims on a few replicates per setting (``bench/reproduce/replicate_claims.py``): Welch's statistic and
degrees of freedom, the verdicts at and over settings, failed runs, and the stated error rate at the claim's
boundary (where the normal critical values of ``claims.ordering`` would exceed it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from sgbench.bench.reproduce import claims as c
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, WITHIN_NOISE, Comparison
from sgbench.bench.reproduce.replicate_claims import Replicates, critical_t, replicate_ordering


def test_welch_statistic_and_degrees_of_freedom_are_scipys():
    rng = np.random.default_rng(0)
    better, worse = rng.normal(1.0, 0.5, 4), rng.normal(0.0, 2.0, 6)
    t, df = Replicates("x", tuple(better), tuple(worse)).welch(higher_is_better=True)
    expected = scipy.stats.ttest_ind(better, worse, equal_var=False)
    assert t == pytest.approx(expected.statistic, rel=1e-12) and df == pytest.approx(expected.df, rel=1e-12)
    assert Replicates("x", tuple(better), tuple(worse)).welch(higher_is_better=False)[0] == pytest.approx(-t)
    assert critical_t(3.0, 6) == pytest.approx(scipy.stats.t.ppf(1 - 0.05 / 6, 3), rel=1e-10)


@pytest.mark.parametrize("better, worse, verdict", [
    ((0.10, 0.11, 0.12, 0.13), (0.30, 0.31, 0.32, 0.33), HELD),          # lower is better: t = 22
    ((0.30, 0.31, 0.32, 0.33), (0.10, 0.11, 0.12, 0.13), CONTRADICTED),
    ((0.10, 0.20, 0.30, 0.40), (0.15, 0.25, 0.35, 0.45), WITHIN_NOISE),  # t = 0.55
    ((0.20, 0.30, 0.40, 0.50), (0.10, 0.20, 0.30, 0.40), WITHIN_NOISE),  # t = -1.1, above -t_6(0.95) = -1.94
    ((0.30, 0.40, 0.50, 0.60), (0.10, 0.20, 0.30, 0.40), CONTRADICTED),  # t = -2.2
    (None, (0.1, 0.2), CONTRADICTED),                                    # the claimed better run failed
    ((0.1, math.nan), (0.1, 0.2), CONTRADICTED),                         # a chain of it diverged
    ((0.1, 0.2), None, HELD),
    (None, None, WITHIN_NOISE),
    ((0.1, 0.1), (0.2, 0.2), HELD),                                      # no spread, different means
    ((0.2, 0.2), (0.2, 0.2), WITHIN_NOISE),
])
def test_verdict_at_one_setting(better, worse, verdict):
    claim = replicate_ordering("A below B", "sec. 1", [Replicates("x", better, worse)], "A", "B",
                               higher_is_better=False)
    assert claim.verdict == verdict and claim.error_rate == 0.05


def test_over_settings_bonferroni_names_where_it_fails():
    settings = [Replicates("T=1", (1.0, 1.1, 1.2, 1.3), (0.0, 0.1, 0.2, 0.3)),    # t = 11
                Replicates("T=0.1", (0.4, 0.5, 0.6, 0.7), (0.0, 0.1, 0.2, 0.3))]  # t = 4.4
    claim = replicate_ordering("A above B", "sec. 2", settings, "A", "B", higher_is_better=True)
    assert claim.verdict == HELD and "critical t = 2.45, 2.45" in claim.reason  # t_6(1 - 0.05 / 2)
    assert "T=1: A 1.15 ± 0.065 vs B 0.15 ± 0.065 (t = 11, df = 6)" in claim.ours
    settings.append(Replicates("T=0.01", (0.0, 0.1, 0.2, 0.3), (0.05, 0.15, 0.25, 0.35)))
    claim = replicate_ordering("A above B", "sec. 2", settings, "A", "B", higher_is_better=True)
    assert claim.verdict == WITHIN_NOISE and "inside the noise at T=0.01" in claim.reason
    settings.append(Replicates("T=0.001", None, (0.0, 0.1)))
    claim = replicate_ordering("A above B", "sec. 2", settings, "A", "B", higher_is_better=True)
    assert claim.verdict == CONTRADICTED and "reversed beyond the noise at T=0.001" in claim.reason
    assert "T=0.001: A failed vs B" in claim.ours
    with pytest.raises(ValueError, match="at least 2 replicates"):
        Replicates("x", (1.0,), (1.0, 2.0))
    with pytest.raises(ValueError, match="at least one setting"):
        replicate_ordering("A", "sec. 3", [], "A", "B", higher_is_better=True)


def test_a_true_claim_is_called_contradicted_at_most_at_its_rate_where_normal_quantiles_would_exceed_it():
    """At the boundary (equal means at 3 settings, 4 normal replicates each), Welch's test calls the claim
    contradicted in at most 5 % of the families (measured 3.2 % of 4000; a rate of 5 % would give 5 ± 0.34 %),
    while ``claims.ordering`` on the same standard errors exceeds its stated 5 % (measured 10.4 %)."""
    rng = np.random.default_rng(1)
    trials, welch, normal = 4000, 0, 0
    for _ in range(trials):
        x = rng.standard_normal((3, 2, 4))
        welch += replicate_ordering("A above B", "s", [Replicates(f"{k}", tuple(a), tuple(b)) for k, (a, b)
                                                       in enumerate(x)], "A", "B", True).verdict == CONTRADICTED
        normal += c.ordering("A below B", "s", [Comparison(f"{k}", b.mean(), b.std(ddof=1) / 2, a.mean(),
                                                           a.std(ddof=1) / 2) for k, (a, b) in enumerate(x)],
                             "B", "A").verdict == CONTRADICTED
    tolerance = 3 * math.sqrt(0.05 * 0.95 / trials)
    assert welch / trials < 0.05 + tolerance and normal / trials > 0.05 + tolerance
