r"""Gradient-noise models: explicit noise injected into the gradient of the log density.

Appendix C of the SMILE paper (``seeds/000_10079a2df2a8e854.txt``), eq. (24):
:math:`\log p_{\text{noise}}(x) = \log p(x) + \epsilon^\top x`, so the stochastic gradient is
:math:`\nabla \log p(x) + \epsilon` with :math:`\epsilon \sim \mathcal N(0, V(x))`. The draw of
:math:`\epsilon` is an explicit argument (standard normals :math:`z`, :math:`\epsilon = V^{1/2} z`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from samplers import Variate
from samplers._checks import one_of, positive_finite


@dataclasses.dataclass(frozen=True)
class NoNoise:
    """Exact gradients: :math:`V = 0`."""

    name = "none"

    def draw_spec(self, dim: int) -> dict[str, Variate]:
        return {}

    def perturb(self, grad, x, draw):
        return grad

    def covariance(self, dim: int) -> np.ndarray:
        return np.zeros((dim, dim))

    def params(self) -> dict:
        return {}


@dataclasses.dataclass(frozen=True)
class IsotropicNoise:
    r"""'Isotropic' case of appendix C: :math:`V = \sigma^2 I`, :math:`\sigma^2 = 256` by default."""

    variance: float = 256.0
    name = "isotropic"

    def __post_init__(self):
        object.__setattr__(self, "variance", positive_finite("noise_variance", self.variance))

    def draw_spec(self, dim: int) -> dict[str, Variate]:
        return {"gradient_noise": Variate("normal", (dim,))}

    def perturb(self, grad, x, draw):
        return grad + math.sqrt(self.variance) * draw["gradient_noise"]

    def covariance(self, dim: int) -> np.ndarray:
        return self.variance * np.eye(dim)

    def params(self) -> dict:
        return {"variance": self.variance}


NOISE_MODELS = {model.name: model for model in (NoNoise, IsotropicNoise)}


def make_noise(name: str, **prefixed_params):
    """The noise model ``name`` with its parameters, given as ``noise_<param>=value``."""
    one_of("noise", name, NOISE_MODELS)
    params = {key.removeprefix("noise_"): value for key, value in prefixed_params.items()}
    fields = {f.name for f in dataclasses.fields(NOISE_MODELS[name])}
    unknown = set(params) - fields
    if unknown:
        allowed = ", ".join(f"noise_{f}" for f in sorted(fields)) or "none"
        raise ValueError(
            f"noise model {name!r} takes no parameter(s) "
            f"{', '.join('noise_' + u for u in sorted(unknown))}; it accepts: {allowed}"
        )
    return NOISE_MODELS[name](**params)
