r"""blackjax 1.7.1's SGMCMC and MCLMC kernels under the suite's JAX driver (jit, vmap, scan).

``sgld``, ``sghmc``, ``sgnht`` and ``mclmc`` call blackjax's own ``build_kernel`` unchanged. The
gradient comes from the suite's oracle (the ``grad_estimator(position, minibatch)`` blackjax calls is
``grad_fn(position)``; MCLMC differentiates a ``jax.custom_jvp`` log density whose value and gradient are
``grad_fn.value_and_grad``), and blackjax's PRNG key is made from the step's ``seed`` draw, so the suite
cannot feed shared draws to it. With blackjax's ``step_size`` :math:`\epsilon`, temperature :math:`T`,
:math:`g` the oracle's gradient of the log density and :math:`\xi` standard normal, each adapter is the
suite's sampler (``to_reference``) at:

- ``sgld``: :math:`x' = x + \epsilon g(x) + \sqrt{2T\epsilon}\,\xi`, the suite's standard convention
  with ``step_size`` :math:`h = \epsilon`;
- ``sghmc``: the Chen form with ``integrator="explicit_euler"``, :math:`h = \epsilon^2`, friction
  :math:`\alpha\epsilon`, ``noise_estimate`` :math:`\beta T^2`, ``refresh_every`` :math:`L`; but :math:`L`
  gradient evaluations on one minibatch per call, and a refresh from :math:`\mathcal N(0, 1)` whatever :math:`T`;
- ``sgnht``: explicit Euler (position and thermostat from the old momentum... see its ``differences``), a
  discretisation the suite's ``sgnht`` (semi-implicit) does not have: it claims no suite sampler and is held to
  truth alone;
- ``mclmc``: blackjax's MCLMC kernel, (len(coefficients) - 1) / 2 gradient evaluations per step; its
  non-finite steps are reverted, and the adapter counts them in ``State.nan_steps``.

float32 chains: blackjax returns float64 noise under JAX's 64-bit mode; the adapters round the state
back to the chain's dtype (SGHMC runs on a float64 copy of the position).

Conventions line by line and notes: docs/tutorial.md, section sgbench.bench.adapters.blackjax.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import blackjax.mcmc.integrators as bj_integrators
import blackjax.mcmc.mclmc as bj_mclmc
import blackjax.sgmcmc.csgld as bj_csgld
import blackjax.sgmcmc.sghmc as bj_sghmc
import blackjax.sgmcmc.sgld as bj_sgld
import blackjax.sgmcmc.sgnht as bj_sgnht
import jax
import jax.numpy as jnp
from blackjax.util import generate_unit_vector

from sgbench.base.arguments import finite, in_interval, integer_at_least, one_of, positive_finite
from sgbench.bench.adapters._adapted import (
    EXTERNAL_STEPS,
    EXTERNAL_STEPS_FACTOR,
    EXTERNAL_TARGETS,
    AdaptedSampler,
    Setting,
)
from sgbench.bench.adapters._log_density import logdensity_of
from sgbench.bench.adapters._seeds import jax_key, seed_variate
from sgbench.samplers._contract import Info, hyperparameters, static_field
from sgbench.samplers._langevin import State as LangevinState, init as langevin_init
from sgbench.samplers.sgnht import State as SGNHTState, init as sgnht_init

LIBRARY = "blackjax"


def draw_spec(dim: int, params=None) -> dict:
    """One seed per step for blackjax's PRNG key."""
    return {"seed": seed_variate()}


adapter = functools.partial(AdaptedSampler.build, library=LIBRARY, backend="jax", draw_spec=draw_spec)


def grad_estimator(position, oracle):
    """blackjax's ``grad_estimator(position, minibatch)``, the minibatch being the step's oracle."""
    return oracle(position)


def like(new, old):
    """``new`` in the dtype of ``old``. blackjax's ``generate_gaussian_noise`` returns float64 noise for a
    float32 position when JAX's 64-bit mode is on (``linear_map`` promotes with the float64 scalar
    sigma = 1.0), and the suite always runs in that mode: without the cast a float32 chain's position
    would turn float64 after one step (``lax.scan`` refuses the changed carry)."""
    return jnp.asarray(new).astype(jnp.asarray(old).dtype)


def _positive_fields(params, *names):
    for name in names:
        object.__setattr__(params, name, positive_finite(name, getattr(params, name)))


