r"""PX-SGHMC: SGHMC in the practical form of the PX paper's Algorithm 3 (``sgbench.samplers.sghmc``,
``form="practical"``) on the expanded parametrisation of eq. (9) of the PX-SGMCMC paper,
one left and one right expanded matrix per layer (c = d = 1):

.. math:: \mathbf W = \mathbf P_1 \mathbf V \mathbf Q_1, \qquad \mathbf b = \mathbf P_1 \mathbf a,

with :math:`\mathbf P_1` (out x out) and :math:`\mathbf Q_1` (in x in) starting at the identity and
:math:`\mathcal N(0, \sigma^2 I)` on every expanded parameter (default :math:`\sigma`: the target's
prior scale). Position :math:`\theta = (\mathbf V, \mathbf a, \mathbf P_1, \mathbf Q_1)` (eq. 10) and
momentum :math:`r = (\mathbf S, \mathbf c, \mathbf R_1, \mathbf T_1)` (eq. 11):

.. math:: r \leftarrow (1 - \gamma\epsilon) r - \epsilon\,\widehat{\nabla\log\tilde p}(\theta)
          + \sqrt{2\gamma\epsilon T}\,z, \qquad \theta \leftarrow \theta - \epsilon r,

with a per-coordinate friction :math:`\gamma` in two groups (section 5, table 11): ``friction``
(default 100) on the :math:`\mathbf V, \mathbf a` coordinates and ``expanded_friction`` (default
``friction / 100``, table 11's 1) on the :math:`\mathbf P, \mathbf Q` ones. Every other option of
``sgbench.samplers.sghmc`` (the Chen form, the splitting integrator, a noise estimate, momentum refresh,
schedules) carries over. One gradient evaluation per step. The layout, the chain rule, the
targets, ``expansion``, ``prior_scale`` and ``low_rank`` are in ``sgbench.samplers.px``.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers import sghmc
from sgbench.samplers._benchmarks import CYCLES
from sgbench.samplers.px import px

# On a vector target it runs on one 1 x d layer (as px_sgld). The gate's expanded friction is 5 (not 1); on
# linreg its chains are heavy-tailed (excess kurtosis of a per-chain statistic 18 in the design runs) and slow:
# their autocorrelation time is about 2600 steps, so its cells warm up for 11000 (sgbench.bench.gate.start).
# Equivalence: larger steps are chaotic on the expanded icg (rounding grows past 1e-10 in 1000 steps).
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.005, "friction": 50.0, "expanded_friction": 5.0},
        linreg={"step_size": 2e-4, "friction": 50.0, "expanded_friction": 5.0},
        posteriors={"mesquite": {"step_size": 5.17e-05, "friction": 50.0, "expanded_friction": 5.0},
                    "gauss_mix": {"step_size": 4.29e-06, "friction": 50.0, "expanded_friction": 5.0}},
        heavy_tailed=("linreg",),
        num_burnin=11000,
        posteriors_burnin=16000,  # its design runs there: autocorrelation times of 3200 to 3700 steps
    ),
    equivalence=(
        dict(step_size=5e-3),
        dict(step_size=2e-2, friction=20.0, expanded_friction=0.5, integrator="splitting", refresh_every=7,
             schedule=CYCLES, expansion=(1, 2)),
        dict(step_size=3e-5, form="chen", friction=0.1, noise_estimate=1.0),
    ),
    speed={"step_size": 1e-3},
    asv={"linreg": {"step_size": 3e-5}, "bnn": {"step_size": 1e-4}},
    wrapper="single_layer",
)

SAMPLER = samplers.register(px(sghmc.SAMPLER, (1, 1), name="px_sghmc", benchmarks=benchmarks, module=__name__,
                               form="practical", friction=100.0))
Params = SAMPLER.Params
