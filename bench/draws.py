"""Random variates for a step, drawn from a ``draw_spec`` (or a nested dict of them) in NumPy or
in JAX.

Both drivers draw, per chain and step, the sampler's variates and the gradient's, each a dict
keyed like its spec, so the same draws can be handed to both implementations. The JAX version
draws every variate of a block from one flat generator call and splits it: on a CPU that is
several times cheaper than one call per variate (measured: 0.63 -> 0.26 us per SGLD chain-step).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from samplers import Variate
from samplers._contract import LAWS


def _variates(spec):
    leaves, tree = jax.tree.flatten(spec, is_leaf=lambda v: isinstance(v, Variate))
    for variate in leaves:
        if variate.law not in LAWS:
            raise ValueError(f"variate {variate} has unknown law {variate.law!r}; known laws: {sorted(LAWS)}")
    return leaves, tree


def numpy_draws(rng: np.random.Generator, spec, leading=()) -> dict:
    """float64 draws of ``spec`` with extra ``leading`` axes, from a NumPy Generator."""
    leaves, tree = _variates(spec)
    return jax.tree.unflatten(tree, [rng.standard_normal(tuple(leading) + v.shape) for v in leaves])


def jax_draws(key, spec, leading=(), dtype="float32") -> dict:
    """Draws of ``spec`` in ``dtype`` with extra ``leading`` axes, from a JAX key."""
    leaves, tree = _variates(spec)
    sizes = [math.prod(v.shape) for v in leaves]
    # One flat call: XLA's CPU generator is up to 3x slower per number for some 2-d shapes.
    flat = jax.random.normal(key, (math.prod(leading) * sum(sizes),), dtype).reshape(tuple(leading) + (-1,))
    offsets = np.cumsum([0, *sizes])
    parts = [flat[..., a:b].reshape(tuple(leading) + v.shape) for a, b, v in zip(offsets[:-1], offsets[1:], leaves)]
    return jax.tree.unflatten(tree, parts)
