r"""PX-SGLD: SGLD (``sgbench.samplers.sgld``; PX paper Algorithm 1) on the expanded parametrisation of eq. (9)
of the PX-SGMCMC paper, one left and one right expanded matrix
per layer (c = d = 1):

.. math:: \mathbf W = \mathbf P_1 \mathbf V \mathbf Q_1, \qquad \mathbf b = \mathbf P_1 \mathbf a,

with :math:`\mathbf P_1` (out x out) and :math:`\mathbf Q_1` (in x in) starting at the identity and
:math:`\mathcal N(0, \sigma^2 I)` on every expanded parameter (default :math:`\sigma`: the target's
prior scale). SGLD's step :math:`\theta \leftarrow \theta + h\,\widehat{\nabla\log\tilde p}(\theta) +
\sqrt{2hT}\,\xi` runs on the expanded position :math:`\theta = (\mathbf V, \mathbf a, \mathbf P_1,
\mathbf Q_1)` (eq. 10); the drivers see :math:`(\mathbf W, \mathbf b)`. SGLD has no friction, so there
are no friction groups. One gradient evaluation per step. Everything else (the layout, the chain
rule, the targets, ``expansion``, ``prior_scale``, ``low_rank``) is in ``sgbench.samplers.px``.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers import sgld
from sgbench.samplers._benchmarks import DECAY
from sgbench.samplers.px import px

# On a vector target (the gate's, the equivalence test's, the speed workload's icg) it runs on one 1 x d
# layer. Speed and asv: smaller steps than SGLD's, since the expansion's preconditioning makes them diverge
# (1e-2, and 1e-3 within 10^5 steps); the BNN overhead figure is bench/perf/px_overhead.py.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.005}, linreg={"step_size": 2e-4},
                               posteriors={"mesquite": {"step_size": 5.17e-05}, "gauss_mix": {"step_size": 4.29e-06}}),
    equivalence=(
        dict(step_size=1e-3),
        dict(step_size=2e-4, temperature=0.5, schedule=DECAY, expansion=(2, 1), low_rank=2, prior_scale=0.5),
    ),
    speed={"step_size": 1e-4},
    asv={"rosenbrock": {"step_size": 3e-5}, "linreg": {"step_size": 3e-6}, "bnn": {"step_size": 1e-5}},
    wrapper="single_layer",
)

SAMPLER = samplers.register(px(sgld.SAMPLER, (1, 1), name="px_sgld", benchmarks=benchmarks, module=__name__))
Params = SAMPLER.Params
