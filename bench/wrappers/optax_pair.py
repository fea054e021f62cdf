"""An optax-style pair, wrapped: ``make(**hyperparameters) -> (init, update)``, a gradient transformation that turns
gradients into updates.

``init(position) -> state``; ``update(gradient, state, position, key=key) -> (updates, state)``, and the chain moves
to ``position + updates`` (optax's ``apply_updates``). ``gradient`` is the suite's stochastic gradient of the loss
``-log p`` (optax's convention: updates descend it), or of ``log p`` with ``gradient="log_density"``. ``key`` is a
JAX PRNG key, new each step, from the suite's seeded draws; ``make`` may return an object with ``init`` and
``update`` attributes (an ``optax.GradientTransformation``) or a pair.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from sgbench import samplers
from sgbench.bench.running.sampler_fault import ContractError, defined_at
from sgbench.bench.wrappers import _common as wrap

GRADIENTS = {"loss": -1.0, "log_density": 1.0}


def _pair(made):
    return (made.init, made.update) if hasattr(made, "update") else tuple(made)


def optax_pair(make: Callable, *, gradient: str = "loss", step_size: str | None = None, name: str | None = None,
               temperature: str | None = None, claims: str | None = None, translate: Callable | None = None,
               citation: str = ""):
    """The suite's sampler of the pair ``make`` builds (module docstring).

    ``step_size``, ``name``, ``temperature``, ``claims``, ``translate`` and ``citation`` are every wrapper's
    (``sgbench.bench.wrappers``).

    Args:
        make: ``make(**hyperparameters) -> (init, update)`` or a GradientTransformation.
        gradient: "loss" (the gradient of -log p, the default) or "log_density".

    Returns:
        an ``AdaptedSampler``. ValueError naming ``gradient`` outside its values.
    """
    if gradient not in GRADIENTS:
        raise ValueError(f"gradient must be one of {sorted(GRADIENTS)}, got {gradient!r}")
    name = name or getattr(make, "__name__", "pair")
    names = wrap.keywords(make, 0, f"optax_pair: {name}")
    Params = wrap.hyperparameter_class(name, names, step_size)

    def built(params):
        return _pair(make(**wrap.values(params, names)))

    def start(x, params):
        return wrap.State(x, built(params)[0](x))

    def one_step(state, grad_fn, draws, params):
        update = built(params)[1]
        if "key" not in inspect.signature(update).parameters:
            raise ContractError(f"its update must take the step's PRNG key as key=, got {inspect.signature(update)}",
                                defined_at(update))
        g = wrap.CountedGradient(grad_fn, GRADIENTS[gradient])
        updates, inner = update(g(state.position), state.inner, state.position, key=wrap.step_key(draws))
        return wrap.State(state.position + updates, inner), samplers.Info(num_grad_evals=g.calls)

    return wrap.wrapped(name, citation or f"{name} (an optax-style pair, wrapped)", Params, start, one_step,
                        temperature, claims, translate, (make, make))
