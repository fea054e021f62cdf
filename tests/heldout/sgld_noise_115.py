r"""Held-out sampler ``sgld_noise_115``: SGLD whose injected noise is 15 % too large in variance (an order-one
bug of modest size).

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t + h\,g(x_t) + \sqrt{2hT \cdot 1.15}\,\xi_t.

What is wrong: the noise should have variance :math:`2hT`; as :math:`h \to 0` the chain samples
:math:`p^{1/(1.15T)}`, the target at temperature 1.15 T. On a Gaussian r tends to +0.15 on every coordinate; on
gmm's mixture coordinates (modes at +-1, component variance 0.3) :math:`q^{1/1.15}` has r = +0.047 (quadrature),
on its normal coordinate +0.15; on logreg about +0.15 on every coordinate (the posterior is close to Gaussian).

Exact (``python -m tests.heldout._decisive_laws``): icg at h = 0.02: r = +0.176 to +0.189 (SGLD's +0.026 to
+0.036: +0.147 relative to SGLD's law); at h/8 = 0.0025: +0.153 to +0.155 (relative +0.150). Order one: it does
not vanish with the step.

Measured (``tests.heldout._decisive_measure``, chains from mu + 2(x - mu), warm-up = scored steps, SE over chains):
icg h = 0.02 (256 chains, 8000 steps): +0.187 to +0.196 (SE 0.007 to 0.011). gmm (128 chains) at h = 0.02:
+0.060, +0.056 (mixture), +0.166 (normal) (SE 0.005, 0.005, 0.010); at h/8 = 0.0025 (64 000 steps): +0.040,
+0.041, +0.182 (SE 0.005, 0.005, 0.012). logreg (128 chains, 4000 steps at h = 0.005; 32 000 at h/8): quartiles
of r over the 31 coordinates [+0.150, +0.194, +0.234, +0.345, +0.637] at h = 0.005 (SGLD's [-0.003, +0.035,
+0.076, +0.169, +0.438]) and [+0.085, +0.130, +0.160, +0.182, +0.242] at h/8 = 6.25e-4 (SGLD's [-0.057, -0.018,
+0.007, +0.023, +0.069]; SE at most 0.035).

Verdict: FAILED on icg, gmm (its normal coordinate) and logreg, without a claim (the ladder's intercept is about
+0.15, not 0) and claiming ``sgld`` (+0.15 relative to SGLD's law at every step).
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401

NOISE_FACTOR = 1.15  # the bug: the injected variance is 2 h T x 1.15


def update(xp, x, grad_fn, noise, h, temperature):
    return x + h * grad_fn(x) + xp.sqrt(2 * h * temperature * NOISE_FACTOR) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_noise_115", "held-out bug: SGLD with injected noise variance 2hT x 1.15", globals())
