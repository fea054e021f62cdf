"""A blackjax-style algorithm, wrapped: ``make(gradient_function, **hyperparameters)`` returning a
``SamplingAlgorithm`` (an object with ``init`` and ``step``) or an ``(init, step)`` pair.

Two forms, as blackjax has them:

- ``gradient="estimator"`` (blackjax's SG-MCMC: ``blackjax.sgld(grad_estimator)``): ``make`` is given
  ``grad_estimator(position, minibatch)``, and ``step(rng_key, state, minibatch, **hyperparameters)``. The minibatch
  the wrapper passes is the step's stochastic gradient oracle: ``grad_estimator(x, minibatch)`` is the suite's
  stochastic gradient of the log density at ``x``, one minibatch per step.
- ``gradient="log_density"`` (blackjax's full-gradient kernels: ``blackjax.mclmc(logdensity_fn, L, step_size)``):
  ``make`` is given ``logdensity_fn(position)``, whose value and gradient (``jax.value_and_grad``) are the suite's
  stochastic ones at the step, and ``step(rng_key, state, **hyperparameters)``.

``init(position)`` or ``init(position, rng_key)`` makes the first state; its key is made from the bits of the
chain's starting position (reproducible from the run's seed, distinct between chains that start apart). The state is
the position or any pytree with a ``position`` attribute; ``step`` returns the state, or ``(state, info)`` as a plain
tuple. The hyperparameters are ``make``'s keywords after the first and ``step``'s after its positional arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp

from sgbench import samplers
from sgbench.bench.adapters._log_density import logdensity_of
from sgbench.bench.running.sampler_fault import ContractError, defined_at
from sgbench.bench.wrappers import _common as wrap

STEP_ARGUMENTS = {"estimator": 3, "log_density": 2}  # rng_key, state[, minibatch]


def _algorithm(made, make):
    if hasattr(made, "init") and hasattr(made, "step"):
        return made.init, made.step
    if isinstance(made, tuple) and len(made) == 2:
        return made
    raise ContractError(f"it returns a {type(made).__name__}, neither a SamplingAlgorithm (init, step) nor an "
                        "(init, step) pair", defined_at(make))


def position_key(position):
    """A PRNG key from the bits of ``position`` (jit- and vmap-able): chains that start apart get distinct keys."""
    bits = jax.lax.bitcast_convert_type(jnp.asarray(position, jnp.float64), jnp.uint32).reshape(-1)
    mixed = jnp.sum(bits * (2 * jnp.arange(bits.size, dtype=jnp.uint32) + 0x9E3779B1))
    return jax.random.fold_in(jax.random.key(0), mixed)


def blackjax_pair(make: Callable, *, gradient: str = "estimator", position: Callable | None = None,
                  step_size: str | None = None, name: str | None = None, temperature: str | None = None,
                  claims: str | None = None, translate: Callable | None = None, citation: str = ""):
    """The suite's sampler of the algorithm ``make`` builds (module docstring).

    ``step_size``, ``name``, ``temperature``, ``claims``, ``translate`` and ``citation`` are every wrapper's
    (``sgbench.bench.wrappers``).

    Args:
        make: ``make(grad_estimator or logdensity_fn, **hyperparameters)`` -> SamplingAlgorithm or (init, step).
        gradient: "estimator" (``step(rng_key, state, minibatch, ...)``, the default) or "log_density"
            (``step(rng_key, state, ...)``).
        position: ``position(state) -> position`` (default: the state, or its ``position`` attribute).

    Returns:
        an ``AdaptedSampler``. ValueError naming ``gradient`` outside its values.
    """
    if gradient not in STEP_ARGUMENTS:
        raise ValueError(f"gradient must be one of {sorted(STEP_ARGUMENTS)}, got {gradient!r}")
    # blackjax's top-level objects (blackjax.mclmc) take (*args, **kwargs): the function itself is kept there
    function = getattr(make, "differentiable", make)
    name = name or getattr(make, "__name__", None) or getattr(function, "__module__", "algorithm").rpartition(".")[2]
    made_names = wrap.keywords(function, 1, f"blackjax_pair: {name}")
    try:  # built once with placeholder values, to read the step's hyperparameters
        made = make(lambda *args: None, **{k: 1.0 if v is wrap.MISSING else v for k, v in made_names.items()})
    except Exception as error:
        raise TypeError(f"blackjax_pair: {name} could not be built to read its step's hyperparameters "
                        f"({type(error).__name__}: {error})") from error
    probe_init, probe_step = _algorithm(made, make)
    step_names = wrap.keywords(probe_step, STEP_ARGUMENTS[gradient], f"blackjax_pair: the step of {name}")
    init_takes_key = len(inspect.signature(probe_init).parameters) >= 2
    Params = wrap.hyperparameter_class(name, {**made_names, **step_names}, step_size)
    read = wrap.position_reader(position, probe_init, "blackjax_pair")

    def built(params, oracle):
        """(init, step) of ``make`` for this step's ``oracle``, and the counted oracle the step passes on."""
        counted = wrap.CountedOracle(oracle)
        function = (lambda x, minibatch: minibatch(x)) if gradient == "estimator" else logdensity_of(counted)
        return _algorithm(make(function, **wrap.values(params, made_names)), make), counted

    def start(x, params):
        return wrap.State(x, params)  # the hyperparameters, until prime makes the author's state

    def prime(state, oracle):
        (init, _), _ = built(state.inner, oracle)
        inner = init(state.position, position_key(state.position)) if init_takes_key else init(state.position)
        return wrap.State(read(inner), inner)

    def one_step(state, grad_fn, draws, params):
        (_, step), counted = built(params, grad_fn)
        arguments = (wrap.step_key(draws), state.inner) + ((counted,) if gradient == "estimator" else ())
        returned = step(*arguments, **wrap.values(params, step_names))
        inner = returned[0] if type(returned) is tuple and len(returned) == 2 else returned
        return wrap.State(read(inner), inner), samplers.Info(num_grad_evals=counted.calls)

    return wrap.wrapped(name, citation or f"{name} (a blackjax-style algorithm, wrapped)", Params, start, one_step,
                        temperature, claims, translate, (probe_init, probe_step), prime=prime)
