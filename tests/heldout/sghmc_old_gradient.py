r"""Held-out sampler ``sghmc_old_gradient``: Chen et al. (2014) SGHMC (the suite's ``sghmc`` names and forms,
as ``sghmc_independent``) that reads the gradient at the old position: explicit Euler where the suite's default is
semi-implicit. An O(h) difference, a valid but worse discretisation.

Update (Chen form; :math:`g` the oracle's stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0,
I)`, momentum from 0):

.. math:: \theta_{t+1} = \theta_t + v_t, \qquad
          v_{t+1} = v_t + h\,g(\theta_t) - \alpha v_t + \sqrt{h(2\alpha T - h\hat\beta)}\,\xi_t

(the practical form likewise, with :math:`\epsilon r` and :math:`\epsilon C`). What is right: explicit Euler is a
consistent scheme of the SDE (the suite's ``integrator="explicit_euler"``, what blackjax, posteriors and SGMCMCJax
implement): its bias vanishes with the step. What is wrong, for a sampler claiming the suite's ``sghmc`` with its
default integrator: the O(h) coefficient, larger and growing with the curvature (explicit Euler is unstable where
:math:`h\lambda` exceeds :math:`\alpha`).

Exact (``python -m tests.heldout._decisive_laws``): icg, friction 0.2, at h = 0.04: r = +0.352, +0.454, +0.622,
+0.829 against the suite's semi-implicit +0.207 to +0.221 (relative +0.12, +0.20, +0.33, +0.50); at h/2, h/4,
h/8: +0.165 to +0.323, +0.080 to +0.146, +0.040 to +0.070 (relative at h/8 +0.013 to +0.041): O(h).

Measured (``tests.heldout._decisive_measure``, icg, 256 chains, 8000 steps after 8000, from mu + 2(x - mu)): h =
0.04, friction 0.2: +0.348, +0.462, +0.622, +0.823 (SE 0.005); the suite's ``sghmc``: +0.203 to +0.219 (SE 0.003 to
0.005).

Verdict: claiming ``sghmc`` (default ``integrator="euler"``) FAILED at h = 0.04, friction 0.2 on icg (+0.2 to +0.5
relative on three coordinates). Without a claim PASSED (or INCONCLUSIVE): its error halves with the step. (Claiming
``sghmc`` with ``--reference-param integrator=explicit_euler`` it would be the reference's chain.)
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout._langevin import both_backends
from tests.heldout.sghmc_independent import Params, State, draw_spec, init, noise_variance  # noqa: F401


def step(xp, state, grad_fn, draws, params):
    h, friction = params.step_size, params.friction
    noise = xp.sqrt(noise_variance(params)) * draws["noise"]
    gradient = grad_fn(state.position)  # the O(h) slip: the gradient at the old position
    if params.form == "chen":
        theta = state.position + state.momentum
        momentum = state.momentum + h * gradient - friction * state.momentum + noise
    else:
        theta = state.position + h * state.momentum
        momentum = state.momentum + h * gradient - h * friction * state.momentum + noise
    return State(theta, momentum, state.step + 1), samplers.Info(num_grad_evals=1)


reference_step, optimized_step = both_backends(step)

SAMPLER = samplers.Sampler.from_namespace(
    "sghmc_old_gradient", "held-out O(h) slip: Chen et al. (2014) SGHMC with the gradient at the old position",
    globals())
