r"""SGNHT with control variates (SGNHT-CV).

MAMBA paper, appendix D.3 ("SGHMC-CV and SGNHT-CV are defined similarly" to SGLD-CV):
the SGNHT update of ``sgbench.samplers.sgnht`` (Ding et al. 2014, Algorithm 1; MAMBA eq. 7; PX
Algorithm 4 with ``form="practical"``) with the control-variate gradient of eq. (8),

.. math:: \hat g_{cv}(x) = \nabla\log p(\hat x) + \widehat{\nabla\log p}(x)
          - \widehat{\nabla\log p}(\hat x),

centred at ``centre`` :math:`\hat x` with the full-data gradient ``centre_grad`` there (the MAP
and its gradient from ``sgbench.samplers.control_variates.find_map`` unless given). Same forms, update
order, thermostat, defaults and validation as SGNHT. Two stochastic-gradient evaluations per
step (at :math:`x` and at :math:`\hat x`, on one minibatch or noise draw); the full-data gradient
at the centre is computed once and not counted. With additive gradient noise the estimator is
the exact gradient, so on a Gaussian target the chain is noise-free SGNHT, draw for draw
(``tests/test_sgnht.py``).
"""

from __future__ import annotations

import dataclasses

from sgbench import samplers
from sgbench.samplers import control_variates, sgnht
from sgbench.samplers._benchmarks import DECAY

benchmarks = samplers.BenchmarkSettings(
    # the control variate removes the gradient noise that makes SGNHT diverge at twice its step
    gate=dataclasses.replace(sgnht.benchmarks.gate, large_step_scale=2.0),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=1e-2, form="practical", diffusion=1.0, temperature=0.5, schedule=DECAY, centre=[0.1] * 10),
    ),
    speed=sgnht.benchmarks.speed,
    asv=sgnht.benchmarks.asv,
)


@samplers.hyperparameters
class Params(control_variates.Centred, sgnht.Params):
    """``sgnht.Params`` (SGNHT's) and the control variate's ``centre`` and ``centre_grad``
    (``sgbench.samplers.control_variates.Centred``)."""


SAMPLER = samplers.register(control_variates.wrap(
    sgnht.SAMPLER, Params, "sgnht_cv", "MAMBA appendix D.3 (control variates, eq. 8) with the SGNHT of eq. (7)",
    benchmarks))
