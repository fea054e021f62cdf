r"""Held-out sampler ``sgld_diverging``: SGLD with the gradient's sign flipped.

Update (:math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`):

.. math:: x_{t+1} = x_t - h\,g(x_t) + \sqrt{2hT}\,\xi_t,

a descent on :math:`\log p` (an ascent on the potential :math:`-\log p`).

What is wrong: the drift points away from the mode. On a Gaussian target of precision eigenvalues
:math:`\lambda` each mode grows by :math:`1 + h\lambda` per step: after 4000 steps at h = 0.01 on icg4
(:math:`\lambda` up to 2) by about :math:`e^{79}`, on the linreg preset at h = 1e-3 (:math:`\lambda` up to
29.7) by about :math:`e^{117}`; with more steps or larger ones the squares overflow float64 and the chains
count as diverged. Measured (``bench.run``, 64 chains of 4000 steps from exact draws): icg4 at h = 0.01, no
chain non-finite, r from 5e63 to 5e66; linreg at h = 1e-3, none non-finite, r about 4e99; linreg at
h = 0.01 and both targets at h = 0.1, all 64 chains diverged.

Verdict: FAILED on every target, with divergence counts where the chains overflowed, or as disagreeing
with truth and with the suite's ``sgld`` where they have not yet; never a crash.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401


def update(xp, x, grad_fn, noise, h, temperature):
    return x - h * grad_fn(x) + xp.sqrt(2 * h * temperature) * noise  # the bug: - h g


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_diverging", "held-out bug: SGLD with the gradient's sign flipped", globals())
