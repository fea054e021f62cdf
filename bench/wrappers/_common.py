"""What every wrapper shares: the author's hyperparameters as a ``Params`` class, the per-step key, the counted
gradient, and the ``AdaptedSampler`` they make."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

from sgbench import samplers
from sgbench.base.arguments import finite
from sgbench.bench.adapters import AdaptedSampler
from sgbench.bench.adapters._seeds import jax_key, seed_variate

MISSING = inspect.Parameter.empty


class State(NamedTuple):
    """A wrapped chain: its ``position`` and the author's own state (``inner``: the position itself for a step of
    a position)."""

    position: Any
    inner: Any


def keywords(function: Callable, skip: int, what: str) -> dict:
    """The hyperparameters of ``function``: its parameters after the first ``skip`` positional ones, by name, with
    their defaults (``MISSING``: none); TypeError naming ``what`` where it takes fewer."""
    parameters = list(inspect.signature(function).parameters.values())
    if len(parameters) < skip or any(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) for p in parameters[:skip]):
        raise TypeError(f"{what} must take {skip} positional arguments first, got {inspect.signature(function)}")
    return {p.name: p.default for p in parameters[skip:] if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def hyperparameter_class(name: str, defaults: dict) -> type:
    """A ``samplers.hyperparameters`` class with one finite number per entry of ``defaults`` (those without one
    first, as a dataclass needs), each checked by name on construction."""
    ordered = sorted(defaults.items(), key=lambda item: item[1] is not MISSING)

    def __post_init__(self):
        for key in defaults:
            object.__setattr__(self, key, finite(key, getattr(self, key)))

    namespace = {"__annotations__": {key: float for key, _ in ordered}, "__post_init__": __post_init__,
                 **{key: default for key, default in ordered if default is not MISSING}}
    return samplers.hyperparameters(type(f"{name}_Params", (), namespace))


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


def values(params, names) -> dict:
    return {key: getattr(params, key) for key in names}


def wrapped(name: str, citation: str, Params: type, init: Callable, step: Callable, temperature: str | None,
            claims: str | None, translate: Callable | None) -> AdaptedSampler:
    """The AdaptedSampler of a wrapped step (``step(state, grad_fn, draws, params) -> (State, Info)``), run by the
    JAX driver; ValueError naming ``temperature`` where it is not a hyperparameter."""
    names = [f.name for f in dataclasses.fields(Params)]
    if temperature is not None and temperature not in names:
        raise ValueError(f"temperature must name one of the hyperparameters {names}, got {temperature!r}")
    return AdaptedSampler.build(
        name=name, citation=citation, library="user", backend="jax", step=step, Params=Params, State=State,
        init=init, draw_spec=draw_spec, claims=claims, translate=translate,
        temperature=None if temperature is None else (lambda params: float(getattr(params, temperature))))
