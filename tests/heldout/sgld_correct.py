r"""Held-out sampler ``sgld_correct``: a correct SGLD (Welling & Teh 2011, in the standard convention), written
to be run at hard settings: tiny steps where it mixes slowly, and one step size across targets of very different
curvature.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t + h\,g(x_t) + \sqrt{2hT}\,\xi_t.

What is right: everything. It is the suite's ``sgld`` draw for draw (same update, same draws), so its
discretisation bias is SGLD's: of order :math:`h`, vanishing as :math:`h \to 0`.

Exact laws (``python -m tests.heldout._decisive_laws``; the stationary covariance of :math:`x' = (I - hP)x + w`
solves :math:`S = ASA^\top + Q`, :math:`Q = 2hTI + h^2V`; on linreg the minibatch law of
``sgbench.reference.minibatch_laws``), r the relative variance error per coordinate:

- icg (precision eigenvalues 0.5 to 2, gradient-noise variance 2): r = +0.026 to +0.036 at h = 0.02, halving
  with h (+0.0032 to +0.0045 at 0.0025); +0.0025 to +0.0036 at h = 2e-3 and +0.0013 to +0.0018 at h = 1e-3, where
  the slowest mode relaxes at :math:`h\lambda_{\min}` = 1e-3 or 5e-4 per step: the integrated autocorrelation time
  of the slowest coordinate is about :math:`2/(h\lambda_{\min})` = 2000 or 4000 steps (1000 or 2000 for its square);
- linreg (precision 20.6 and 29.7, minibatches of 8 of 40) at h = 0.02 (:math:`h\lambda_{\max}` = 0.6): r = +1.44,
  +1.94, then +0.56, +0.78 (h/2), +0.25, +0.36 (h/4), +0.12, +0.17 (h/8), +0.059, +0.083 (h/16): large at the
  user's step, O(h) only from about h/4 on; at temperature 0.5 and h = 1e-3: +0.078, +0.117, halving with h.

Measured (``python -m tests.heldout._decisive_measure``: ``bench.run``, float64, chains started as validate starts
them, at mu + 2(x - mu) from exact draws, after a warm-up as long as the scored steps; SE standard errors over
chains): icg at h = 0.02 (256 chains, 8000 steps): r +0.035 to +0.043 (SE 0.006 to 0.010); at h = 2e-3 (16 000
steps): -0.010 to +0.010 (SE 0.012 to 0.023); at h = 1e-3 (32 000 steps, warm-up 16 000): -0.030 to +0.013 (SE
0.013 to 0.023). linreg at h = 0.02 (128 chains): +1.438, +1.945 (SE 0.005, 0.006); at h/16 = 1.25e-3 (128 000
steps): +0.062, +0.085 (SE 0.002); at T = 0.5, h = 1e-3: +0.078, +0.123 (SE 0.007). gmm at h = 0.02 (128 chains,
8000 steps; mixture coordinates first, the normal one last): +0.012, +0.006, +0.017 (SE 0.005, 0.005, 0.009), and
+0.014, -0.005, +0.021 at h/2 (SE 0.004 to 0.011) and within 3 SE of 0 at h/4 and h/8 (steps x 2^k). logreg at h =
0.02 (64 chains, 2000 steps; 31 coordinates against the NUTS gold standard, whose own SE of r is at most 0.012;
:math:`h\lambda_{\max}` = 1.2): the largest r +6.40 (median +1.71; the largest mean error -1.62 standard
deviations), then at h/2, h/4, h/8, h/16 with steps x 2^k: +1.65, +0.43, +0.16, +0.094 (medians +0.27, +0.07,
+0.024, +0.017; SE 0.03 to 0.14): not yet O(h) at the first rungs (it falls by 4 per halving), about O(h) from h/8.

Verdict: never FAILED (it is SGLD). Without a claim, held to truth with the step ladder, PASSED wherever the budget
resolves the error (its bias vanishes with the step: on linreg and logreg at h = 0.02 only after a few rungs);
INCONCLUSIVE is honest where it cannot, e.g. at h = 1e-3 on icg with too few chains x steps to forget the start
(warm-up of 2 autocorrelation times, 8000 steps) and to resolve r = 0.1 (about 5500 effective draws of the slowest
square, whose autocorrelation time is 2000 steps: about 350 chains x 32 000 steps). At h = 1e-5 (autocorrelation
time 4e5 steps: a warm-up of 8e5 steps and about 1e9 scored chain-steps) no budget of minutes decides: INCONCLUSIVE.
Claiming ``sgld`` it is the reference's chain: PASSED.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401


def update(xp, x, grad_fn, noise, h, temperature):
    drift = h * grad_fn(x)
    diffusion = xp.sqrt(2 * h * temperature) * noise
    return x + drift + diffusion


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_correct", "Welling & Teh (2011), standard convention; held out, for hard settings", globals())
