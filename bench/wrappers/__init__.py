"""Wrappers: a sampler as its author wrote it, made a sampler of the suite's contract in a few lines.

JAX, run by the JAX driver (jit, vmap over chains, scan), randomness a JAX key made from the suite's seeded draws:

- :func:`jax_step`: ``step(key, state, grad_log_density, **hyperparameters) -> state``, of a position or of a state
  (any pytree holding a flat position), with an optional ``init(position, **hyperparameters)``;
- :func:`optax_pair`: an optax-style ``make(**hyperparameters) -> (init, update)`` pair that turns gradients into
  updates, ``update(gradient, state, position, key=key) -> (updates, state)``, the position moved by
  ``position + updates``;
- :func:`blackjax_pair`: a blackjax-style ``make(grad_estimator or logdensity_fn, **hyperparameters)`` returning a
  ``SamplingAlgorithm`` or an ``(init, step)`` pair (``blackjax.sgld``, ``blackjax.mclmc``, or the author's own).

torch (the ``torch`` extra), all chains as the rows of one float64 tensor, run by the batched driver, torch's
generator seeded from the suite's draws; an update that couples the rows is refused before the run, naming
``per_chain=True`` (the NumPy driver, one chain at a time):

- :func:`torch_optimizer`: a ``torch.optim.Optimizer`` subclass, the loss the negative log density;
- :func:`torch_step`: ``step(generator, state, grad_log_density, **hyperparameters) -> state``;
- :func:`posteriors_transform`: a posteriors-style ``build(log_posterior, **hyperparameters)`` transform.

Each returns an ``AdaptedSampler`` (``sgbench.bench.adapters``) whose hyperparameters are the author's numeric
keyword arguments (those without a default must be given; flags, None and infinities keep their defaults), its runs
reproducible from ``--seed``. Every wrapper also takes these keywords:

- ``step_size``: the author's name of the step (``"lr"``), which validate's step ladder halves to tell a
  discretisation bias from a wrong sampler; given, the hyperparameter is called ``step_size`` in the suite (default:
  one named ``step_size``, else none, and no ladder);
- ``name``: the sampler's name in verdicts (default: the function's or class's name);
- ``temperature``: the hyperparameter that is the temperature (default: one named ``temperature``, else 1);
- ``claims``: the suite sampler it implements (``sgbench list samplers``), if any, with ``translate(params) ->
  dict`` that sampler's hyperparameters;
- ``citation``: the paper and equations it implements, for the page.

How to use them: docs/quickstart.md.
"""

from sgbench.bench.wrappers.blackjax_pair import blackjax_pair
from sgbench.bench.wrappers.jax_step import jax_step
from sgbench.bench.wrappers.optax_pair import optax_pair
from sgbench.bench.wrappers.posteriors_transform import posteriors_transform
from sgbench.bench.wrappers.torch_optimizer import torch_optimizer
from sgbench.bench.wrappers.torch_step import torch_step

__all__ = ["blackjax_pair", "jax_step", "optax_pair", "posteriors_transform", "torch_optimizer", "torch_step"]
