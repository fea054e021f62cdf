r"""SGLD as other libraries run it, on the speed figure's job, for side-by-side timings (issue 10).

The job: an icg target with isotropic gradient noise of variance :math:`\sigma^2` (``target.noise.variance``),
chains started at the target's initial position, the standard convention
:math:`x \leftarrow x + h(\nabla\log p(x) + \sigma z) + \sqrt{2h}\,\xi`, temperature 1. Each builder
returns a call that runs the whole job and returns the final positions (the suite's driver also
streams moments and counts; these do not).

- ``blackjax_program``: blackjax's documented pattern, ``blackjax.sgld(grad_estimator)`` with its
  ``step`` in ``lax.scan`` over steps and its own key splitting (one key per step, split into the
  kernel's and the gradient noise's), ``vmap`` over chains, one ``jit``, compiled here. The
  "minibatch" handed to ``grad_estimator`` is the step's noise key. In 64-bit mode blackjax's noise
  promotes a float32 position to float64; each step rounds it back (``lax.scan`` needs a fixed type).
- ``posteriors_program``: posteriors' documented pattern, ``posteriors.sgmcmc.sgld.build(log_posterior,
  lr, temperature)``, ``init`` and ``update`` in a Python loop, the chains as one (chains, dim) tensor
  (its update is elementwise and the log posterior sums over chains, so the chains stay independent).
  Per-datapoint convention with N = 1 (``bench/adapters/posteriors.py``): lr = h, temperature 1. The
  step's "batch" is the noise :math:`z`; the log posterior is the icg's plus :math:`\sigma\langle z, x\rangle`.
- ``numpy_program``: a vectorised NumPy loop, all chains as one array, float32 draws per step.
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np


def blackjax_program(target, num_chains: int, num_steps: int, step_size: float, seed: int = 0, dtype="float32"):
    """A compiled blackjax SGLD run of ``num_chains`` x ``num_steps``; calling it returns the final positions."""
    import blackjax

    dtype = jnp.dtype(dtype)
    noise_scale = math.sqrt(target.noise.variance)

    def grad_estimator(position, noise_key):
        return target.grad_logdensity(position) + noise_scale * jax.random.normal(noise_key, position.shape, dtype)

    sgld = blackjax.sgld(grad_estimator)

    def chain(key, position):
        def one_step(position, key):
            step_key, noise_key = jax.random.split(key)
            return sgld.step(step_key, position, noise_key, step_size).astype(dtype), None

        return jax.lax.scan(one_step, sgld.init(position), jax.random.split(key, num_steps))[0]

    keys = jax.random.split(jax.random.key(seed), num_chains)
    positions = jnp.asarray(target.check_positions(target.initial_position(), num_chains), dtype=dtype)
    program = jax.jit(jax.vmap(chain)).lower(keys, positions).compile()
    return lambda: jax.block_until_ready(program(keys, positions))


def posteriors_program(target, num_chains: int, num_steps: int, step_size: float, seed: int = 0):
    """A posteriors (torch, float32) SGLD run of ``num_chains`` x ``num_steps``; returns the final (chains, dim)."""
    import torch

    with warnings.catch_warnings():  # tensordict warns once per posteriors state class (a TensorClass default)
        warnings.simplefilter("ignore", FutureWarning)
        from posteriors.sgmcmc import sgld

    precision = torch.as_tensor(target.precision, dtype=torch.float32)
    mean = torch.as_tensor(target.mean, dtype=torch.float32)
    noise_scale = math.sqrt(target.noise.variance)

    def log_posterior(params, noise):
        centred = params - mean
        return -0.5 * torch.sum((centred @ precision) * centred) + noise_scale * torch.sum(noise * params), ()

    transform = sgld.build(log_posterior, lr=step_size, temperature=1.0)
    start = torch.as_tensor(target.check_positions(target.initial_position(), num_chains), dtype=torch.float32)

    def run():
        with torch.random.fork_rng(devices=[]):  # posteriors draws from the global generator: seeded, then restored
            torch.manual_seed(seed)
            noise = torch.Generator().manual_seed(seed + 1)
            state = transform.init(start.clone())
            for _ in range(num_steps):
                state, _ = transform.update(state, torch.randn(start.shape, generator=noise, dtype=torch.float32))
        return state.params

    return run


def numpy_program(target, num_chains: int, num_steps: int, step_size: float, seed: int = 0):
    """A vectorised NumPy (float32) SGLD run of ``num_chains`` x ``num_steps``; returns the final positions."""
    precision = np.asarray(target.precision, np.float32)
    mean = np.asarray(target.mean, np.float32)
    noise_scale = np.float32(math.sqrt(target.noise.variance))
    h, spread = np.float32(step_size), np.float32(math.sqrt(2 * step_size))
    start = np.asarray(target.check_positions(target.initial_position(), num_chains), np.float32)

    def run():
        rng = np.random.default_rng(seed)
        x = start.copy()
        for _ in range(num_steps):
            z = rng.standard_normal((2,) + x.shape, dtype=np.float32)
            x += h * ((mean - x) @ precision + noise_scale * z[0]) + spread * z[1]
        return x

    return run
