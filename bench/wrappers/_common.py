"""What every wrapper shares: the author's hyperparameters as a ``Params`` class, the per-step key, the counted
gradient, and the ``AdaptedSampler`` they make."""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from sgbench import samplers
from sgbench.base.arguments import finite
from sgbench.bench.adapters import AdaptedSampler
from sgbench.bench.adapters._seeds import jax_key, seed_variate
from sgbench.bench.running.sampler_fault import ContractError, defined_at
from sgbench.samplers._contract import static_field

MISSING = inspect.Parameter.empty


class State(NamedTuple):
    """A wrapped chain: its ``position`` and the author's own state (``inner``: the position itself for a step of
    a position)."""

    position: Any
    inner: Any


def _numeric(default) -> bool:
    return default is MISSING or (isinstance(default, (int, float)) and not isinstance(default, bool)
                                  and math.isfinite(default))


def keywords(function: Callable, skip: int, what: str) -> dict:
    """The hyperparameters of ``function``: its parameters after the first ``skip`` positional ones whose default is
    a finite number or absent (``MISSING``), by name, with their defaults (one with another default, a flag, None or
    infinity, keeps it); TypeError naming ``what`` where it takes fewer."""
    parameters = list(inspect.signature(function).parameters.values())
    if len(parameters) < skip or any(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in parameters[:skip]):
        raise TypeError(f"{what} must take {skip} positional arguments first, got {inspect.signature(function)}")
    return {p.name: p.default for p in parameters[skip:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and _numeric(p.default)}


def _number(key: str, value, default):
    """``value`` as the hyperparameter ``key``: an integer where its default is one, else a finite float."""
    if isinstance(default, int) and default is not MISSING:
        number = finite(key, value)
        if number != int(number):
            raise ValueError(f"{key} must be an integer, got {value!r}")
        return int(number)
    return finite(key, value)


STEP = "step_size"  # the suite's name of the step, which validate's ladder halves


def hyperparameter_class(name: str, defaults: dict, step_size: str | None = None) -> type:
    """A ``samplers.hyperparameters`` class with one number per entry of ``defaults`` (those without one first, as a
    dataclass needs): an integer where the default is one (static: a loop count the step can ``range`` over under
    ``jax.jit``), else a finite float, each checked by name. ``step_size`` names the author's step (``lr``): the class
    calls it ``step_size``, the suite's name, and :func:`values` gives it back under the author's (ValueError where it
    is not one of ``defaults``)."""
    if step_size is not None and step_size != STEP:
        if step_size not in defaults or STEP in defaults:
            raise ValueError(f"step_size must name one of the hyperparameters {sorted(defaults)} (other than a "
                             f"step_size of its own), got {step_size!r}")
        defaults = {STEP if key == step_size else key: default for key, default in defaults.items()}
    ordered = sorted(defaults.items(), key=lambda item: item[1] is not MISSING)

    def __post_init__(self):
        for key, default in defaults.items():
            object.__setattr__(self, key, _number(key, getattr(self, key), default))

    kinds = {key: float if default is MISSING else type(default) for key, default in ordered}
    namespace = {"__annotations__": kinds, "AUTHOR_NAMES": {STEP: step_size} if step_size else {},
                 "__post_init__": __post_init__,
                 **{key: static_field(default) if isinstance(default, int) else default
                    for key, default in ordered if default is not MISSING}}
    return samplers.hyperparameters(type(f"{name}_Params", (), namespace))


def position_reader(position: Callable | None, made_by: Callable, wrapper: str) -> Callable:
    """``position``, or: the state if it is an array, else its ``position`` attribute (ContractError naming
    ``made_by``, the function that made the state, and the ``wrapper`` to give it to, where it has none)."""
    if position is not None:
        return position

    def read(state):
        if hasattr(state, "shape"):
            return state
        if not hasattr(state, "position"):
            raise ContractError(f"its state is a {type(state).__name__}, neither an array nor a pytree with a "
                                f"position attribute: give {wrapper}(..., position=lambda state: ...)",
                                defined_at(made_by))
        return state.position

    return read


def draw_spec(dim, params) -> dict:
    """One seed a step, from which the step's JAX key is made."""
    return {"seed": seed_variate()}


def step_key(draws):
    return jax_key(draws["seed"])


class CountedGradient:
    """The step's gradient oracle, counting the author's calls (at trace time: a fixed number per step)."""

    def __init__(self, oracle, sign: float = 1.0):
        self.oracle, self.sign, self.calls = oracle, sign, 0

    def __call__(self, x):
        self.calls += 1
        return self.sign * self.oracle(x)


class CountedOracle(CountedGradient):
    """The step's oracle, counting the author's evaluations of its value and gradient as well as of its gradient."""

    def value_and_grad(self, x):
        self.calls += 1
        return self.oracle.value_and_grad(x)


def values(params, names) -> dict:
    """The hyperparameters ``names`` (the author's names) of ``params``, by the author's names."""
    suite = {author: key for key, author in type(params).AUTHOR_NAMES.items()}
    return {key: getattr(params, suite.get(key, key)) for key in names}


def wrapped(name: str, citation: str, Params: type, init: Callable, step: Callable, temperature: str | None,
            claims: str | None, translate: Callable | None, authored: tuple, backend: str = "jax",
            prime: Callable | None = None) -> AdaptedSampler:
    """The AdaptedSampler of a wrapped step (``step(state, grad_fn, draws, params) -> (State, Info)``), run by the
    ``backend`` driver. ``authored``: the author's functions behind ``init`` and ``step`` (their ``__wrapped__``, so
    that a fault found in what they return names the author's code, not the wrapper's). ValueError naming
    ``temperature`` where it is not a hyperparameter."""
    init.__wrapped__, step.__wrapped__ = authored
    names = [f.name for f in dataclasses.fields(Params)]
    if temperature is not None and temperature not in names:
        raise ValueError(f"temperature must name one of the hyperparameters {names}, got {temperature!r}")
    return AdaptedSampler.build(
        name=name, citation=citation, library="user", backend=backend, step=step, Params=Params, State=State,
        init=init, prime=prime, draw_spec=draw_spec, claims=claims, translate=translate,
        temperature=None if temperature is None else (lambda params: float(getattr(params, temperature))))