# --- SGLD --------------------------------------------------------------------------------------------------------


@hyperparameters
class SGLDParams:
    """blackjax's ``step_size`` :math:`\\epsilon` > 0 and ``temperature`` > 0."""

    step_size: float
    temperature: float = 1.0

    def __post_init__(self):
        _positive_fields(self, "step_size", "temperature")


def sgld_step(state: LangevinState, grad_fn, draws, params: SGLDParams):
    position = bj_sgld.build_kernel()(jax_key(draws["seed"]), state.position, grad_estimator, grad_fn,
                                      params.step_size, params.temperature)
    return LangevinState(like(position, state.position), state.step + 1), Info(num_grad_evals=1)


def sgld_reference(params: SGLDParams) -> dict:
    return {"step_size": params.step_size, "temperature": params.temperature}


sgld = adapter(
    name="blackjax:sgld", citation="blackjax 1.7.1 blackjax.sgmcmc.sgld (Welling & Teh 2011)",
    step=sgld_step, Params=SGLDParams, State=LangevinState, init=langevin_init,
    claims="sgld", translate=sgld_reference,
    settings=(Setting("h = 0.02", {"step_size": 0.02}, probes="the step-size convention (Welling & Teh's h/2 would "
                      "halve the drift)"),
              Setting("T = 0.5, h = 0.01", {"step_size": 0.01, "temperature": 0.5},
                      probes="the temperature scales the injected noise only"),
              Setting("external targets", dict(EXTERNAL_STEPS), EXTERNAL_TARGETS,
                      probes="posteriors whose truth others computed (posteriordb), at steps of the same fraction "
                             "of each one's stability limit", steps_factor=EXTERNAL_STEPS_FACTOR)))


# --- SGHMC -------------------------------------------------------------------------------------------------------


@hyperparameters
class SGHMCParams:
    """``step_size`` :math:`\\epsilon` > 0, friction ``alpha`` > 0 (blackjax's default 0.01), gradient-noise
    estimate ``beta`` >= 0 with :math:`2\\alpha - \\epsilon T\\beta \\ge 0`, ``temperature`` > 0 and
    ``num_integration_steps`` :math:`L` >= 1 (blackjax's top-level default 10)."""

    step_size: float
    alpha: float = 0.01
    beta: float = 0.0
    temperature: float = 1.0
    num_integration_steps: int = static_field(10)

    def __post_init__(self):
        _positive_fields(self, "step_size", "alpha", "temperature")
        object.__setattr__(self, "beta", in_interval("beta", self.beta, 0.0, math.inf, high_open=True))
        integer_at_least("num_integration_steps", self.num_integration_steps, 1)
        if 2 * self.alpha - self.step_size * self.temperature * self.beta < 0:
            raise ValueError("beta is too large: the injected noise variance needs "
                             "2 * alpha - step_size * temperature * beta >= 0")


def sghmc_step(state: LangevinState, grad_fn, draws, params: SGHMCParams):
    """blackjax's kernel runs on a position in its noise's dtype: with a float32 position and JAX's 64-bit
    mode its inner ``lax.scan`` would start with a float32 position and float64 momentum (see ``like``) and
    fail on the changed carry, so a float32 chain's L steps run in float64 and the result is rounded."""
    kernel = bj_sghmc.build_kernel(params.alpha, params.beta)
    wide = jnp.promote_types(jnp.asarray(state.position).dtype, jax.dtypes.canonicalize_dtype(jnp.float64))
    position = kernel(jax_key(draws["seed"]), jnp.asarray(state.position, wide), grad_estimator, grad_fn,
                      params.step_size, params.num_integration_steps, params.temperature)
    state = LangevinState(like(position, state.position), state.step + 1)
    return state, Info(num_grad_evals=params.num_integration_steps)


def sghmc_reference(params: SGHMCParams) -> dict:
    eps, temp = params.step_size, params.temperature
    return {"form": "chen", "integrator": "explicit_euler", "step_size": eps**2, "friction": params.alpha * eps,
            "noise_estimate": params.beta * temp**2, "temperature": temp,
            "refresh_every": params.num_integration_steps}


