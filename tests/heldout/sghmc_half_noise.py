r"""Held-out sampler ``sghmc_half_noise``: ``sghmc_independent`` with half the injected noise variance.

Update, with the hyperparameters and forms of :mod:`tests.heldout.sghmc_independent` (Chen et al. 2014,
eq. (15); :math:`g` the stochastic gradient of :math:`\log p`, :math:`\xi_t \sim \mathcal N(0, I)`), in the
Chen form

.. math:: \theta_{t+1} = \theta_t + v_t, \qquad
          v_{t+1} = v_t + h\,g(\theta_{t+1}) - \alpha v_t + \sqrt{\tfrac12 h(2\alpha T - h\hat\beta)}\,\xi_t,

and likewise in the practical form (noise variance :math:`\tfrac12\epsilon(2CT - \epsilon\hat\beta)`).

What is wrong: the fluctuation-dissipation balance needs the injected variance :math:`2\alpha h T` (at
:math:`\hat\beta = 0`); with half of it the chain samples the target at temperature about :math:`T/2`: the
relative second-moment error r is about -0.5 (slightly less negative where the unmodelled gradient noise
heats it: by :math:`h\beta/(2\alpha)`, 0.1 at the Chen-form case's settings).

Measured (``bench.run``, 64 chains of 4000 steps from exact draws; r per coordinate, the suite's ``sghmc``
at the same settings in brackets): Chen form, friction 0.1, step 0.01, icg4: -0.39 to -0.41 (0.085 to
0.11); step 1e-3: icg4 -0.48 to -0.50 (-0.03 to 0.02), linreg -0.15 and 0.04 (0.38 and 0.57); practical
form, friction 10, step 0.05: icg4 -0.48 to -0.50 (-0.03 to 0.03), linreg -0.31 and -0.21 (0.20 and 0.30).
Standard errors 0.006 to 0.07.

Verdict: FAILED, claiming the suite's ``sghmc`` with the same hyperparameters (or against exact truth): its
error is of order one and does not shrink with the step.
"""

from __future__ import annotations

from sgbench import samplers
from tests.heldout.sghmc_independent import FORMS, Params, State, draw_spec, init, noise_variance, steps  # noqa: F401

NOISE_FACTOR = 0.5  # the bug: half the injected variance

reference_step, optimized_step = steps(NOISE_FACTOR, __name__)

SAMPLER = samplers.Sampler.from_namespace(
    "sghmc_half_noise", "held-out bug: Chen et al. (2014) SGHMC with half the injected noise variance", globals())
