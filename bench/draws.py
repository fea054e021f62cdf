"""Random variates for one step, drawn from a ``draw_spec`` in NumPy or in JAX.

Both drivers draw, per chain and step, first the sampler's variates then the gradient's, each
a dict keyed like its spec, so the same draws can be handed to both implementations.
"""

from __future__ import annotations

import jax
import numpy as np

from samplers import Variate
from samplers._contract import LAWS


def _check_law(name: str, variate: Variate) -> None:
    if variate.law not in LAWS:
        raise ValueError(f"variate {name!r} has unknown law {variate.law!r}; known laws: {sorted(LAWS)}")


def numpy_draws(rng: np.random.Generator, spec: dict[str, Variate], leading=()) -> dict:
    """float64 draws of ``spec`` with extra ``leading`` axes, from a NumPy Generator."""
    out = {}
    for name, variate in spec.items():
        _check_law(name, variate)
        out[name] = rng.standard_normal(tuple(leading) + variate.shape)
    return out


def jax_draws(key, spec: dict[str, Variate], leading=(), dtype="float32") -> dict:
    """Draws of ``spec`` in ``dtype`` with extra ``leading`` axes, from a JAX key."""
    out = {}
    for index, (name, variate) in enumerate(spec.items()):
        _check_law(name, variate)
        out[name] = jax.random.normal(jax.random.fold_in(key, index), tuple(leading) + variate.shape, dtype)
    return out
