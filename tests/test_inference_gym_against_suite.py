r"""The suite's funnel, rosenbrock and icg held to Inference Gym's NealsFunnel, Banana and IllConditionedGaussian.

*Funnel*: the same law. The suite's ``funnel`` at its defaults (dimension 10, log-scale standard deviation 3) and
Inference Gym's ``NealsFunnel(ndims=10)`` have the same normalised log density (to Inference Gym's float32
rounding) and the same truth (means 0, standard deviations 3 and :math:`e^{9/4}`).

*Banana and rosenbrock*: two different bananas, no shared truth. Inference Gym's is
:math:`x_0 \sim N(0, 10^2)`, :math:`x_1 \mid x_0 \sim N(c(x_0^2 - 100), 1)`, :math:`c = 0.03`, so :math:`E[x_1] = 0`
and :math:`\mathrm{Var}[x_1] = 1 + 2 c^2 10^4 = 19`; the suite's rosenbrock pair (SMILE appendix C) is
:math:`a \sim N(1, 1/2)`, :math:`b \mid a \sim N(a^2, Q/2)`, whose conditional mean :math:`a^2` has a linear term in
the standardised :math:`a`, so no affine map takes one to the other. Inference Gym's density and truth are held to
the closed forms above.

*Ill-conditioned Gaussians*: the same family, a different spectrum. Inference Gym's is 100-dimensional with a random
rotation and eigenvalues the reciprocals of Gamma(1/2) draws (condition number about 1.3e5); the suite's ``icg`` is
10-dimensional by default with a Haar rotation and eigenvalues log-spaced over a condition number of 1e4. Inference
Gym's covariance is recovered exactly as minus the inverse Hessian of its log density (a Gaussian's Hessian is
constant), and its stated standard deviations are that covariance's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

pytest.importorskip("inference_gym.using_jax", reason="Inference Gym is absent: python -m pip install "
                                                      "'sgmcmc-bench[gym]'")

from sgbench import targets  # noqa: E402

FLOAT32 = 1e-5  # relative rounding of a float32 log density, with headroom


def test_the_suite_s_funnel_is_inference_gym_s():
    ours, theirs = targets.get("funnel"), targets.get("inference_gym", model="neals_funnel")
    x = np.random.default_rng(0).standard_normal((20, 10)) * np.r_[3.0, np.ones(9)]
    np.testing.assert_allclose(theirs.logdensity(x), ours.logdensity(x), rtol=FLOAT32)
    np.testing.assert_allclose(theirs.truth.mean, ours.truth.mean, atol=1e-12)
    np.testing.assert_allclose(np.diag(theirs.truth.covariance), np.diag(ours.truth.covariance), rtol=1e-6)


def test_inference_gym_s_banana_is_its_closed_form_and_not_the_rosenbrock():
    banana, curvature = targets.get("inference_gym", model="banana"), 0.03
    x = np.random.default_rng(1).standard_normal((20, 2)) * [10.0, 4.0]
    closed_form = (stats.norm.logpdf(x[:, 0], 0, 10)
                   + stats.norm.logpdf(x[:, 1], curvature * (x[:, 0] ** 2 - 100), 1))
    np.testing.assert_allclose(banana.logdensity(x), closed_form, rtol=FLOAT32)
    np.testing.assert_allclose(banana.truth.mean, [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.diag(banana.truth.covariance), [100.0, 1 + 2 * curvature**2 * 1e4], rtol=1e-6)
    rosenbrock = targets.get("rosenbrock", dim=2)
    assert not np.allclose(rosenbrock.truth.mean, banana.truth.mean)


def test_inference_gym_s_ill_conditioned_gaussian_has_its_stated_spread_and_another_spectrum():
    theirs = targets.get("inference_gym", model="ill_conditioned_gaussian")
    with jax.enable_x64(True):
        hessian = np.asarray(jax.hessian(theirs.logdensity)(jnp.zeros(theirs.dim)), dtype=np.float64)
    covariance = np.linalg.inv(-0.5 * (hessian + hessian.T))
    np.testing.assert_allclose(np.sqrt(np.diag(theirs.truth.covariance)), np.sqrt(np.diag(covariance)), rtol=1e-3)
    eigenvalues = np.linalg.eigvalsh(covariance)
    assert eigenvalues.max() / eigenvalues.min() > 1e5  # the suite's icg: 1e4, log-spaced
    ours = targets.get("icg")
    assert ours.dim == 10 and np.isclose(ours.eigenvalues.max() / ours.eigenvalues.min(), 1e4)
