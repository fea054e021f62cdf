"""A torch step function, wrapped: ``step(generator, state, grad_log_density, **hyperparameters) -> state``.

``state`` is the position, a float64 tensor of shape (chains, dim) holding all chains as rows (``_torch_chains``),
or any object with a ``position`` attribute holding it (``position=``: how to read it otherwise);
``init(position, **hyperparameters) -> state`` makes the first one (default: the position itself).
``grad_log_density(x)`` is the suite's stochastic gradient of the log density at ``x`` (a tensor of ``x``'s shape),
its minibatch drawn once a step. ``generator`` is a ``torch.Generator``, seeded each step from the suite's draws,
for the step's noise (``torch.randn(..., generator=generator)``). A step that couples the rows is refused before the
run, naming ``per_chain=True``, which runs it under the NumPy driver, one chain at a time (a position of shape
(dim,): correct for any step, slower).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sgbench import samplers
from sgbench.bench.adapters._seeds import torch_seed
from sgbench.bench.running.sampler_fault import defined_at
from sgbench.bench.wrappers import _common as wrap, _torch_chains as chains


def torch_step(step: Callable, *, init: Callable | None = None, position: Callable | None = None,
               per_chain: bool = False, step_size: str | None = None, name: str | None = None,
               temperature: str | None = None, claims: str | None = None, translate: Callable | None = None,
               citation: str = ""):
    """The suite's sampler of ``step`` (module docstring).

    ``step_size``, ``name``, ``temperature``, ``claims``, ``translate`` and ``citation`` are every wrapper's
    (``sgbench.bench.wrappers``).

    Args:
        step: ``step(generator, state, grad_log_density, **hyperparameters) -> state``.
        init: ``init(position, **hyperparameters) -> state`` (default: the state is the position).
        position: ``position(state) -> tensor`` (default: the state, or its ``position`` attribute).
        per_chain: run one chain at a time (for a step that is not elementwise over the rows).

    Returns:
        an ``AdaptedSampler`` run by the batched driver (the NumPy driver with ``per_chain``).
    """
    torch = chains.torch_or_say("torch_step")

    name = name or getattr(step, "__name__", "step")
    names = wrap.keywords(step, 3, f"torch_step: {name}")
    init_names = [] if init is None else list(wrap.keywords(init, 1, f"torch_step: init of {name}"))
    Params = wrap.hyperparameter_class(name, names, step_size)
    read = wrap.position_reader(position, init or step, "torch_step")

    def initial(x, params):
        start = torch.from_numpy(np.array(x, dtype=np.float64))
        return start if init is None else init(start, **wrap.values(params, init_names))

    def advance(inner, gradient_of, seed, params):
        generator = torch.Generator().manual_seed(torch_seed(np.reshape(seed, (-1, 2))[0]))
        return step(generator, inner, gradient_of, **wrap.values(params, names))

    def trial(x, params, gradient, steps):
        inner = initial(x, params)
        for index in range(steps):
            inner = advance(inner, gradient, np.array([index, 1]), params)
        return read(inner)

    def start(x, params):
        chains.coupling(lambda y, density, steps: trial(y, params, density.gradient, steps), x,
                        f"give torch_step({name}, per_chain=True)", defined_at(step))
        inner = initial(x, params)
        return wrap.State(read(inner).detach().numpy().copy(), chains.Box(inner))

    def one_step(state, grad_fn, draws, params):
        gradient = chains.TensorGradient(grad_fn)
        inner = advance(state.inner.content, gradient, draws["seed"], params)
        position = read(inner).detach().numpy().copy()
        return wrap.State(position, chains.Box(inner)), samplers.Info(num_grad_evals=gradient.calls)

    return wrap.wrapped(name, citation or f"{name} (a torch step, wrapped)", Params, start, one_step, temperature,
                        claims, translate, (init or step, step), backend="numpy" if per_chain else "batched")
