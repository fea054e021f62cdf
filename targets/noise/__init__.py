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
    """Class decorator: register a NoiseModel subclass under ``name``.

    Args:
        name: the model's name (what a target's ``noise=`` takes).

    Returns:
        the class decorator: it sets ``cls.name`` and registers ``cls``, returning it; it raises ValueError where
        ``name`` is registered already.
    """

    def decorate(cls):
        cls.name = name
        return _REGISTRY.register(name, cls)

    return decorate


def names() -> list[str]:
    """Names of the noise models, sorted.

    Returns:
        list of str: the registered names, sorted.
    """
    return _REGISTRY.names()


def make_noise(name: str, target, **prefixed_params) -> NoiseModel:
    """The noise model ``name`` of ``target``, with its parameters given as
    ``noise_<param>=value``.

    Args:
        name: a registered noise model's name.
        target: the target whose gradient it perturbs (its dimension, truth and, for data targets, data are set).
        **prefixed_params: the model's parameters as ``noise_<param>=value``.

    Returns:
        the NoiseModel, an instance of the class registered as ``name``.

    Raises:
        UnknownNameError: no noise model is registered as ``name`` (a ValueError; the message lists the names).
        ValueError: a parameter the model does not accept, or a value outside its accepted range.
    """
    cls = _REGISTRY.get(name)
    params = {key.removeprefix("noise_"): value for key, value in prefixed_params.items()}
    check_keywords(f"noise model {name!r}", cls.__init__, params, prefix="noise_", skip=("target",))
    return cls(target, **params)


__all__ = ["AdditiveNoise", "NoiseModel", "make_noise", "names", "register"]
