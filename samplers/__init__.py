"""Samplers: each one file holding its reference (NumPy) and optimized (JAX) implementation.

``get(name)`` returns a :class:`samplers._contract.Sampler`; ``names()`` lists them.
"""

import jax

# float64 references need JAX's 64-bit mode; every array the suite makes has an explicit dtype,
# so float32 chains stay float32.
jax.config.update("jax_enable_x64", True)

from samplers._contract import Info, Sampler, Variate, hyperparameters, static_field  # noqa: E402
from samplers._registry import Registry, UnknownNameError  # noqa: E402

_REGISTRY: Registry[Sampler] = Registry("sampler", __name__)


def register(sampler: Sampler) -> Sampler:
    """Add ``sampler`` to the registry under ``sampler.name``."""
    return _REGISTRY.register(sampler.name, sampler)


def get(name: str) -> Sampler:
    """The sampler registered as ``name`` (UnknownNameError lists the known names)."""
    return _REGISTRY.get(name)


def names() -> list[str]:
    """Names of all registered samplers, sorted."""
    return _REGISTRY.names()


__all__ = [
    "Info", "Sampler", "UnknownNameError", "Variate", "get", "hyperparameters", "names",
    "register", "static_field",
]
