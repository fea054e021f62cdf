"""Targets: distributions with known truth, created by name with keyword parameters.

``get(name, **params)`` returns a :class:`targets._contract.Target`; ``names()`` lists them.
A target module registers its class with ``@targets.register(name)``.
"""

from __future__ import annotations

import inspect

from samplers._registry import Registry
from targets._contract import Target
from targets._truth import Truth

_REGISTRY: Registry[type] = Registry("target", __name__)


def register(name: str):
    """Class decorator: register a Target subclass under ``name``."""

    def decorate(cls):
        return _REGISTRY.register(name, cls)

    return decorate


def get(name: str, **params) -> Target:
    """The target ``name`` built with ``params`` (unknown names and parameters are ValueErrors)."""
    cls = _REGISTRY.get(name)
    signature = inspect.signature(cls.__init__)
    takes_noise_params = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    accepted = [name for name, p in signature.parameters.items() if name != "self" and p.kind is not p.VAR_KEYWORD]
    for key in params:
        if key not in accepted and not (takes_noise_params and key.startswith("noise_")):
            raise ValueError(
                f"target {name!r} has no parameter {key!r}; it accepts: {', '.join(accepted)}"
                + (", noise_<parameter of the noise model>" if takes_noise_params else "")
            )
    return cls(**params)


def names() -> list[str]:
    """Names of all registered targets, sorted."""
    return _REGISTRY.names()


__all__ = ["Target", "Truth", "get", "names", "register"]
