r"""SMILE (section 4.2, Algorithm 1, eqs. 4-7 of the SMILE paper).

SMILE-naive with the energy-variance tuning of Algorithm 1: a Gamma model of |dE|, the
guardrail of eq. 6 (kappa = 0.98) and the adaptive step size of eq. 7 (delta = 0.02, a = 0.1).
Equations, defaults, the choices where the paper is silent and the cost (three gradient
evaluations per step) are in ``sgbench.samplers._stochastic_microcanonical``.
"""

from __future__ import annotations

from sgbench import samplers
from sgbench.samplers._stochastic_microcanonical import (  # noqa: F401  (parts of SAMPLER)
    State,
    TunedParams as Params,
    draw_spec,
    init,
    optimized_step,
    reference_step,
)

# Its step adapts through the whole run (eq. 7), so its gate cells are not stationary. With exact gradients
# and on linreg its chains are heavy-tailed (excess kurtosis of a per-chain statistic
# 145 and 110 in the design runs). Equivalence: the noise-free flow is chaotic at larger steps (smile_naive.py).
benchmarks = samplers.BenchmarkSettings(
    gate=samplers.GateSettings(icg4={"step_size": 0.2}, linreg={"step_size": 0.02},
                               posteriors={"mesquite": {"step_size": 0.0288}, "gauss_mix": {"step_size": 0.00828}},
                               heavy_tailed=("icg4_exact", "linreg"), stationary=False),
    equivalence=(
        dict(step_size=0.05),
        dict(step_size=0.1, kappa=0.95, adaptation_rate=0.03, integrator="leapfrog"),
    ),
    speed={"step_size": 0.1},
    asv={"linreg": {"step_size": 0.03}, "bnn": {"step_size": 1e-2}},
)

SAMPLER = samplers.register(samplers.Sampler.from_namespace(
    "smile", "SMILE paper (2025), sec. 4.2, Algorithm 1, eqs. 4-7; appendices F.2-F.3", globals()))
