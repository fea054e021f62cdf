"""The sampler contract of DESIGN.md.

A sampler module defines

- ``Params``: a frozen dataclass of hyperparameters made with :func:`hyperparameters`, validated
  on construction; its numeric fields are JAX pytree leaves (so a driver can ``vmap`` over a grid
  of them) and fields declared with ``static_field`` are compile-time constants;
- ``State``: a NamedTuple whose first field is ``position``;
- ``init(position, params) -> State``;
- ``reference_step(state, grad_fn, draws, params) -> (State, Info)`` in NumPy (float64, one chain,
  the paper's equations line by line) and ``optimized_step`` with the same signature in JAX
  (pure, jit-able, vmap-able), with the same names and the same order of lines;
- ``draw_spec(dim, params) -> dict[str, Variate]``: the random variates one step consumes (it may
  read the static fields of ``params``: a wrapper's expanded dimension, an optional refresh),
- optionally ``prepare(target, params: dict) -> dict``: fills in hyperparameters that depend on
  the target (a control-variate centre), called by the drivers' front end before ``Params``,
- optionally ``prime(state, oracle) -> State``: fills in what the state caches at its position
  (a log density and its gradient), called by the drivers once after ``init`` with the
  full-data oracle :meth:`GradientOracle.exact`,
- optionally ``initial_positions(target, num_chains, seed) -> (num_chains, dim)``: the sampler's
  own starting points (MILE's deep ensemble), used where the caller gives none,
- optionally ``linear_law(hyperparameters, precision, noise_covariance, step=None) -> LinearLaw``: its exact
  discrete-time law on a Gaussian target, where its step is linear (``sgbench.samplers._linear_law``), read by the
  gate's exact-law cells, the exact-law tests and the reproductions' predictions,
- ``benchmarks``: its :class:`sgbench.samplers._benchmarks.BenchmarkSettings` (gate cells, equivalence, speed
  and asv hyperparameters), which every benchmark reads (optional to register, required by them; exact-law
  cells need a ``linear_law``),

and registers them with :func:`samplers.register` as a :class:`Sampler`. ``grad_fn`` is a
:class:`GradientOracle` of the log density, bound by the driver to this step's minibatch or noise
draw: ``grad_fn(x)`` is the gradient, ``grad_fn.value_and_grad(x)`` the log density and gradient.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax

from sgbench.base.arguments import check_keywords
from sgbench.base.variates import LAWS, Variate  # noqa: F401 (Variate: part of the sampler contract)
from sgbench.samplers._benchmarks import BenchmarkSettings
from sgbench.samplers._linear_law import LinearLaw, NoLinearLawError


class MissingHyperparameter(ValueError):
    """A hyperparameter without a default that was not given (``name``)."""

    def __init__(self, name: str, message: str):
        super().__init__(message)
        self.name = name


class Info(NamedTuple):
    """What one step reports besides the new state: its gradient evaluations, and whether the new
    position is a posterior sample (False in the exploration stage of cyclical SGLD, whose
    positions the drivers leave out of the moments and the kept samples).

    Attributes:
        num_grad_evals: the gradient-oracle evaluations the step made (a number, or an array under ``vmap``).
        is_sample: whether the new position is a posterior sample (default True; a bool or a boolean array).
    """

    num_grad_evals: Any
    is_sample: Any = True


@dataclasses.dataclass(frozen=True)
class GradientOracle:
    """The log density of ``target`` as a sampler sees it at one step: bound to one ``draw`` of the
    target's randomness (``None``: the exact, full-data density). ``on_evaluation``, if given, is
    called once per evaluation (the reference driver counts gradient evaluations with it).

    Args:
        target: the Target whose log density it evaluates.
        draw: this step's draw of ``target.draw_spec`` (a dict keyed like it), or None for the exact density.
        on_evaluation: called with no arguments once per evaluation, or None.
    """

    target: Any
    draw: Any = None
    on_evaluation: Callable[[], None] | None = None

    @classmethod
    def exact(cls, target, on_evaluation=None) -> GradientOracle:
        """The oracle of the full-data log density and its exact gradient.

        Args:
            target: the Target whose log density it evaluates.
            on_evaluation: called with no arguments once per evaluation, or None.

        Returns:
            a GradientOracle with ``draw`` None.
        """
        return cls(target, None, on_evaluation)

    def _count(self) -> None:
        if self.on_evaluation is not None:
            self.on_evaluation()

    def __call__(self, x):
        """The (stochastic) gradient of the log density at ``x``.

        Args:
            x: a position, shape (dim,).

        Returns:
            the gradient at ``x``, shape (dim,).
        """
        self._count()
        if self.draw is None:
            return self.target.grad_logdensity(x)
        return self.target.stochastic_grad(x, self.draw)

    def value_and_grad(self, x):
        """(log density, gradient) at ``x`` from the same draw: one evaluation.

        Args:
            x: a position, shape (dim,).

        Returns:
            (log density, gradient): a number and an array of shape (dim,).
        """
        self._count()
        if self.draw is None:
            return self.target.logdensity(x), self.target.grad_logdensity(x)
        return self.target.stochastic_logdensity(x, self.draw), self.target.stochastic_grad(x, self.draw)


def static_field(default=dataclasses.MISSING):
    """A hyperparameter that is a compile-time constant (a string choice), not a pytree leaf.

    Args:
        default: the field's default (omitted: a required field).

    Returns:
        a ``dataclasses.Field`` with ``metadata={"static": True}``.
    """
    return dataclasses.field(default=default, metadata={"static": True})


def hyperparameters(cls):
    """Make ``cls`` a frozen, validated dataclass that is also a JAX pytree.

    ``__post_init__`` (if ``cls`` defines it) runs on construction and raises ``ValueError``
    naming the parameter and its accepted range. Unflattening (inside ``jit``/``vmap``) bypasses it,
    since leaves are then tracers or stacked grids of already-validated values.

    Args:
        cls: the class to decorate: annotated fields, optionally a ``__post_init__``.

    Returns:
        ``cls`` as a frozen dataclass registered as a JAX pytree, with ``leaf_names`` the names of its numeric
        (non-static) fields.
    """
    cls = dataclasses.dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)
    leaves = tuple(f.name for f in fields if not f.metadata.get("static"))
    statics = tuple(f.name for f in fields if f.metadata.get("static"))

    def flatten(p):
        return [getattr(p, n) for n in leaves], tuple(getattr(p, n) for n in statics)

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for name, value in zip(leaves + statics, list(children) + list(aux)):
            object.__setattr__(obj, name, value)
        return obj

    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    cls.leaf_names = leaves
    return cls


OPTIONAL_PARTS = ("prepare", "prime", "initial_positions", "linear_law", "benchmarks")


@dataclasses.dataclass(frozen=True)
class Sampler:
    """A registered sampler: its name, paper, and the parts of the contract.

    Args:
        name: its registry name.
        citation: the paper and equations it implements.
        Params: its hyperparameter class (made with :func:`hyperparameters`).
        State: its state, a NamedTuple whose first field is ``position``.
        init: ``init(position, params) -> State``.
        reference_step: the NumPy step, ``reference_step(state, grad_fn, draws, params) -> (State, Info)``.
        optimized_step: the JAX step, with the same signature.
        draw_spec: ``draw_spec(dim, params) -> dict[str, Variate]``.
        prepare: ``prepare(target, params: dict) -> dict``, or None.
        prime: ``prime(state, oracle) -> State``, or None.
        initial_positions: ``initial_positions(target, num_chains, seed) -> (num_chains, dim)``, or None.
        linear_law: ``linear_law(hyperparameters, precision, noise_covariance, step=None) -> LinearLaw``, or None
            (``sgbench.samplers._linear_law``).
        benchmarks: its BenchmarkSettings, or None.

    Raises:
        TypeError: ``benchmarks`` is not a BenchmarkSettings.
        ValueError: a hyperparameter set of ``benchmarks`` names a parameter that ``Params`` does not accept, or
            ``benchmarks`` declares exact-law gate cells and the sampler no ``linear_law``.
    """

    name: str
    citation: str
    Params: type
    State: type
    init: Callable
    reference_step: Callable
    optimized_step: Callable
    draw_spec: Callable[[int, Any], dict[str, Variate]]
    prepare: Callable[[Any, dict], dict] | None = None
    prime: Callable[[Any, GradientOracle], Any] | None = None
    initial_positions: Callable[[Any, int, int], Any] | None = None
    linear_law: Callable[..., LinearLaw] | None = None
    benchmarks: BenchmarkSettings | None = dataclasses.field(default=None, hash=False)

    def __post_init__(self):
        if self.benchmarks is None:
            return
        if not isinstance(self.benchmarks, BenchmarkSettings):
            raise TypeError(f"sampler {self.name!r}: benchmarks must be a samplers.BenchmarkSettings, "
                            f"got {type(self.benchmarks).__name__}")
        for field, params in self.benchmarks.parameter_sets().items():
            check_keywords(f"sampler {self.name!r} (benchmark setting {field})", self.Params, params)
        if self.benchmarks.gate.exact_law and self.linear_law is None:
            raise ValueError(f"sampler {self.name!r} declares exact-law gate cells (benchmark setting gate.exact_law) "
                             "but no linear_law: define `linear_law(hyperparameters, precision, noise_covariance, "
                             "step=None)` in its file (samplers/_linear_law.py), or drop the cells")

    @classmethod
    def from_namespace(cls, name: str, citation: str, namespace: dict) -> Sampler:
        """The sampler whose parts are the names ``Params``, ``State``, ``init``, ``reference_step``,
        ``optimized_step``, ``draw_spec`` (and, if defined, ``prepare``, ``prime``,
        ``initial_positions``, ``linear_law``, ``benchmarks``) of ``namespace``: a sampler module's ``globals()``.

        Args:
            name: the sampler's registry name.
            citation: the paper and equations it implements.
            namespace: a sampler module's ``globals()``.

        Returns:
            the Sampler (not yet registered).

        Raises:
            ValueError: ``namespace`` lacks a required part (the message names it).
        """
        parts = [f.name for f in dataclasses.fields(cls) if f.name not in ("name", "citation")]
        missing = [part for part in parts if part not in namespace and part not in OPTIONAL_PARTS]
        if missing:
            raise ValueError(f"sampler {name!r} does not define {', '.join(missing)}")
        return cls(name=name, citation=citation, **{part: namespace[part] for part in parts if part in namespace})

    def params(self, **kwargs):
        """Validated hyperparameters of this sampler (ValueError names an unknown one).

        Args:
            **kwargs: hyperparameters, by the names of the fields of ``Params``.

        Returns:
            the validated ``Params``.

        Raises:
            ValueError: an unknown hyperparameter, or a value outside its accepted range;
                :class:`MissingHyperparameter` (a ValueError) for one without a default that is not given.
        """
        check_keywords(f"sampler {self.name!r}", self.Params, kwargs)
        return self.Params(**kwargs)

    def law(self, hyperparameters: dict, precision, noise_covariance, step: int | None = None) -> LinearLaw:
        """Its exact discrete-time law at ``hyperparameters`` (``sgbench.samplers._linear_law``).

        Args:
            hyperparameters: by the names of the fields of ``Params`` (a control-variate centre is not needed).
            precision: the Gaussian target's precision P, (d, d).
            noise_covariance: the covariance V of the additive gradient noise, (d, d), or None for exact gradients.
            step: the step counter whose law is asked, or None for the law of every step.

        Returns:
            the LinearLaw.

        Raises:
            NoLinearLawError: the sampler declares no law, or these hyperparameters make its step nonlinear or its
                law change from step to step (the message says why).
            ValueError: an unknown hyperparameter, or a value outside its accepted range.
        """
        if self.linear_law is None:
            raise NoLinearLawError(f"no exact law for sampler {self.name!r}: it declares no linear_law")
        check_keywords(f"sampler {self.name!r}", self.Params, hyperparameters)
        return self.linear_law(hyperparameters, precision, noise_covariance, step)

    def params_for(self, target, **kwargs):
        """Validated hyperparameters for ``target``, after ``prepare`` filled in what depends on it.

        Args:
            target: the Target the chains run on (read by ``prepare``).
            **kwargs: hyperparameters, by the names of the fields of ``Params``.

        Returns:
            the validated ``Params``.

        Raises:
            ValueError: an unknown hyperparameter, or a value outside its accepted range;
                :class:`MissingHyperparameter` (a ValueError) for one without a default that is not given.
        """
        check_keywords(f"sampler {self.name!r}", self.Params, kwargs)
        given = kwargs if self.prepare is None else self.prepare(target, kwargs)
        fields = dataclasses.fields(self.Params) if dataclasses.is_dataclass(self.Params) else ()
        missing = [f.name for f in fields if f.init and f.name not in given
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise MissingHyperparameter(missing[0], f"sampler {self.name!r} needs a value for its hyperparameter "
                                                    f"{missing[0]!r}, which has no default")
        return self.params(**given)

    def start(self, position, params, oracle: GradientOracle):
        """``init``, then ``prime`` with ``oracle`` where the sampler caches values at its position.

        Args:
            position: the chain's starting point, shape (dim,).
            params: validated Params.
            oracle: the full-data GradientOracle (``GradientOracle.exact(target)``), used by ``prime``.

        Returns:
            the chain's first State.
        """
        state = self.init(position, params)
        return state if self.prime is None else self.prime(state, oracle)
