"""Targets: distributions with known truth, created by name with keyword parameters.

``get(name, **params)`` returns a :class:`sgbench.targets._contract.Target`; ``names()`` lists them.
A target module registers its class with ``@targets.register(name)``. ``adapted(target, wrapper)``
applies a target adapter by name (``ADAPTERS``: ``single_layer``, a vector target as one matrix layer).
"""

from __future__ import annotations

import inspect

from sgbench.base.arguments import check_keywords
from sgbench.base.registry import Registry
from sgbench.targets._contract import Target
from sgbench.targets._truth import Truth
from sgbench.targets.single_layer import ADAPTERS, adapted, single_layer

_REGISTRY: Registry[type] = Registry("target", __name__)


def register(name: str):
    """Class decorator: register a Target subclass under ``name``.

    Args:
        name: the target's registry name.

    Returns:
        the decorator, which registers the class and returns it unchanged.
    """

    def decorate(cls):
        return _REGISTRY.register(name, cls)

    return decorate


def get(name: str, **params) -> Target:
    """The target ``name`` built with ``params`` (unknown names and parameters are ValueErrors).
    Targets that take a gradient-noise model accept its parameters as ``noise_<parameter>``.

    Args:
        name: a registered target's name.
        **params: its constructor's parameters, and ``noise_<parameter>`` for its gradient-noise model.

    Returns:
        the Target.

    Raises:
        ValueError: an unknown name (UnknownNameError) or parameter, or a value outside its range.
    """
    cls = _REGISTRY.get(name)
    takes_noise = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(cls.__init__).parameters.values())
    own = {key: value for key, value in params.items() if not (takes_noise and key.startswith("noise_"))}
    also = (", and its gradient-noise model's parameters as noise_NAME (noise_variance for noise='isotropic' or "
            "'diagonal', noise_batch_size for 'minibatch', ...)") if takes_noise else ""
    check_keywords(f"target {name!r}", cls.__init__, own, also=also)
    return cls(**params)


def names() -> list[str]:
    """Names of all registered targets, sorted.

    Returns:
        list of str: the registered names, sorted (every target module is imported first).
    """
    return _REGISTRY.names()


__all__ = ["ADAPTERS", "Target", "Truth", "adapted", "get", "names", "register", "single_layer"]
