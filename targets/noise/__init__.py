r"""Gradient-noise models: explicit noise injected into the gradient of the log density.

Appendix C of the SMILE paper, eq. (24):
:math:`\log p_{\text{noise}}(x) = \log p(x) + \epsilon^\top x`, so the stochastic gradient is
:math:`\nabla \log p(x) + \epsilon` with :math:`\epsilon \sim \mathcal N(0, V(x))`; the draw of
:math:`\epsilon` is an explicit argument. One model per module, registered by name; a target
takes ``noise=NAME`` and the model's parameters as ``noise_<parameter>=value``.
"""

from __future__ import annotations

from sgbench.base.arguments import check_keywords
from sgbench.base.registry import Registry
from sgbench.targets.noise._base import AdditiveNoise, NoiseModel

_REGISTRY: Registry[type] = Registry("noise model", __name__)


def register(name: str):
    """Class decorator: register a NoiseModel subclass under ``name``."""

    def decorate(cls):
        cls.name = name
        return _REGISTRY.register(name, cls)

    return decorate


def names() -> list[str]:
    """Names of the noise models, sorted."""
    return _REGISTRY.names()


def make_noise(name: str, target, **prefixed_params) -> NoiseModel:
    """The noise model ``name`` of ``target``, with its parameters given as
    ``noise_<param>=value``."""
    cls = _REGISTRY.get(name)
    params = {key.removeprefix("noise_"): value for key, value in prefixed_params.items()}
    check_keywords(f"noise model {name!r}", cls.__init__, params, prefix="noise_", skip=("target",))
    return cls(target, **params)


__all__ = ["AdditiveNoise", "NoiseModel", "make_noise", "names", "register"]
