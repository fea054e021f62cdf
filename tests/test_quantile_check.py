"""``sgbench.reference.checks.quantile_check``: the distribution-free check of heavy-tailed replicates.

- Null: Cauchy replicates (no mean, no variance), the median estimated from N = 1024 reference
  draws, 64 new replicates in 2 coordinates, at alpha = 1e-2; over 2000 simulated checks the
  failure rate must not exceed 1e-2 (the check is conservative): a one-sided exact binomial test
  at rate 1e-6 (it fails only if the rate is significantly above 1e-2).
- Power: shifting the replicates so that P(x <= median) = 0.5 - `detectable` must fail at least
  90 % of the time (a one-sided binomial test at 1e-6 against 0.9; the normal approximation
  behind `detectable` is slightly conservative at n = 64).
- Bad input names the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from sgbench.reference.checks import quantile_check

ALPHA, SIMULATIONS, REFERENCE, REPLICATES, DIM = 1e-2, 2000, 1024, 64, 2


def _simulate(shift_probability=0.0, seed=0):
    rng = np.random.default_rng(seed)
    failures = 0
    for _ in range(SIMULATIONS):
        median = np.median(rng.standard_cauchy((REFERENCE, DIM)), axis=0)
        x = rng.standard_cauchy((REPLICATES, DIM))
        # a shift that moves P(x <= true median 0) from 0.5 to 0.5 - shift_probability
        x = x + np.tan(np.pi * shift_probability)
        result = quantile_check(x, median, alpha=ALPHA, reference_count=REFERENCE)
        failures += not result.passed
    return failures, result


def test_null_rate_at_most_alpha():
    failures, _ = _simulate()
    p_value = scipy.stats.binom.sf(failures - 1, SIMULATIONS, ALPHA)
    assert p_value > 1e-6, f"{failures} failures in {SIMULATIONS} (designed at most {ALPHA})"


def test_power_at_the_detectable_shift():
    _, result = _simulate(seed=1)
    shift = float(np.max(result.detectable))
    failures, _ = _simulate(shift, seed=2)
    assert scipy.stats.binom.cdf(failures, SIMULATIONS, 0.9) > 1e-6, (failures, shift)


def test_bad_input():
    x = np.zeros((10, 2))
    with pytest.raises(ValueError, match="probability"):
        quantile_check(x, [0.0, 0.0], alpha=0.01, probability=1.0)
    with pytest.raises(ValueError, match="reference_count"):
        quantile_check(x, [0.0, 0.0], alpha=0.01, reference_count=1)
    with pytest.raises(ValueError, match="alpha"):
        quantile_check(x, [0.0, 0.0], alpha=2.0)
    with pytest.raises(ValueError, match="quantiles"):
        quantile_check(x, [0.0, 0.0, 0.0], alpha=0.01)
