"""posteriors 0.1.3 BAOA computes its friction in float32: at a small per-step friction the injected noise is
wrong (gamma lr = 1e-7) or absent (1e-8), even with float64 parameters. posteriors' public API only."""

import math

import torch
from posteriors.sgmcmc import baoa

torch.manual_seed(0)
lr, sigma, temperature, draws = 0.1, 1.0, 1.0, 20000


def log_posterior(params, batch):
    return -0.5 * (params**2).sum(), torch.empty(0)  # N(0, I), float64


for per_step_friction in (1e-2, 1e-7, 1e-8):
    alpha = per_step_friction / lr  # gamma lr = alpha lr / sigma^2
    state = baoa.init(torch.zeros(draws, dtype=torch.float64), momenta=0.0)  # 20000 independent coordinates
    new, _ = baoa.update(state, None, log_posterior, lr=lr, alpha=alpha, sigma=sigma, temperature=temperature)
    # one step from x = 0, m = 0: x' = (lr/2) (m' / sigma^2), m' = sigma zeta n with zeta^2 = T (1 - exp(-2 gamma lr))
    exact = (lr / 2) ** 2 / sigma**2 * temperature * -math.expm1(-2 * per_step_friction)
    print(f"gamma lr = {per_step_friction:g}: position variance {new.params.var().item():.4g}, exact {exact:.4g}, "
          f"ratio {new.params.var().item() / exact:.3f}")
