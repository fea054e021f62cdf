r"""pSMILE-naive (section 3.2 of the SMILE paper).

SMILE-naive with the diagonal gradient-noise preconditioning (moving mean and standard deviation
of the stochastic gradient, alpha = 0.01, normalised by sqrt(d)/||sigma||), fixed step size.
Equations, defaults, the choices where the paper is silent and the cost (three gradient
evaluations per step) are in ``sgbench.samplers._stochastic_microcanonical``.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers._stochastic_microcanonical import (  # noqa: F401  (parts of SAMPLER)
    PreconditionedParams as Params,
    State,
    draw_spec,
    init,
    optimized_step,
    reference_step,
)

# With exact gradients its chains are heavy-tailed (excess kurtosis of a per-chain statistic 6.9 in the
# design runs) and slow (autocorrelation time about 1600 steps), so its cells warm up for 6500 steps.
# Equivalence: the noise-free microcanonical flow is chaotic at larger steps (smile_naive.py), and with the
# preconditioner, whose sigma then measures no noise.
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.2}, linreg={"step_size": 0.02},
                               posteriors={"mesquite": {"step_size": 0.0288}, "gauss_mix": {"step_size": 0.00828}},
                               heavy_tailed=("icg4_exact",),
                               num_burnin=6500),
    equivalence=(
        dict(step_size=0.1),
        dict(step_size=0.05, integrator="leapfrog"),
    ),
    speed={"step_size": 0.03},
    asv={"linreg": {"step_size": 0.01}, "bnn": {"step_size": 1e-3}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "psmile_naive", "SMILE paper (2025), sec. 3.2; appendix F.2", globals()))
