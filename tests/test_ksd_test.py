"""The wild-bootstrap KSD test (``sgbench.reference.metrics.ksd_test``) and the Stein kernel matrix it uses.

- the kernel matrix against ``ksd`` (V- and U-statistics, to rounding) and against the pairwise
  formula of ``tests/test_ksd.py`` (deterministic);
- null: for exact draws of N(0, I_2) (n = 100, 199 bootstrap draws, 100 replicates) the p-values
  are uniform on the bootstrap's grid: a Kolmogorov-Smirnov test against U(0, 1) at false-failure
  rate 1e-3 (the grid's steps of 1/200 shift the empirical cdf by at most 0.005, against a KS
  critical distance of 0.19; the bootstrap's own approximation error at n = 100 was not visible:
  KS p-values 0.1-0.7 over seeds); ``statistical``: 1000 replicates, same rate;
- power: draws of N(0, 1.5^2 I_2) scored as N(0, I_2), n = 500, are rejected at level 0.01 (p =
  1/1001 with 1000 bootstrap draws, the smallest possible; measured for 20 seeds: all);
- p-value resolution, thinning, bad input.
"""

from __future__ import annotations

import numpy as np
import pytest

from sgbench.reference.checks import p_value_check
from sgbench.reference.metrics import KSDTest, ksd, ksd_test
from sgbench.reference.metrics.ksd import stein_kernel_matrix
from tests.test_ksd import imq_stein_kernel

KS_ALPHA = 1e-3


def test_kernel_matrix_is_ksds_kernel():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 3)) + 5.0
    s = -(x - 5.0) + 0.3 * rng.standard_normal((60, 3))
    for c, beta in ((1.0, -0.5), (0.5, -0.2)):
        k = stein_kernel_matrix(x, s, c, beta)
        np.testing.assert_allclose(k, k.T, rtol=1e-12, atol=1e-12)
        assert k.mean() == pytest.approx(ksd(x, s, c=c, beta=beta), rel=1e-10)
        off = (k.sum() - np.trace(k)) / (60 * 59)
        assert off == pytest.approx(ksd(x, s, c=c, beta=beta, statistic="u"), rel=1e-9, abs=1e-12)
        for i, j in ((0, 0), (3, 17), (59, 2)):
            assert k[i, j] == pytest.approx(imq_stein_kernel(x[i], x[j], s[i], s[j], c, beta), rel=1e-10)


def null_p_values(replicates, n=100, num_bootstrap=199, seed=1):
    rng = np.random.default_rng(seed)
    return np.array([ksd_test(x, -x, num_bootstrap=num_bootstrap, rng=rng).p_value
                     for x in rng.standard_normal((replicates, n, 2))])


def ks_p_value(p):
    import scipy.stats

    return scipy.stats.kstest(p, "uniform").pvalue


@pytest.mark.parametrize("replicates", [100, pytest.param(1000, marks=pytest.mark.statistical)])
def test_p_values_are_uniform_under_the_null(replicates):
    p = null_p_values(replicates)
    assert np.all((p >= 1 / 200) & (p <= 1))
    p_value_check([ks_p_value(p)], alpha=KS_ALPHA, name=f"KS test of {replicates} null KSD p-values").assert_passed()


def test_rejects_a_scaled_gaussian():
    rng = np.random.default_rng(2)
    x = 1.5 * rng.standard_normal((500, 2))
    result = ksd_test(x, -x, num_bootstrap=1000, rng=rng)
    assert isinstance(result, KSDTest) and result.num_draws == 500
    assert result.p_value == pytest.approx(1 / 1001)
    p_value_check([result.p_value], alpha=0.01, name="KSD test of a 1.5x scaled Gaussian").assert_failed()
    assert result.statistic == pytest.approx(500 * result.ksd_squared)
    assert result.ksd_squared == pytest.approx(ksd(x, -x), rel=1e-10)


def test_resolution_thinning_and_chains():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 40, 2))
    result = ksd_test(x, -x, num_bootstrap=9, rng=4)
    assert result.num_draws == 80 and result.num_bootstrap == 9
    assert result.p_value * 10 == pytest.approx(round(result.p_value * 10))
    assert ksd_test(x, -x, num_bootstrap=9, thin=4).num_draws == 20
    assert ksd_test(x, -x, rng=5) == ksd_test(x, -x, rng=np.random.default_rng(5))


@pytest.mark.parametrize("kwargs,message", [
    (dict(num_bootstrap=0), "num_bootstrap must be an integer >= 1"),
    (dict(c=0.0), "c must be a finite number > 0"),
    (dict(beta=-1.5), r"beta must be a number in \(-1, 0\)"),
    (dict(thin=100), "thin must be an integer"),
])
def test_bad_input(kwargs, message):
    x = np.random.default_rng(6).standard_normal((50, 2))
    with pytest.raises(ValueError, match=message):
        ksd_test(x, -x, **kwargs)
    with pytest.raises(ValueError, match="scores must have the shape of samples"):
        ksd_test(x, -x[:, :1])