sghmc = adapter(
    name="blackjax:sghmc", citation="blackjax 1.7.1 blackjax.sgmcmc.sghmc (Chen et al. 2014)",
    step=sghmc_step, Params=SGHMCParams, State=LangevinState, init=langevin_init,
    claims="sghmc", translate=sghmc_reference, steps_per_call=lambda params: params.num_integration_steps,
    settings=(Setting("T = 1, alpha = 1, L = 10", {"step_size": 0.1, "alpha": 1.0},
                      probes="the explicit Euler scheme and the momentum refresh every L steps at T = 1"),
              Setting("T = 0.5, alpha = 1, L = 10", {"step_size": 0.1, "alpha": 1.0, "temperature": 0.5},
                      probes="the refreshed momentum's law at T != 1 (it should be N(0, T))"),
              Setting("T = 1, alpha = 5, L = 1", {"step_size": 0.05, "alpha": 5.0, "num_integration_steps": 1},
                      probes="a friction far from 1, a refresh every step")),
    differences="one adapter step is L reference steps (validate runs the reference L times as long), recorded "
                "once, whose L gradients share one minibatch draw; "
                "the refreshed momentum is N(0, 1) in blackjax's units whatever the temperature (the reference's is "
                "N(0, T))")


# --- SGNHT -------------------------------------------------------------------------------------------------------


@hyperparameters
class SGNHTParams:
    """``step_size`` :math:`\\epsilon` > 0, diffusion ``alpha`` > 0 (0.01), ``beta`` >= 0 (0),
    ``temperature`` > 0, ``initial_thermostat`` >= 0 (default ``alpha``, as blackjax's init)."""

    step_size: float
    alpha: float = 0.01
    beta: float = 0.0
    temperature: float = 1.0
    initial_thermostat: Any = None

    def __post_init__(self):
        _positive_fields(self, "step_size", "alpha", "temperature")
        object.__setattr__(self, "beta", in_interval("beta", self.beta, 0.0, math.inf, high_open=True))
        initial = self.alpha if self.initial_thermostat is None else self.initial_thermostat
        object.__setattr__(self, "initial_thermostat",
                           in_interval("initial_thermostat", initial, 0.0, math.inf, high_open=True))


def sgnht_step(state: SGNHTState, grad_fn, draws, params: SGNHTParams):
    """The suite's sgnht state, at momentum 0 from ``init``: blackjax's ``init`` draws it in the first step."""
    init_key, kernel_key = jax.random.split(jax_key(draws["seed"]))
    first = bj_sgnht.init(state.position, init_key, state.thermostat)
    momentum = jnp.where(state.step == 0, first.momentum, state.momentum)
    kernel = bj_sgnht.build_kernel(params.alpha, params.beta)
    new = kernel(kernel_key, bj_sgnht.SGNHTState(state.position, momentum, state.thermostat), grad_estimator,
                 grad_fn, params.step_size, params.temperature)
    state = SGNHTState(like(new.position, state.position), like(new.momentum, state.momentum),
                       like(new.xi, state.thermostat), state.step + 1)
    return state, Info(num_grad_evals=1)


sgnht = adapter(
    name="blackjax:sgnht", citation="blackjax 1.7.1 blackjax.sgmcmc.sgnht (Ding et al. 2014)",
    step=sgnht_step, Params=SGNHTParams, State=SGNHTState, init=sgnht_init, method="sgnht",
    settings=(Setting("T = 1, alpha = 1", {"step_size": 0.1, "alpha": 1.0},
                      probes="the thermostat's fixed point at T = 1 (against truth, with its step ladder)"),
              Setting("T = 0.5, alpha = 1", {"step_size": 0.1, "alpha": 1.0, "temperature": 0.5},
                      probes="the thermostat's target kinetic energy at T != 1")),
    differences="explicit Euler: x' = x + eps p, p' = (1 - xi eps) p + eps g(x) + noise, "
                "xi' = xi + eps (|p'|^2 / d - T) (the position moves with the old momentum; the suite's sgnht, "
                "semi-implicit, moves it with the new one, so no suite sampler is claimed); the momentum starts at "
                "N(0, 1) (blackjax's init)")


# --- MCLMC -------------------------------------------------------------------------------------------------------

INTEGRATORS = {  # name: (blackjax's isokinetic integrator, its coefficients, the suite's mclmc integrator)
    "mclachlan": (bj_integrators.isokinetic_mclachlan, bj_integrators.mclachlan_coefficients, "minimal_norm"),
    "velocity_verlet": (bj_integrators.isokinetic_velocity_verlet, bj_integrators.velocity_verlet_coefficients,
                        "leapfrog"),
    "yoshida": (bj_integrators.isokinetic_yoshida, bj_integrators.yoshida_coefficients, None),
    "omelyan": (bj_integrators.isokinetic_omelyan, bj_integrators.omelyan_coefficients, None),
}


