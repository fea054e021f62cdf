"""A ``torch.optim.Optimizer`` subclass, wrapped: ``Optimizer(params, **hyperparameters)``, the loss it descends the
negative log density.

Each step sets the parameter's ``grad`` to the suite's stochastic gradient of ``-log p`` (what ``loss.backward()``
would leave there) and calls ``optimizer.step()`` without a closure, under torch's global generator seeded from the
suite's draws (restored after). All chains are the rows of one float64 parameter tensor (``_torch_chains``): an
optimizer whose update couples the rows is refused before the run, in one line naming ``per_chain=True``, which runs
it under the NumPy driver, one optimizer a chain (correct for any optimizer, slower). The hyperparameters are the
constructor's numeric keywords after ``params``; the others (flags, ``betas`` tuples) keep their defaults.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sgbench import samplers
from sgbench.bench.adapters._seeds import torch_seeded
from sgbench.bench.running.sampler_fault import defined_at
from sgbench.bench.wrappers import _common as wrap, _torch_chains as chains


def torch_optimizer(optimizer: type, *, per_chain: bool = False, step_size: str | None = None,
                    name: str | None = None, temperature: str | None = None, claims: str | None = None,
                    translate: Callable | None = None, citation: str = ""):
    """The suite's sampler of ``optimizer`` (module docstring).

    ``step_size``, ``name``, ``temperature``, ``claims``, ``translate`` and ``citation`` are every wrapper's
    (``sgbench.bench.wrappers``).

    Args:
        optimizer: a ``torch.optim.Optimizer`` subclass, ``optimizer(params, **hyperparameters)``.
        per_chain: one optimizer a chain, one chain at a time (for an update that is not elementwise).

    Returns:
        an ``AdaptedSampler`` run by the batched driver (the NumPy driver with ``per_chain``).
    """
    torch = chains.torch_or_say("torch_optimizer")

    name = name or getattr(optimizer, "__name__", "optimizer")
    names = wrap.keywords(optimizer, 1, f"torch_optimizer: {name}")
    Params = wrap.hyperparameter_class(name, names, step_size)
    where = defined_at(getattr(optimizer, "step", optimizer))

    class Optimizer:
        """The parameter tensor of all chains (or of one chain, under the NumPy driver) and its optimizer."""

        def __init__(self, x, params):
            self.tensor = torch.from_numpy(np.array(x, dtype=np.float64)).requires_grad_(True)
            self.optimizer = optimizer([self.tensor], **wrap.values(params, names))

        def step(self, gradient_of, seed):
            with torch_seeded(seed):
                self.tensor.grad = -gradient_of(self.tensor.detach())
                self.optimizer.step()
            return self.tensor.detach()

    def trial(x, params, gradient, steps):
        one = Optimizer(x, params)
        for step in range(steps):
            one.step(gradient, np.array([step, 1]))
        return one.tensor.detach()

    def start(x, params):
        chains.coupling(lambda y, density, steps: trial(y, params, density.gradient, steps), x,
                        f"give torch_optimizer({name}, per_chain=True)", where)
        return wrap.State(np.array(x, dtype=np.float64), chains.Box(Optimizer(x, params)))

    def one_step(state, grad_fn, draws, params):
        gradient = chains.TensorGradient(grad_fn)
        position = state.inner.content.step(gradient, draws["seed"])
        return wrap.State(position.numpy().copy(), state.inner), samplers.Info(num_grad_evals=gradient.calls)

    return wrap.wrapped(name, citation or f"{name} (a torch optimizer, wrapped)", Params, start, one_step,
                        temperature, claims, translate, (optimizer.__init__, optimizer.step),
                        backend="numpy" if per_chain else "batched")
