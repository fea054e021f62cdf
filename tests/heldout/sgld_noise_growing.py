r"""Held-out sampler ``sgld_noise_growing``: SGLD with injected variance :math:`2hT(1 + 15h)`: an O(h)
slip, a valid but worse discretisation.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t + h\,g(x_t) + \sqrt{2hT(1 + 15h)}\,\xi_t.

What is right: as :math:`h \to 0` it is SGLD, and its bias vanishes linearly: a consistent discretisation of the
Langevin diffusion, which a validator without a claim cannot tell from a correct one. What is wrong, for a sampler
that claims to be the suite's SGLD: its O(h) coefficient, about 15 (+0.3 at h = 0.02) against SGLD's
:math:`1 + \lambda/2` on icg.

Exact (``python -m tests.heldout._decisive_laws``): icg: r = +0.327 to +0.341 at h = 0.02, +0.163 to +0.169 at
0.01, +0.081 to +0.084 at 0.005, +0.041 to +0.042 at 0.0025 (relative to SGLD's law: +0.294, +0.149, +0.075,
+0.037). linreg at h = 0.02: +1.89, +2.39 against SGLD's +1.44, +1.94 (relative +0.184, +0.151); at h/8: relative
+0.035, +0.033.

Measured (``tests.heldout._decisive_measure``, icg, h = 0.02, 256 chains, 8000 steps after 8000, from mu + 2(x -
mu)): +0.339 to +0.349 (SE 0.008 to 0.012).

Verdict: without a claim PASSED (or INCONCLUSIVE): its error vanishes as h, the ladder's intercept is 0. Claiming
``sgld`` FAILED: at the user's step it differs from SGLD's law by +0.29 on icg (h = 0.02) and +0.15 to +0.18 on
linreg (h = 0.02), where both are stable and the difference is many standard errors.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401

GROWTH = 15.0  # the O(h) bug: the injected variance is 2 h T (1 + GROWTH h)


def update(xp, x, grad_fn, noise, h, temperature):
    return x + h * grad_fn(x) + xp.sqrt(2 * h * temperature * (1 + GROWTH * h)) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_noise_growing", "held-out O(h) bug: SGLD with injected variance 2hT(1 + 15h)", globals())
