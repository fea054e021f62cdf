r"""Held-out sampler ``sgld_noise_inflated``: SGLD whose injected noise is 20 % too large in variance.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t + h\,g(x_t) + \sqrt{2hT(1 + 0.2)}\,\xi_t.

What is wrong: the noise should have variance :math:`2hT`. On a Gaussian target of covariance
:math:`\Sigma` its stationary covariance is :math:`1.2\,T\Sigma` up to the discretisation bias of order
:math:`h` that SGLD has too, so the relative second-moment error r is about +0.2 at small steps (the bug's
signature: a temperature 1.2 times the one asked for).

Measured (``bench.run``, 64 chains of 4000 steps from exact draws, r per coordinate, standard errors over
chains): icg4 (condition number 4, gradient-noise variance 2) at h = 0.02: r = 0.19 to 0.25 (SE 0.02 to
0.035) where SGLD's is 0.00 to 0.045; at h = 0.01: 0.17 to 0.23 (SE 0.03 to 0.05) against SGLD's -0.02 to
0.03; the linreg preset (N = 40, d = 2, minibatches of 8) at h = 1e-3: 0.27 and 0.28 (SE 0.02) against
SGLD's 0.06 and 0.07 (its minibatch noise heats it).

Verdict: FAILED on every target at step sizes where SGLD's own bias is small against 0.2 (icg4 at
h = 0.01 or 0.02, linreg at h = 1e-3), whether checked against exact truth or against the suite's ``sgld``:
the extra 0.2 is neither truth nor SGLD's bias, and it does not halve with the step. With 16 chains the
weakest coordinate's z against truth drops to 1 to 2 at h = 0.01 (3 at h = 0.02): give it 32 chains or more.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401

INFLATION = 0.2  # the bug: the injected variance is 2 h T (1 + INFLATION)


def update(xp, x, grad_fn, noise, h, temperature):
    return x + h * grad_fn(x) + xp.sqrt(2 * h * temperature * (1 + INFLATION)) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_noise_inflated", "held-out bug: SGLD with injected noise variance 2h(1 + 0.2)", globals())
