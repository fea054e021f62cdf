"""A posteriors-style transform, wrapped: ``build(log_posterior, **hyperparameters)`` returning an object with
``init(params) -> state`` and ``update(state, batch) -> (state, aux)`` (``posteriors.sgmcmc.sgld.build`` and the
like, or the author's own in that form).

``log_posterior(params, batch) -> (value, aux)`` is the target's log density (not divided by a data size: a
transform written for posteriors' per-datum convention takes ``temperature`` 1/N and its ``lr`` scaled to match),
differentiable by ``torch.func`` and ``torch.autograd``; its ``batch`` is the step's stochastic gradient oracle, one
minibatch a step. ``params`` is a float64 tensor of shape (chains, dim), all chains as rows (``_torch_chains``): a
transform that couples them is refused before the run, naming ``per_chain=True`` (the NumPy driver, one chain at a
time). The position is the state's ``params`` (an attribute, or a dict's key; ``position=``: how to read it
otherwise); torch's global generator is seeded from the suite's draws each step, and restored.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sgbench import samplers
from sgbench.bench.adapters._seeds import torch_seeded
from sgbench.bench.running.sampler_fault import ContractError, defined_at
from sgbench.bench.wrappers import _common as wrap, _torch_chains as chains

INIT_SEED = np.array([0, 1])  # the seed of torch's generator while init runs (a momentum drawn there)


def posteriors_transform(build: Callable, *, position: Callable | None = None, per_chain: bool = False,
                         step_size: str | None = None, name: str | None = None, temperature: str | None = None,
                         claims: str | None = None, translate: Callable | None = None, citation: str = ""):
    """The suite's sampler of the transform ``build`` makes (module docstring).

    ``step_size``, ``name``, ``temperature``, ``claims``, ``translate`` and ``citation`` are every wrapper's
    (``sgbench.bench.wrappers``).

    Args:
        build: ``build(log_posterior, **hyperparameters)`` -> a transform with ``init`` and ``update``.
        position: ``position(state) -> tensor`` (default: the state's ``params``).
        per_chain: run one chain at a time (for an update that is not elementwise over the rows).

    Returns:
        an ``AdaptedSampler`` run by the batched driver (the NumPy driver with ``per_chain``).
    """
    torch = chains.torch_or_say("posteriors_transform")

    from sgbench.bench.adapters._torch_density import as_tensor, log_posterior

    name = name or getattr(build, "__module__", "").rpartition(".")[2] + "." + getattr(build, "__name__", "build")
    names = wrap.keywords(build, 1, f"posteriors_transform: {name}")
    Params = wrap.hyperparameter_class(name, names, step_size)
    where = defined_at(build)

    def params_of(state):
        """posteriors' ``state.params`` (or ``state["params"]`` of a dict); ContractError naming ``build`` otherwise."""
        if hasattr(state, "params"):
            return state.params
        if isinstance(state, dict) and "params" in state:
            return state["params"]
        raise ContractError(f"its state is a {type(state).__name__} without params: give posteriors_transform(..., "
                            "position=lambda state: ...)", where)

    read = position or params_of

    def transform(density, params):
        return build(density, **wrap.values(params, names))

    def oracle_density(params, batch):
        return log_posterior(params, batch, 1.0)

    def trial(x, params, density, steps):
        made = transform(lambda p, batch: (density(p), torch.empty(0)), params)
        with torch_seeded(INIT_SEED):
            state = made.init(as_tensor(x))
        for index in range(steps):
            with torch_seeded(np.array([index, 1])):
                state, _ = made.update(state, None)
        return read(state).detach()

    def start(x, params):
        chains.coupling(lambda y, density, steps: trial(y, params, density, steps), x,
                        f"give posteriors_transform({name}, per_chain=True)", where)
        made = transform(oracle_density, params)
        with torch_seeded(INIT_SEED):
            inner = made.init(as_tensor(x))
        return wrap.State(read(inner).detach().numpy().copy(), chains.Box((made, inner)))

    def one_step(state, grad_fn, draws, params):
        made, inner = state.inner.content
        oracle = wrap.CountedOracle(grad_fn)
        with torch_seeded(draws["seed"]):
            inner, _ = made.update(inner, oracle)
        return wrap.State(read(inner).detach().numpy().copy(), chains.Box((made, inner))), \
            samplers.Info(num_grad_evals=oracle.calls)

    return wrap.wrapped(name, citation or f"{name} (a posteriors-style transform, wrapped)", Params, start, one_step,
                        temperature, claims, translate, (build, build), backend="numpy" if per_chain else "batched")
