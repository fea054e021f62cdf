r"""SGHMC with control variates (SGHMC-CV).

MAMBA paper, appendix D.3: the SGHMC update of ``sgbench.samplers.sghmc`` (Chen et al. 2014,
eq. 15; MAMBA eq. 6) with the control-variate gradient of eq. (8),

.. math:: \hat g_{cv}(\theta) = \nabla\log p(\hat\theta) + \widehat{\nabla\log p}(\theta)
          - \widehat{\nabla\log p}(\hat\theta),

centred at ``centre`` :math:`\hat\theta` with the full-data gradient ``centre_grad`` there (the MAP
and its gradient from ``sgbench.samplers.control_variates.find_map`` unless given). Same forms,
integrators, noise condition and refresh as SGHMC (``sgbench.samplers._hamiltonian``). Two stochastic-
gradient evaluations per step, on one minibatch. With additive gradient noise the estimator is
exact, so on a Gaussian target the chain is noise-free SGHMC, a linear recursion with a
discrete-Lyapunov stationary covariance (``tests/test_hamiltonian_exact_laws.py``): its law is SGHMC's without
gradient noise (``control_variates.wrap`` derives it, ``control_variates.cancelled_noise_law``).
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers import control_variates, sghmc

# asv: on the icg and Rosenbrock it sees no gradient noise (the control variate cancels the injected
# noise), so its default (Chen) form does not heat the momentum as sghmc's does there.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(
        icg4={"step_size": 0.1, "form": "practical", "friction": 3.0},
        linreg={"step_size": 5e-3, "form": "practical", "friction": 3.0},
        posteriors={"mesquite": {"step_size": 0.00129, "form": "practical", "friction": 3.0},
                    "gauss_mix": {"step_size": 0.000107, "form": "practical", "friction": 3.0}},
        exact_law=({"step_size": 0.1, "form": "practical", "friction": 3.0},),
    ),
    equivalence=(
        dict(step_size=1e-2),
        dict(step_size=0.1, form="practical", friction=5.0, integrator="splitting", centre=[0.1] * 10),
    ),
    speed={"step_size": 1e-2},
    asv={"rosenbrock": {"step_size": 1e-3},
         "linreg": {"step_size": 1e-3, "friction": 10.0, "form": "practical"},
         "bnn": {"step_size": 3e-4, "friction": 100.0, "form": "practical"}},
)


@samplers.hyperparameters
class Params(control_variates.Centred, sghmc.Params):
    """``sghmc.Params`` (SGHMC's) and the control variate's ``centre`` and ``centre_grad``
    (``sgbench.samplers.control_variates.Centred``)."""


SAMPLER = samplers.register(control_variates.wrap(
    sghmc.SAMPLER, Params, "sghmc_cv", "MAMBA appendix D.3 (control variates, eq. 8) with the SGHMC of eq. (6)",
    benchmarks))
