r"""Held-out sampler ``sgld_drift_growing``: SGLD with the drift :math:`h(1 + 20h)\,g`: an O(h) slip, a valid
but worse discretisation.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t + h(1 + 20h)\,g(x_t) + \sqrt{2hT}\,\xi_t.

What is right: it is SGLD with step :math:`h' = h(1 + 20h)` at temperature :math:`T/(1 + 20h)`: consistent, its
bias vanishes linearly. What is wrong, for a sampler that claims the suite's SGLD: the O(h) coefficient, about -20
(-0.27 at h = 0.02, relative to SGLD's law).

Exact (``python -m tests.heldout._decisive_laws``): icg: r = -0.252 to -0.241 at h = 0.02, -0.152 to -0.147 at
0.01, -0.084 to -0.081 at 0.005, -0.044 to -0.043 at 0.0025 (relative to SGLD's law -0.27, -0.16, -0.090,
-0.047).

Measured (``tests.heldout._decisive_measure``, chains from mu + 2(x - mu), warm-up = scored steps, SE over chains):
icg h = 0.02 (256 chains, 8000 steps): -0.246 to -0.239 (SE 0.004 to 0.006). gmm (128 chains; mixture coordinates,
then the normal one), steps x 2^k at h/2^k: h = 0.02: -0.073, -0.075, -0.256 (SE 0.004, 0.004, 0.006; SGLD's on the
same draws +0.012, +0.006, +0.017: relative -0.084, -0.080, -0.268); 0.01: -0.038, -0.053, -0.145; 0.005: -0.023,
-0.023, -0.087; 0.0025: -0.022, -0.020, -0.021 (SE 0.005, 0.005, 0.010).

Verdict: without a claim PASSED (or INCONCLUSIVE): the error vanishes with the step. Claiming ``sgld`` FAILED on
icg (-0.27 relative at h = 0.02) and on gmm (-0.27 on the normal coordinate).
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401

GROWTH = 20.0  # the O(h) bug: the drift is h (1 + GROWTH h) g(x)


def update(xp, x, grad_fn, noise, h, temperature):
    return x + h * (1 + GROWTH * h) * grad_fn(x) + xp.sqrt(2 * h * temperature) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_drift_growing", "held-out O(h) bug: SGLD with the drift h(1 + 20h) g(x)", globals())