def gradients_per_step(integrator: str) -> int:
    """Gradient evaluations of one step: one per position update of the palindromic scheme
    (coefficients alternate momentum, position, ..., momentum), the first kick reusing the cache."""
    return (len(INTEGRATORS[integrator][1]) - 1) // 2


@hyperparameters
class MCLMCParams:
    """``step_size`` > 0, decoherence length ``L`` in (0, inf] (inf: no refreshment), ``integrator`` in
    ``INTEGRATORS`` (blackjax's default ``"mclachlan"``), ``desired_energy_var`` > 0 (5e-4) and
    ``desired_energy_var_max_ratio`` > 0 (inf: no rejection): a step whose energy change exceeds
    sqrt(dim * ratio * desired_energy_var) is rejected (blackjax's ``handle_high_energy``)."""

    step_size: float
    L: float
    integrator: str = static_field("mclachlan")
    desired_energy_var: float = 5e-4
    desired_energy_var_max_ratio: float = math.inf

    def __post_init__(self):
        _positive_fields(self, "step_size", "desired_energy_var")
        one_of("integrator", self.integrator, INTEGRATORS)
        for name in ("L", "desired_energy_var_max_ratio"):
            object.__setattr__(self, name, in_interval(name, getattr(self, name), 0.0, math.inf, low_open=True))


class MCLMCState(NamedTuple):
    position: Any
    momentum: Any
    logdensity: Any
    gradient: Any
    energy_change: Any  # blackjax's MCLMCInfo.energy_change of the last step
    nan_steps: Any  # steps blackjax replaced by the previous state because they were not finite
    step: Any


def mclmc_init(position, params: MCLMCParams) -> MCLMCState:
    """The momentum is drawn in the first step as blackjax's ``init`` draws it; ``prime`` fills in the
    cached log density and gradient."""
    if position.shape[-1] < 2:
        raise ValueError("blackjax's MCLMC needs a target of dimension >= 2")
    zero = position.sum() * 0
    return MCLMCState(position, 0 * position, zero, 0 * position, zero, 0, 0)


def mclmc_prime(state: MCLMCState, oracle) -> MCLMCState:
    """The log density and gradient at the start (one evaluation), as blackjax's ``init`` computes them."""
    logdensity, gradient = oracle.value_and_grad(state.position)
    return state._replace(logdensity=logdensity, gradient=gradient)


def mclmc_step(state: MCLMCState, grad_fn, draws, params: MCLMCParams):
    init_key, kernel_key = jax.random.split(jax_key(draws["seed"]))
    momentum = jnp.where(state.step == 0, generate_unit_vector(init_key, state.position), state.momentum)
    kernel = bj_mclmc.build_kernel(integrator=INTEGRATORS[params.integrator][0],
                                   desired_energy_var_max_ratio=params.desired_energy_var_max_ratio,
                                   desired_energy_var=params.desired_energy_var)
    previous = bj_integrators.IntegratorState(state.position, momentum, state.logdensity, state.gradient)
    new, info = kernel(kernel_key, previous, logdensity_of(grad_fn), 1.0, params.L, params.step_size)
    state = MCLMCState(new.position, new.momentum, new.logdensity, new.logdensity_grad, info.energy_change,
                       state.nan_steps + jnp.where(info.nonans, 0, 1), state.step + 1)
    return state, Info(num_grad_evals=gradients_per_step(params.integrator))


def mclmc_reference(params: MCLMCParams) -> dict:
    integrator = INTEGRATORS[params.integrator][2]
    if integrator is None:
        raise ValueError(f"the suite's mclmc has no {params.integrator!r} integrator (it has minimal_norm = "
                         "'mclachlan' and leapfrog = 'velocity_verlet')")
    if params.desired_energy_var_max_ratio != math.inf:
        raise ValueError("the suite's mclmc rejects no step: desired_energy_var_max_ratio must be inf to translate")
    return {"step_size": params.step_size, "L": params.L, "integrator": integrator}


