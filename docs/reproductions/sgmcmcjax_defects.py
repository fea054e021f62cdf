# ruff: noqa: E402, E731  (the stub must precede the imports; lambdas keep the reproduction short)
"""SGMCMCJax 0.2.13 defects reproduced on the library's own API (kernels.py imported with host_callback stubbed,
which only its tqdm progress bar uses and current JAX no longer has).

    python docs/reproductions/sgmcmcjax_defects.py   # about 15 s on two cores
"""

import sys
import types

import jax

jax.config.update("jax_enable_x64", True)
import jax.experimental

stub = types.ModuleType("jax.experimental.host_callback")
sys.modules["jax.experimental.host_callback"] = stub
jax.experimental.host_callback = stub
import jax.numpy as jnp
import numpy as np
from sgmcmcjax import diffusions, kernels
from sgmcmcjax.gradient_estimation import build_gradient_estimation_fn, build_gradient_estimation_fn_SVRG
from sgmcmcjax.util import build_grad_log_post

D = 4
data = (jnp.zeros((100, D)),)
loglik = lambda theta, x: 0.0 * jnp.sum(theta)          # no likelihood: the posterior is the prior
logprior = lambda theta: -0.5 * jnp.sum(theta ** 2)      # N(0, I)

def run(init_fn, kernel, get_params, n=20000, chains=200, burn=2000):
    def chain(key):
        k0, key = jax.random.split(key)
        state = init_fn(k0, jnp.zeros(D))
        def body(carry, i):
            key, state = carry
            key, sub = jax.random.split(key)
            state = kernel(i, sub, state)
            return (key, state), get_params(state)
        _, xs = jax.lax.scan(body, (key, state), jnp.arange(n))
        return xs[burn:]
    xs = jax.jit(jax.vmap(chain))(jax.random.split(jax.random.key(0), chains))
    return float(jnp.mean(xs ** 2))

init_fn, kernel, get_params = kernels.build_baoab_kernel(0.05, loglik, logprior, data, 100, gamma=2.0)
state = init_fn(jax.random.key(0), jnp.array([1.0, -1.0, 0.5, 2.0]))
for i in range(100):
    state = kernel(i, jax.random.key(i + 1), state)
print("build_baoab_kernel, 100 steps from [1, -1, 0.5, 2]: position", np.asarray(get_params(state)),
      "(it never moves: kernels.py 383 binds the second update twice)")

glp = build_grad_log_post(loglik, logprior, data)
est, init_g = build_gradient_estimation_fn(glp, data, 100)  # full batch: exact gradients
print("BAOAB diffusion, tau = 0.5, in the library's Langevin kernel: E[x^2] =",
      round(run(*kernels._build_langevin_kernel(*diffusions.baoab(0.05, 2.0, 0.5), est, init_g)), 3),
      "(target at T = 0.5: 0.5; at T = tau^2: 0.25)")
from scipy.special import gamma as G

chi_mean = np.sqrt(2) * G((D + 1) / 2) / G(D / 2)
print(f"BADODAB diffusion in the library's Langevin kernel (D = {D}): E[x^2] =",
      round(run(*kernels._build_langevin_kernel(*diffusions.badodab(0.05, 0.01), est, init_g)), 3),
      f"(target 1; a thermostat on |v| gives (D / E chi_D)^2 = {(D / chi_mean) ** 2:.3f})")
s = diffusions.cyclical_schedule(1.0, M=2, K=10)
print("cyclical_schedule(1, M=2, K=10) at the samplers' i = 0..9:", [round(float(s(i)), 3) for i in range(10)])

calls = []
def counted_glp(param, *batch):
    jax.debug.callback(lambda n: calls.append(int(n)), batch[0].shape[0])
    return glp(param, *batch)
est_svrg, init_svrg = build_gradient_estimation_fn_SVRG(counted_glp, data, 10, update_rate=2)
init_fn, kernel, get = kernels._build_sghmc_kernel(*diffusions.sghmc(0.01, 0.5), est_svrg, init_svrg, L=5)
state = init_fn(jax.random.key(1), jnp.ones(D))
for i in range(4):
    state = kernel(i, jax.random.key(i + 2), state)
jax.effects_barrier()
print("SGHMC-SVRG, L = 5, update_rate = 2, 4 iterations: full-data gradients", calls.count(100),
      "(1 at init + 5 at i = 0 + 5 at i = 2), minibatch gradients", calls.count(10))
