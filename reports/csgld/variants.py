r"""Variants of ``blackjax:csgld`` for the held-out runs of the weighted check (``heldout.py``) and the findings
(``findings.py``); not part of the suite.

- :func:`paper_kernel`: blackjax 1.7.1's ``csgld.build_kernel`` (``sgmcmc/csgld.py`` lines 56-170) with the two
  lines that differ from Deng, Lin & Liang (2020), Algorithm 1, made as the paper writes them, each switchable:
  the gradient multiplier's lower partition :math:`(J - 1) \vee 1` (``lower="paper"``; blackjax: :math:`J - 1`,
  which reads the unused entry 0 at :math:`J = 1`) and the stochastic-approximation gain
  :math:`\theta_k^\zeta(J(x_{k+1}))` (``gain="zeta"``; blackjax: :math:`\theta_k(J(x_{k+1}))`). Everything else
  is blackjax's code, line for line.
- :func:`adapter_with`: ``blackjax:csgld`` with its step calling such a kernel (same Params, State, init, weights).
- :func:`unweighted`, :func:`wrong_sign`: deliberately wrong uses of the draws (no weights; weights
  :math:`\theta^{-\zeta}`), which the weighted check must fail.
- :func:`midpoint_log_weight`: the weight of the flattening at the middle of the partition,
  :math:`\zeta(\log\theta(J) + \log\theta((J - 1) \vee 1))/2`, instead of the paper's
  :math:`\zeta\log\theta(J)` (the flattening :math:`\Psi_\theta` at the top of the partition): the paper's
  weight is off by :math:`O(\Delta u)` (docs/gates_derivations.md, section "Weighted check").
- :func:`tempered_sgld`: a correct importance sampler with weights that are not constant: blackjax's SGLD kernel
  at temperature 1.5 (draws from :math:`\pi^{1/1.5}`) weighted by :math:`\pi(x)^{1 - 1/1.5}`.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from blackjax.sgmcmc.csgld import ContourSGLDState
from blackjax.sgmcmc.diffusions import overdamped_langevin

from sgbench.bench.adapters import blackjax as bj
from sgbench.bench.adapters._seeds import jax_key
from sgbench.samplers._contract import Info


def paper_kernel(num_partitions=512, energy_gap=10, min_energy=0, lower="paper", gain="zeta"):
    """blackjax's kernel with the paper's lower partition (``lower="paper"``) and gain (``gain="zeta"``);
    ``lower="blackjax"``, ``gain="one"`` give blackjax's lines back."""
    integrator = overdamped_langevin()

    def kernel(rng_key, state, logdensity_estimator, gradient_estimator, minibatch, step_size_diff,
               step_size_stoch=1e-3, zeta=1, temperature=1.0):
        position, energy_pdf, idx = state
        below = jnp.maximum(idx - 1, 1) if lower == "paper" else idx - 1  # paper: (J - 1) v 1
        gradient_multiplier = 1.0 + zeta * temperature * (jnp.log(energy_pdf[idx]) - jnp.log(energy_pdf[below])
                                                          ) / energy_gap
        logprob_grad = gradient_estimator(position, minibatch)
        position = integrator(rng_key, position, jax.tree.map(lambda g: gradient_multiplier * g, logprob_grad),
                              step_size_diff, temperature)
        neg_logprob = -logdensity_estimator(position, minibatch)
        idx = jnp.clip(jax.lax.floor((neg_logprob - min_energy) / energy_gap + 1).astype(jnp.int32), min=1,
                       max=num_partitions - 1)
        energy_pdf_update = -energy_pdf
        energy_pdf_update = energy_pdf_update.at[idx].set(energy_pdf_update[idx] + 1)
        gain_now = energy_pdf[idx] ** zeta if gain == "zeta" else energy_pdf[idx]  # paper: theta_k^zeta(J)
        energy_pdf = energy_pdf + step_size_stoch * gain_now * energy_pdf_update
        return ContourSGLDState(position, energy_pdf, idx)

    return kernel


def adapter_with(name: str, lower: str = "paper", gain: str = "zeta"):
    """``blackjax:csgld`` whose step calls :func:`paper_kernel` with ``lower`` and ``gain``."""

    def step(state, grad_fn, draws, params):
        kernel = paper_kernel(params.num_partitions, params.energy_gap, params.min_energy, lower, gain)
        previous = ContourSGLDState(state.position, state.energy_pdf, state.energy_idx)
        new = kernel(jax_key(draws["seed"]), previous, bj.logdensity_estimator, bj.grad_estimator, grad_fn,
                     params.step_size, params.step_size_stoch, params.zeta, params.temperature)
        state = bj.CSGLDState(bj.like(new.position, state.position), bj.like(new.energy_pdf, state.energy_pdf),
                              bj.like(new.energy_idx, state.energy_idx), state.step + 1)
        return state, Info(num_grad_evals=2)

    return dataclasses.replace(bj.csgld, name=name, optimized_step=step)


def unweighted():
    """``blackjax:csgld`` read without its weights (the flattened draws taken as the target's)."""
    return dataclasses.replace(bj.csgld, name="blackjax:csgld unweighted", log_weight=None)


def wrong_sign():
    """``blackjax:csgld`` weighted by :math:`\\theta^{-\\zeta}(J)` instead of :math:`\\theta^{\\zeta}(J)`."""
    return dataclasses.replace(bj.csgld, name="blackjax:csgld weights of the wrong sign",
                               log_weight=lambda state, params: -bj.csgld_log_weight(state, params))


PAPER = adapter_with("csgld as the paper writes it")  # both lines as in Deng et al. (2020)
LOWER_FIXED = adapter_with("blackjax:csgld with (J-1) v 1", lower="paper", gain="one")
GAIN_FIXED = adapter_with("blackjax:csgld with theta^zeta gain", lower="blackjax", gain="zeta")


def midpoint_log_weight(state, params):
    """zeta (log theta(J) + log theta((J - 1) v 1)) / 2."""
    below = jnp.maximum(state.energy_idx - 1, 1)
    return params.zeta * (jnp.log(state.energy_pdf[state.energy_idx]) + jnp.log(state.energy_pdf[below])) / 2


PAPER_MIDPOINT = dataclasses.replace(PAPER, name="csgld as the paper writes it, midpoint weights",
                                     log_weight=midpoint_log_weight)
SAMPLING_TEMPERATURE = 1.5


def tempered_sgld(target):
    r"""blackjax:sgld run at 1.5 times its ``temperature``, weighted by the exact
    :math:`\pi(x)^{(1 - 1/1.5)/T}` of ``target`` (a target object): the weighted draws follow the target at
    ``temperature`` T."""
    import blackjax.sgmcmc.sgld as bj_sgld

    from sgbench.samplers._langevin import State

    def step(state, grad_fn, draws, params):
        position = bj_sgld.build_kernel()(jax_key(draws["seed"]), state.position, bj.grad_estimator, grad_fn,
                                          params.step_size, SAMPLING_TEMPERATURE * params.temperature)
        return State(bj.like(position, state.position), state.step + 1), Info(num_grad_evals=1)

    def log_weight(state, params):
        return (1 - 1 / SAMPLING_TEMPERATURE) / params.temperature * target.logdensity(state.position)

    return dataclasses.replace(bj.sgld, name="blackjax:sgld at 1.5 T, weighted", optimized_step=step,
                               log_weight=log_weight, claims=None, translate=None)