mclmc = adapter(
    name="blackjax:mclmc", citation="blackjax 1.7.1 blackjax.mcmc.mclmc (Robnik et al. 2023)",
    step=mclmc_step, Params=MCLMCParams, State=MCLMCState, init=mclmc_init,
    prime=mclmc_prime, claims="mclmc", translate=mclmc_reference,
    settings=(Setting("McLachlan, eps = 0.3, L = 2", {"step_size": 0.3, "L": 2.0},
                      probes="the isokinetic McLachlan integrator and the partial refresh"),
              Setting("velocity Verlet, eps = 0.2, L = 1", {"step_size": 0.2, "L": 1.0,
                                                            "integrator": "velocity_verlet"},
                      probes="the leapfrog integrator, a shorter decoherence length")),
    differences="the momentum starts as a uniform random unit vector (blackjax's init), not at rest; a non-finite "
                "step is replaced by the previous state with a fresh momentum (counted in State.nan_steps), where "
                "the reference lets the driver count it")


# --- Contour SGLD --------------------------------------------------------------------------------------------------
# blackjax.sgmcmc.csgld: contour SGLD (Deng, Lin & Liang 2020). Not the suite's ``csgld``, which is cyclical SGLD
# (Zhang et al. 2020): the suite has no contour SGLD, so this adapter claims nothing.


@hyperparameters
class CSGLDParams:
    r"""blackjax's ``build_kernel`` and kernel arguments (blackjax 1.7.1, ``sgmcmc/csgld.py``):

    - ``step_size`` :math:`\epsilon` > 0: the Langevin step, blackjax's ``step_size_diff``;
    - ``step_size_stoch`` :math:`\omega` in (0, 1]: the stochastic-approximation step (blackjax's default 1e-3;
      above 1 the update could make an entry of ``energy_pdf`` negative);
    - ``zeta`` :math:`\zeta` >= 0: the flattening exponent (blackjax's default 1; 0 is SGLD);
    - ``temperature`` :math:`\tau` > 0;
    - ``num_partitions`` :math:`m` >= 3, a compile-time constant (the length of ``energy_pdf``; blackjax's
      default 512). blackjax's index runs over 1..m-1: entry 0 is never a partition of its own;
    - ``energy_gap`` :math:`\Delta u` > 0 (``build_kernel``'s default 10) and ``min_energy`` :math:`u_0`, finite
      (default 0): partition :math:`i` holds the energies :math:`U` with
      :math:`\lfloor (U - u_0)/\Delta u\rfloor + 1 = i`, clipped to 1..m-1.
    """

    step_size: float
    step_size_stoch: float = 1e-3
    zeta: float = 1.0
    temperature: float = 1.0
    num_partitions: int = static_field(512)
    energy_gap: float = 10.0
    min_energy: float = 0.0

    def __post_init__(self):
        _positive_fields(self, "step_size", "temperature", "energy_gap")
        object.__setattr__(self, "step_size_stoch", in_interval("step_size_stoch", self.step_size_stoch, 0.0, 1.0,
                                                                low_open=True))
        object.__setattr__(self, "zeta", in_interval("zeta", self.zeta, 0.0, math.inf, high_open=True))
        object.__setattr__(self, "min_energy", finite("min_energy", self.min_energy))
        integer_at_least("num_partitions", self.num_partitions, 3)


class CSGLDState(NamedTuple):
    """blackjax's ``ContourSGLDState`` fields and a step counter."""

    position: Any
    energy_pdf: Any  # theta, m non-negative numbers summing to 1 (entry 0 unused as a partition)
    energy_idx: Any  # J, the partition of the position's energy as the last step estimated it (int32)
    step: Any


def csgld_init(position, params: CSGLDParams) -> CSGLDState:
    """blackjax's ``init``: ``energy_pdf`` proportional to m, m-1, ..., 1 and ``energy_idx`` m-1, whatever the
    position (the first step uses the last partition's gradient multiplier); in the position's dtype."""
    state = bj_csgld.init(position, params.num_partitions)
    dtype = jnp.asarray(position).dtype
    return CSGLDState(position, jnp.asarray(state.energy_pdf, dtype), jnp.int32(state.energy_idx), 0)


def logdensity_estimator(position, oracle):
    """blackjax's ``logdensity_estimator(position, minibatch)``: the oracle's log density, from the step's draw."""
    return oracle.value_and_grad(position)[0]


