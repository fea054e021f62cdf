"""A library's own random-number generator, seeded from the step's draws.

Blackjax kernels take a PRNG key and posteriors calls torch's global generator, so an adapter
cannot hand them the suite's normal draws: it draws one ``seed`` variate per step (two integers of
the ``index`` law, 31 bits each: 62 bits, so that seeds repeat with probability about
n^2 / 2^63 over n chain-steps, not n^2 / 2^32) and the library's generator makes the variates from
it. Runs are reproducible from the driver's seed, but the suite's shared-draws checks (reference
against optimized step on the same normals) cannot be applied to an adapter.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np

from sgbench.samplers import Variate

SEED_HIGH = 2**31 - 1  # the largest int32, so the JAX driver's int32 index draws hold it


def seed_variate() -> Variate:
    """The per-step draw that seeds a library's generator: two uniform integers in [0, 2^31 - 1)."""
    return Variate("index", (2,), SEED_HIGH)


def jax_key(seed):
    """A threefry key whose two 32-bit words are the two integers of ``seed`` (jit- and vmap-able)."""
    return jax.random.wrap_key_data(jnp.asarray(seed).astype(jnp.uint32), impl="threefry2x32")


def torch_seed(seed) -> int:
    """A 62-bit integer from the two integers of ``seed``, for ``torch.Generator.manual_seed``."""
    return int(seed[0]) * SEED_HIGH + int(seed[1])


@contextlib.contextmanager
def torch_seeded(seed):
    """Torch's global generator seeded from a step's ``seed`` draw (the first chain's, for a batch of chains) inside
    the block, and restored on exit: a torch update drawing from the global generator is reproducible, and the
    caller's generator is left as it was."""
    import torch

    generator = torch.default_generator
    saved = generator.get_state()
    generator.manual_seed(torch_seed(np.reshape(seed, (-1, 2))[0]))
    try:
        yield
    finally:
        generator.set_state(saved)
