"""The target contract of DESIGN.md.

A target has a dimension, a log density and its analytic gradient (one formula for NumPy and
JAX inputs; checked against ``jax.grad`` in the tests), a stochastic gradient whose randomness
is an explicit argument described by ``draw_spec`` (the gradient-noise model's, see
``sgbench.targets.noise``), truth (:class:`sgbench.targets._truth.Truth`, or None where there is no analytic
truth), an exact sampler where one exists, and the initial position of the papers' experiments.
Positions of analytic targets may carry leading batch axes (``x`` of shape ``(..., dim)``);
data targets (``sgbench.targets._data``) take one position of shape ``(dim,)``.
"""

from __future__ import annotations

import abc

import numpy as np

from sgbench.base.float64 import in_float64_mode
from sgbench.base.variates import Variate
from sgbench.targets._truth import Truth
from sgbench.targets.noise import NoiseModel

MAX_DIM = 10_000
"""The largest dimension of an analytic target or a linear model: the truth holds dim x dim matrices
(0.8 GB each at this size), and the ICG a dense rotation."""


class NoExactSamplerError(RuntimeError):
    """The target has no exact sampler (its truth, if any, comes from a gold standard)."""


class Target(abc.ABC):
    """Base class: subclasses set ``name``, ``dim``, ``noise`` (a ``sgbench.targets.noise`` model),
    ``truth`` (None where there is no analytic truth) and ``params`` (what ``targets.get`` was
    given, with defaults filled in).

    A subclass's ``__init__`` (which may hold data as JAX arrays) and ``sample`` (the exact float64 draws) run in
    JAX's 64-bit mode whatever the caller's setting (``sgbench.base.float64``), so a target is the same object and
    gives the same draws in any process."""

    name: str
    dim: int
    params: dict
    truth: Truth | None
    noise: NoiseModel
    density_dtype = "float64"
    """The dtype the log density is computed in at float64 positions: ``"float32"`` where it is others' code that
    holds float32 data (Inference Gym); a float32 density agrees with its own gradient to float32 rounding only."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method in ("__init__", "sample"):
            if method in cls.__dict__:
                setattr(cls, method, in_float64_mode(cls.__dict__[method]))

    @abc.abstractmethod
    def logdensity(self, x):
        """log p(x), up to nothing: normalised where the normaliser is known.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).

        Returns:
            the log density, shape ``x.shape[:-1]`` (a number for one position).
        """

    @abc.abstractmethod
    def grad_logdensity(self, x):
        """The exact gradient of ``logdensity``.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).

        Returns:
            the gradient, shape of ``x``.
        """

    def stochastic_grad(self, x, draw: dict):
        """The gradient as a sampler sees it, from this step's ``draw`` (see ``self.noise``).

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of ``draw_spec``, a dict keyed like it.

        Returns:
            the stochastic gradient, shape of ``x``.
        """
        return self.noise.stochastic_grad(x, draw)

    def stochastic_logdensity(self, x, draw: dict):
        """The log density whose gradient is :meth:`stochastic_grad`, from the same ``draw``.

        Args:
            x: a position, shape (dim,) (analytic targets also accept leading batch axes, (..., dim)).
            draw: this step's draw of ``draw_spec``, a dict keyed like it.

        Returns:
            the log density, shape ``x.shape[:-1]``.
        """
        return self.noise.stochastic_logdensity(x, draw)

    @property
    def draw_spec(self) -> dict[str, Variate]:
        """The random variates one stochastic-gradient evaluation consumes."""
        return self.noise.draw_spec()

    @abc.abstractmethod
    def sample(self, key, n: int):
        """``n`` exact independent draws, shape (n, dim), from a JAX PRNG ``key``.

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).
        """

    @abc.abstractmethod
    def initial_position(self) -> np.ndarray:
        """The starting point of the papers' experiments, shape (dim,).

        Returns:
            float64 array of shape (dim,).
        """

    def check_positions(self, positions, num_chains: int) -> np.ndarray:
        """``positions`` as a (num_chains, dim) float64 array; accepts (dim,) for every chain.

        Args:
            positions: one starting point (dim,) or one per chain (num_chains, dim).
            num_chains: the number of chains.

        Returns:
            a new float64 array of shape (num_chains, dim).

        Raises:
            ValueError: another shape, or a value that is not finite.
        """
        x = np.asarray(positions, dtype=np.float64)
        if x.ndim == 1:
            x = np.broadcast_to(x, (num_chains, x.shape[0]))
        if x.ndim != 2 or x.shape != (num_chains, self.dim):
            raise ValueError(
                f"initial_position must have shape ({self.dim},) or ({num_chains}, {self.dim}) "
                f"for target {self.name!r} of dimension {self.dim}, got shape {np.shape(positions)}"
            )
        if not np.all(np.isfinite(x)):
            raise ValueError("initial_position must be finite")
        return np.array(x)

    def noise_params(self) -> dict:
        """``noise`` and ``noise_<parameter>`` entries for ``params``.

        Returns:
            dict: ``{"noise": name, "noise_<parameter>": value, ...}``.
        """
        return {"noise": self.noise.name, **{f"noise_{k}": v for k, v in self.noise.params().items()}}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"targets.get({self.name!r}, {args})"
