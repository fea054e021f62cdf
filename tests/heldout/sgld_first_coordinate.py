r"""Held-out sampler ``sgld_first_coordinate``: SGLD whose first coordinate's gradient is scaled by 1.2 (an
order-one bug confined to one coordinate).

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`,
:math:`D = \mathrm{diag}(1.2, 1, \dots, 1)`):

.. math:: x_{t+1} = x_t + h\,D\,g(x_t) + \sqrt{2hT}\,\xi_t.

What is wrong: a preconditioner :math:`D` without the matching noise :math:`2hTD` (and, off a product target,
without the correction term) does not leave the target invariant: as :math:`h \to 0` the stationary covariance
solves :math:`DPS + SPD = 2TI`, not :math:`S = TP^{-1}`. On a rotated Gaussian that is computable; on gmm, whose
first coordinate is a mixture coordinate of a product density, it samples :math:`q^{1.2}` there (r = -0.051 by
quadrature: below the resolution, so gmm is not a target for this bug).

Exact (``python -m tests.heldout._decisive_laws``): icg at h = 0.02: r = -0.134, +0.028, +0.029, +0.033 (relative
to SGLD's law -0.155, 0.000, -0.003, -0.004); at h/8 = 0.0025: -0.160, +0.003, +0.001, +0.001 (relative -0.162):
order one on coordinate 0. linreg at h = 1e-3: -0.110, +0.064 (relative to SGLD -0.150, -0.003); at h/8: -0.157,
+0.006.

Measured (``tests.heldout._decisive_measure``, icg, h = 0.02, 256 chains, 8000 steps after 8000, from mu + 2(x -
mu)): -0.124, +0.043, +0.038, +0.030 (SE 0.006 to 0.009).

Verdict: FAILED on icg (and linreg) with or without the claim ``sgld``: coordinate 0's r tends to -0.16 as the
step shrinks.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401

SCALE = 1.2  # the bug: the first coordinate's gradient is multiplied by this


def update(xp, x, grad_fn, noise, h, temperature):
    scale = 1 + (SCALE - 1) * (xp.arange(x.shape[-1]) == 0)
    return x + h * scale * grad_fn(x) + xp.sqrt(2 * h * temperature) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_first_coordinate", "held-out bug: SGLD with the first coordinate's gradient scaled by 1.2", globals())