def csgld_step(state: CSGLDState, grad_fn, draws, params: CSGLDParams):
    """One call of blackjax's kernel. Two oracle evaluations: the gradient at the old position and the log
    density at the new one (blackjax's ``logdensity_estimator``, for the new partition index), both from this
    step's draw, as blackjax evaluates both on one minibatch."""
    kernel = bj_csgld.build_kernel(params.num_partitions, params.energy_gap, params.min_energy)
    previous = bj_csgld.ContourSGLDState(state.position, state.energy_pdf, state.energy_idx)
    new = kernel(jax_key(draws["seed"]), previous, logdensity_estimator, grad_estimator, grad_fn, params.step_size,
                 params.step_size_stoch, params.zeta, params.temperature)
    state = CSGLDState(like(new.position, state.position), like(new.energy_pdf, state.energy_pdf),
                       like(new.energy_idx, state.energy_idx), state.step + 1)
    return state, Info(num_grad_evals=2)


def csgld_log_weight(state: CSGLDState, params: CSGLDParams):
    r"""The log importance weight of ``state``'s position, :math:`\zeta \log\theta_k(J(x_k))` (Deng et al. 2020,
    the weighted averaging estimator :math:`\sum_k \theta_k^\zeta(J(x_k)) f(x_k) / \sum_k \theta_k^\zeta(J(x_k))`):
    ``energy_pdf`` and ``energy_idx`` of the state after the step, the estimate :math:`\theta_k` that the
    position :math:`x_k` has just updated and that position's partition."""
    return params.zeta * jnp.log(state.energy_pdf[state.energy_idx])


U_MIN_ICG = 2 * math.log(2 * math.pi)  # icg's smallest energy -log p (dimension 4, det Sigma = 1): 3.676
# steps_factor 10: the stochastic approximation of energy_pdf settles within the first 20 000 steps at these
# step_size_stoch (reports/csgld: no drift over 20 000 + 20 000 steps), not within the default scale's 2000
CSGLD_SETTINGS = (
    Setting("zeta = 1, T = 1, small step",
            dict(step_size=0.01, step_size_stoch=0.01, zeta=1.0, num_partitions=64, energy_gap=0.5, min_energy=3.5),
            probes="full flattening (zeta = 1, where blackjax's theta(J) gain and the paper's theta^zeta(J) agree); "
                   "the importance weights theta(J) on partitions of 0.5 over the energies 3.5-35; the first partition "
                   "holds icg's minimum energy 3.68 (min_energy just below it, as blackjax's docstring asks), so its "
                   "gradient multiplier reads blackjax's unused entry 0; icg's energy estimate carries the gradient "
                   "noise, as a minibatch energy does", steps_factor=10),
    Setting("zeta = 0.75, T = 0.5, moderate step",
            dict(step_size=0.03, step_size_stoch=0.01, zeta=0.75, temperature=0.5, num_partitions=48,
                 energy_gap=0.5, min_energy=3.5),
            probes="zeta != 1, where blackjax's theta(J) gain drives energy_pdf to pi(E)^(1/zeta) (the paper's "
                   "theta^zeta(J) gain: to pi(E)); a temperature below 1 in the multiplier zeta T / energy_gap; a "
                   "moderate step", steps_factor=10),
    Setting("zeta = 0.75, T = 2, moderate step",
            dict(step_size=0.03, step_size_stoch=0.01, zeta=0.75, temperature=2.0, num_partitions=32,
                 energy_gap=2.0, min_energy=3.5),
            probes="a temperature above 1 (energies over 3.5-67) with a coarse partition (energy_gap 2 > zeta T "
                   "ln 2, so partitions never visited keep the positive multiplier 1 - zeta T ln 2 / energy_gap that "
                   "blackjax's initial energy_pdf gives them); a moderate step", steps_factor=10),
)


csgld = adapter(
    name="blackjax:csgld", citation="blackjax 1.7.1 blackjax.sgmcmc.csgld (contour SGLD, Deng, Lin & Liang 2020)",
    step=csgld_step, Params=CSGLDParams, State=CSGLDState, init=csgld_init, log_weight=csgld_log_weight,
    settings=CSGLD_SETTINGS, method="sgld",
    differences="contour SGLD samples a flattened density, pi / Psi^zeta; its draws estimate the target only "
                "weighted by theta^zeta(J(x)) (log_weight). The suite's csgld is cyclical SGLD, another method: "
                "this adapter claims no suite sampler")
