"""A JAX step function, wrapped: ``step(key, state, grad_log_density, **hyperparameters) -> state``.

``state`` is the position (a flat array) or any pytree holding it (``position=``: how to read it, by default the
state itself if it is an array, else its ``position`` attribute); ``init(position, **hyperparameters) -> state``
makes the first one (default: the position itself). ``grad_log_density(x)`` is the suite's stochastic gradient of
the log density at ``x``, its minibatch drawn once a step: every call within a step sees the same one. ``key`` is a
JAX PRNG key, new each step, from the suite's seeded draws.
"""

from __future__ import annotations

from collections.abc import Callable

from sgbench import samplers
from sgbench.bench.wrappers import _common as wrap


def jax_step(step: Callable, *, init: Callable | None = None, position: Callable | None = None,
             step_size: str | None = None, name: str | None = None, temperature: str | None = None,
             claims: str | None = None, translate: Callable | None = None, citation: str = ""):
    """The suite's sampler of ``step`` (module docstring).

    ``step_size``, ``name``, ``temperature``, ``claims``, ``translate`` and ``citation`` are every wrapper's
    (``sgbench.bench.wrappers``).

    Args:
        step: ``step(key, state, grad_log_density, **hyperparameters) -> state``.
        init: ``init(position, **hyperparameters) -> state`` (default: the state is the position).
        position: ``position(state) -> position`` (default: the state, or its ``position`` attribute).

    Returns:
        an ``AdaptedSampler`` for ``sgbench validate`` and ``sgbench.validate``.
    """
    name = name or getattr(step, "__name__", "step")
    names = wrap.keywords(step, 3, f"jax_step: {name}")
    if init is not None:
        extra = set(wrap.keywords(init, 1, f"jax_step: init of {name}")) - set(names)
        if extra:
            raise TypeError(f"jax_step: init of {name} takes hyperparameters the step does not: {sorted(extra)}")
    Params = wrap.hyperparameter_class(name, names, step_size)
    read = wrap.position_reader(position, init or step, "jax_step")
    init_names = [] if init is None else list(wrap.keywords(init, 1, "init"))

    def start(x, params):
        inner = x if init is None else init(x, **wrap.values(params, init_names))
        return wrap.State(read(inner), inner)

    def one_step(state, grad_fn, draws, params):
        gradient = wrap.CountedGradient(grad_fn)
        inner = step(wrap.step_key(draws), state.inner, gradient, **wrap.values(params, names))
        return wrap.State(read(inner), inner), samplers.Info(num_grad_evals=gradient.calls)

    return wrap.wrapped(name, citation or f"{name} (a JAX step, wrapped)", Params, start, one_step, temperature,
                        claims, translate, (init or step, step))
