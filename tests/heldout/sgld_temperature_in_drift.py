r"""Held-out sampler ``sgld_temperature_in_drift``: SGLD that tempers the drift instead of the noise (an
order-one bug that shows only at a temperature other than 1).

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t + hT\,g(x_t) + \sqrt{2h}\,\xi_t.

What is wrong: the tempered target is :math:`p^{1/T}` (the suite's SGLD: drift :math:`h\,g`, noise
:math:`2hT`); this update takes the tempered log density as :math:`T\log p` and samples :math:`p^{T}` as
:math:`h \to 0`. At T = 1 it is SGLD. On a Gaussian the covariance is :math:`\Sigma/T` against :math:`T\Sigma`:
r tends to :math:`1/T^2 - 1` = +0.235 at T = 0.9 on every coordinate.

Exact (``python -m tests.heldout._decisive_laws``): icg at T = 0.9, h = 0.02: r = +0.261 to +0.273 (+0.225 relative
to SGLD at T = 0.9, whose own r is +0.029 to +0.040); at h/8: +0.238 to +0.239 (relative +0.234). linreg at T =
0.9, h = 1e-3: +0.283, +0.303 (relative to SGLD's law +0.222, +0.215); at h/8: +0.241, +0.243 (relative +0.233,
+0.232).

Measured (``tests.heldout._decisive_measure``, 256 chains, 8000 steps after 8000, from mu + 2(x - mu)): icg at T =
0.9, h = 0.02: +0.271 to +0.283 (SE 0.008 to 0.012); linreg at T = 0.9, h = 1e-3: +0.282, +0.312 (SE 0.009).

Verdict: FAILED at T = 0.9 on icg and linreg (order one: the ladder's intercept is +0.235), with or without the
claim ``sgld``. At T = 1 it is SGLD (PASSED); on gmm and logreg, which have a truth at T = 1 only, a tempered run
is INCONCLUSIVE whatever the sampler.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401


def update(xp, x, grad_fn, noise, h, temperature):
    # the bug: the tempered log density is taken as T log p (drift h T g), not log p / T (noise 2 h T)
    return x + h * temperature * grad_fn(x) + xp.sqrt(2 * h) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_temperature_in_drift", "held-out bug: SGLD with the temperature in the drift (samples p^T)", globals())
