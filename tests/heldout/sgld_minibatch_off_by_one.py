r"""Held-out sampler ``sgld_minibatch_off_by_one``: SGLD that makes its own minibatch estimate with the scale
N/(B + 1) instead of N/B (an order-one bug visible only where the gradient comes from minibatches).

Update (:math:`\xi_t \sim \mathcal N(0, I)`; the oracle's minibatch gradient is
:math:`\nabla\log p_0(x) + \frac NB\sum_{b\le B}\nabla\log p(y_{I_b}\mid x)`, eq. (6) of the SGLRW paper):

.. math:: \tilde g(x) = \nabla\log p_0(x) + \frac{N}{B+1}\sum_{b\le B}\nabla\log p(y_{I_b}\mid x), \qquad
          x_{t+1} = x_t + h\,\tilde g(x_t) + \sqrt{2hT}\,\xi_t.

It takes the oracle's gradient and the oracle's minibatch (``grad_fn.draw["indices"]``, B of them) and prior
(``grad_fn.target.grad_log_prior``) and rescales the likelihood part by B/(B + 1). Where the oracle draws no
minibatch (icg, gmm: additive gradient noise) it uses the oracle's gradient unchanged: there it is SGLD, draw for
draw. An oracle without ``draw`` and ``target`` (not the suite's ``GradientOracle``) raises, rather than pass
for SGLD.

What is wrong: the likelihood is tempered by B/(B + 1) = 8/9 on the linreg preset (B = 8; 32/33 on logreg, whose
effect, about +0.03, is below the resolution): as :math:`h \to 0` it samples :math:`p_0\,L^{8/9}`, whose
covariance is about 9/8 of the posterior's.

Exact (``python -m tests.heldout._decisive_laws``, the minibatch law of ``sgbench.reference.minibatch_laws`` with the
likelihood terms scaled by 8/9): linreg at h = 1e-3: r = +0.169, +0.186 (SGLD's +0.047, +0.066: relative +0.116,
+0.112), mean error under 0.001 standard deviations; at h/8 = 1.25e-4: +0.130, +0.132 (relative +0.124, +0.123).

Measured (``tests.heldout._decisive_measure``, 256 chains, 8000 steps after 8000, from mu + 2(x - mu)): linreg at
h = 1e-3: +0.167, +0.194 (SE 0.008); icg at h = 0.02: +0.035 to +0.043, the same numbers as ``sgld_correct``'s to
every digit (the same chain).

Verdict: FAILED on linreg, with or without the claim ``sgld`` (an intercept of +0.13; +0.11 relative to SGLD at
h = 1e-3, about 12 standard errors at 256 chains against 4 x 256 of the reference). PASSED on icg and gmm, where
it is SGLD.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import Params, State, draw_spec, init, langevin_steps  # noqa: F401


def gradient(grad_fn, x):
    """The step's gradient: the oracle's, with its minibatch sum rescaled from N/B to N/(B + 1) (the bug) where
    the oracle draws minibatches (its draw has ``indices``); the oracle's own elsewhere."""
    g = grad_fn(x)
    draw = grad_fn.draw  # an oracle without a draw or a target is not the suite's GradientOracle: fail loudly
    target = grad_fn.target
    if isinstance(draw, dict) and "indices" in draw:
        batch = draw["indices"].shape[-1]
        prior = target.grad_log_prior(x)
        g = prior + (g - prior) * (batch / (batch + 1))
    return g


def update(xp, x, grad_fn, noise, h, temperature):
    return x + h * gradient(grad_fn, x) + xp.sqrt(2 * h * temperature) * noise


reference_step, optimized_step = langevin_steps(update)

SAMPLER = samplers.Sampler.from_namespace(
    "sgld_minibatch_off_by_one", "held-out bug: SGLD whose minibatch sum is scaled by N/(B + 1)", globals())
