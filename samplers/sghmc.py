r"""Stochastic gradient Hamiltonian Monte Carlo (SGHMC).

Chen et al. (2014), eq. (15) and Algorithm 2, in the parametrisation of the MAMBA paper,
appendix D.1, eq. (6), written for the log density (:math:`g = \widehat{\nabla\log p}`):

.. math:: \Delta\theta = v, \qquad \Delta v = h\,g(\theta) - \alpha v
          + \mathcal N\big(0, h(2\alpha T - h\hat\beta)\big),

with step size :math:`h` from the schedule, friction :math:`\alpha` (MAMBA: 0.01), gradient-noise
estimate :math:`\hat\beta` (MAMBA: 0), temperature :math:`T`. Integrator: semi-implicit Euler
(drift with the old momentum, then friction and a kick with the gradient at the new position) by
default, the BAOAB splitting (``integrator="splitting"``), or explicit Euler (``integrator="explicit_euler"``, what
blackjax, posteriors and SGMCMCJax implement). ``form="practical"`` is Algorithm 3
of the PX paper (appendix C): step :math:`\epsilon`, friction rate :math:`\gamma`
(PX table 11: 100), :math:`r \leftarrow (1 - \gamma\epsilon) r + \epsilon\nabla\tilde U +
\sqrt{2\gamma\epsilon T}\,z`, :math:`\theta \leftarrow \theta - \epsilon r`. Both forms, the three
integrators, the noise condition and the momentum refresh are in ``sgbench.samplers._hamiltonian``.
One gradient evaluation per step. On a Gaussian target it is a linear recursion in
(position, momentum) (``sgbench.samplers._hamiltonian.linear_law``) whose stationary covariance solves a discrete
Lyapunov equation (``tests/test_hamiltonian_exact_laws.py``).
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers._benchmarks import CYCLES, DECAY
from sgbench.samplers._hamiltonian import (  # noqa: F401  (parts of SAMPLER)
    HamiltonianParams as Params,
    State,
    draw_spec,
    init,
    linear_law,
    optimized_step,
    reference_step,
)

# The gate's friction is the practical form's 3 (not 1); Chen's form has its own cell, with a noise estimate
# and a momentum refresh. asv: the practical form with friction 10 (in the Chen form at MAMBA's friction
# 0.01 the gradient noise of variance 256 heats the momentum about 100-fold, b^2 ~ 10^4).
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.1, "form": "practical", "friction": 3.0},
        linreg={"step_size": 5e-3, "form": "practical", "friction": 3.0},
        posteriors={"mesquite": {"step_size": 0.00129, "form": "practical", "friction": 3.0},
                    "gauss_mix": {"step_size": 0.000107, "form": "practical", "friction": 3.0}},
        variants=(samplers.GateVariant("chen_refresh", {"step_size": 0.01, "form": "chen", "friction": 0.2,
                                                        "noise_estimate": 2.0, "refresh_every": 3}),),
        exact_law=(
            {"step_size": 0.1, "form": "practical", "friction": 3.0},
            # noise estimate 8 (h beta = 0.08 against 2 alpha T = 0.2): ignoring it moves r by 0.06,
            # and a refresh every 4 steps instead of 3 by 0.09, against the 0.04 these cells detect
            {"step_size": 0.01, "form": "chen", "friction": 0.2, "noise_estimate": 8.0, "refresh_every": 3},
            {"step_size": 0.2, "form": "practical", "friction": 3.0, "integrator": "splitting"},
        ),
    ),
    equivalence=(
        dict(step_size=1e-2),
        dict(step_size=1e-2, friction=0.1, noise_estimate=10.0, temperature=0.5, schedule=DECAY),
        dict(step_size=1e-2, friction=[0.05, 0.1] * 5, integrator="splitting", refresh_every=7),
        dict(step_size=0.1, form="practical", friction=2.0, schedule=CYCLES),
        dict(step_size=0.1, form="practical", friction=5.0, integrator="splitting", noise_estimate=1.0,
             refresh_every=10),
        # explicit Euler is stable only where the per-step friction exceeds h lambda_max (1 on the 10-d icg)
        dict(step_size=1e-2, friction=1.5, integrator="explicit_euler", temperature=0.5, refresh_every=5),
        dict(step_size=0.03, form="practical", friction=30.0, integrator="explicit_euler", noise_estimate=1.0),
    ),
    speed={"step_size": 1e-2},
    asv={"icg": {"step_size": 1e-2, "friction": 10.0, "form": "practical"},
         "rosenbrock": {"step_size": 1e-2, "friction": 10.0, "form": "practical"},
         "linreg": {"step_size": 1e-3, "friction": 100.0, "form": "practical"},
         "bnn": {"step_size": 3e-4, "friction": 100.0, "form": "practical"}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "sghmc", "Chen et al. (2014), eq. (15); MAMBA appendix D.1, eq. (6); Algorithm 3 of the PX paper", globals()))
