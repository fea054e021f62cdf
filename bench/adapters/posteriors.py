r"""posteriors' SGMCMC updates under the suite's batched and NumPy drivers, in float64.

``sgld``, ``sghmc``, ``sgnht``, ``baoa`` and ``sglrw`` call ``posteriors.sgmcmc.<name>.update`` (and
``init`` for the momenta) unchanged. The ``batch`` posteriors passes to ``log_posterior(params, batch)``
is the step's oracle (one gradient evaluation per step for every adapter), and torch's global generator
is seeded from the step's ``seed`` draw (the first chain's, when all chains step at once), so runs are
reproducible, but the variates are torch's.

posteriors' SGLD, SGLRW, SGHMC and BAOA map every coordinate on its own, so their adapters step all chains in one
call (``backend="batched"``: positions of shape (chains, dim), each chain's gradient from its own minibatch); SGNHT's
thermostat averages the kinetic energy over all coordinates, so its adapter steps one chain at a time (NumPy
driver), lest the chains share one thermostat.

**Convention** (posteriors ``docs/log_posteriors.md``): posteriors sees :math:`\ell = \log p/N` with
``num_data`` :math:`N` (default 1) and ``temperature`` :math:`\tau` (default :math:`1/N`); the suite's
temperature is :math:`T = N\tau`. With ``lr`` :math:`\epsilon`, momentum scale ``sigma`` :math:`\sigma` and
friction ``alpha`` :math:`\alpha`, each adapter is the suite's sampler (``to_reference``) at:

- ``sgld``, ``sglrw``: step size :math:`h = \epsilon/N` (the standard convention), exactly;
- ``sghmc``: the Chen form with ``integrator="explicit_euler"``, :math:`h = \epsilon^2/(\sigma^2 N)`, friction
  :math:`\epsilon\alpha/\sigma^2`;
- ``sgnht``: explicit Euler with the thermostat reading the old momentum, a discretisation the suite's ``sgnht``
  (semi-implicit) does not have: it claims no suite sampler and is held to truth alone;
- ``baoa``: ``sghmc`` with ``integrator="splitting"``, the same :math:`h` and friction (posteriors
  computes the friction in float32).

The momenta start as posteriors' ``init`` makes them, :math:`\mathcal N(0, 1)` per coordinate whatever
:math:`\tau` and :math:`\sigma`.

Conventions line by line and notes: docs/tutorial.md, section sgbench.bench.adapters.posteriors.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import torch

with warnings.catch_warnings():  # tensordict 0.15 warns once per posteriors state class (a TensorClass default)
    warnings.simplefilter("ignore", FutureWarning)
    from posteriors.sgmcmc import (
        baoa as ps_baoa,
        sghmc as ps_sghmc,
        sgld as ps_sgld,
        sglrw as ps_sglrw,
        sgnht as ps_sgnht,
    )

from sgbench.base.arguments import in_interval, positive_finite
from sgbench.bench.adapters._adapted import AdaptedSampler, Setting
from sgbench.bench.adapters._seeds import seed_variate, torch_seeded
from sgbench.bench.adapters._torch_density import as_array, as_tensor, log_posterior
from sgbench.samplers._contract import Info, hyperparameters
from sgbench.samplers._hamiltonian import State as MomentumState
from sgbench.samplers._langevin import State as LangevinState, init as langevin_init
from sgbench.samplers.sgnht import State as SGNHTState, init as sgnht_init

LIBRARY = "posteriors"


def draw_spec(dim: int, params=None) -> dict:
    """One seed per step for torch's generator."""
    return {"seed": seed_variate()}


def suite_temperature(params) -> float:
    """The suite's temperature T = N tau of posteriors' ``temperature`` tau and ``num_data`` N."""
    return params.num_data * params.temperature


adapter = functools.partial(AdaptedSampler.build, library=LIBRARY, backend="batched", draw_spec=draw_spec,
                            temperature=suite_temperature)


def update(library, state_class, state, grad_fn, draws, params, *state_fields, **options):
    """posteriors' ``library.update`` (seeded) from the adapter's ``state``: ``state_class(position,
    [momenta,] *state_fields, step)``, the momenta made by ``library.init`` in the first step; the
    log posterior is the oracle's divided by ``num_data``. Returns posteriors' new state."""
    target = functools.partial(log_posterior, scale=1 / params.num_data)
    with torch_seeded(draws["seed"]):
        position = as_tensor(state.position)
        momenta = ()
        if "momentum" in state._fields:
            momenta = (library.init(position, momenta=params.initial_momenta).momenta if state.step == 0
                       else as_tensor(state.momentum),)
        previous = state_class(position, *momenta, *state_fields, step=torch.tensor(state.step))
        new, _ = library.update(previous, grad_fn, target, lr=params.lr, temperature=params.temperature, **options)
    return new


def _positive(params, *names) -> None:
    for name in names:
        object.__setattr__(params, name, positive_finite(name, getattr(params, name)))


def _non_negative(params, name) -> None:
    object.__setattr__(params, name, in_interval(name, getattr(params, name), 0.0, math.inf, high_open=True))


@hyperparameters
class LangevinParams:
    """posteriors' ``lr`` > 0, ``temperature`` > 0 (None: 1/num_data) and the adapter's ``num_data``
    N > 0 (1): posteriors sees the suite's log density divided by N."""

    lr: float
    num_data: float = 1.0
    temperature: Any = None

    def __post_init__(self):
        _positive(self, "lr", "num_data")
        temperature = 1 / self.num_data if self.temperature is None else self.temperature
        object.__setattr__(self, "temperature", positive_finite("temperature", temperature))


def suite_scale(params: LangevinParams) -> dict:
    """The suite's step size and temperature of one Langevin or lattice step: h = lr / N, T = N tau."""
    return {"step_size": params.lr / params.num_data, "temperature": suite_temperature(params)}


# --- SGLD and SGLRW ----------------------------------------------------------------------------------------------


@hyperparameters
class SGLDParams(LangevinParams):
    """``LangevinParams`` and posteriors' gradient-noise estimate ``beta`` >= 0 (0)."""

    beta: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        _non_negative(self, "beta")
        if self.lr * self.temperature * self.beta > 2:
            raise ValueError("beta is too large: posteriors' noise variance needs 2 - lr * temperature * beta >= 0")


def sgld_step(state: LangevinState, grad_fn, draws, params: SGLDParams):
    new = update(ps_sgld, ps_sgld.SGLDState, state, grad_fn, draws, params, beta=params.beta)
    return LangevinState(as_array(new.params), state.step + 1), Info(num_grad_evals=1)


def sgld_reference(params: SGLDParams) -> dict:
    if params.beta != 0:
        raise ValueError("the suite's sgld has no gradient-noise correction: beta must be 0 to translate")
    return suite_scale(params)


sgld = adapter(
    name="posteriors:sgld", citation="posteriors 0.1.3 posteriors.sgmcmc.sgld (Welling & Teh 2011)",
    step=sgld_step, Params=SGLDParams, State=LangevinState, init=langevin_init,
    claims="sgld", translate=sgld_reference,
    settings=(Setting("lr = 0.02", {"lr": 0.02}, probes="the step-size convention"),
              Setting("tau = 0.05, N = 10 (T = 0.5)", {"lr": 0.1, "num_data": 10.0, "temperature": 0.05},
                      probes="posteriors' log density / N and temperature convention at T != 1")))


def sglrw_step(state: LangevinState, grad_fn, draws, params: LangevinParams):
    new = update(ps_sglrw, ps_sglrw.SGLRWState, state, grad_fn, draws, params)
    return LangevinState(as_array(new.params), state.step + 1), Info(num_grad_evals=1)


sglrw = adapter(
    name="posteriors:sglrw", citation="posteriors 0.1.3 posteriors.sgmcmc.sglrw (the SGLRW paper)",
    step=sglrw_step, Params=LangevinParams, State=LangevinState,
    init=langevin_init, claims="sglrw", translate=suite_scale,
    settings=(Setting("lr = 0.02", {"lr": 0.02}, probes="the lattice step's probabilities"),
              Setting("T = 0.5", {"lr": 0.02, "temperature": 0.5}, probes="the temperature in the move probabilities")))


# --- momentum samplers: BAOA, SGHMC, SGNHT -----------------------------------------------------------------------


@hyperparameters
class BAOAParams(LangevinParams):
    """``LangevinParams``; posteriors' friction ``alpha`` > 0 (0.01), momentum scale ``sigma`` > 0 (1) and
    ``initial_momenta`` (None: posteriors' ``init`` draws N(0, 1); a number: every momentum starts there)."""

    alpha: float = 0.01
    sigma: float = 1.0
    initial_momenta: Any = None

    def __post_init__(self):
        super().__post_init__()
        _positive(self, "alpha", "sigma")
        if self.initial_momenta is not None:
            object.__setattr__(self, "initial_momenta", in_interval("initial_momenta", self.initial_momenta,
                                                                    -math.inf, math.inf, True, True))


def hamiltonian_scale(params: BAOAParams) -> dict:
    """The suite's Chen form: step size h = lr^2 / (sigma^2 N), per-step friction lr alpha / sigma^2, T = N tau."""
    return {"form": "chen", "step_size": params.lr**2 / (params.sigma**2 * params.num_data),
            "friction": params.lr * params.alpha / params.sigma**2, "temperature": suite_temperature(params)}


def momentum_init(position, params) -> MomentumState:
    """The momenta are made by posteriors' ``init`` in the first step (``init`` here takes no seed)."""
    return MomentumState(position, 0 * position, 0)


def baoa_step(state: MomentumState, grad_fn, draws, params: BAOAParams):
    new = update(ps_baoa, ps_baoa.BAOAState, state, grad_fn, draws, params, alpha=params.alpha, sigma=params.sigma)
    return MomentumState(as_array(new.params), as_array(new.momenta), state.step + 1), Info(num_grad_evals=1)


def baoa_reference(params: BAOAParams) -> dict:
    return {**hamiltonian_scale(params), "integrator": "splitting"}


_INITIAL_MOMENTA = ("the momenta start as posteriors' init makes them (N(0, 1) in its units, N(0, lr^2/sigma^4) in "
                    "the reference's, whatever the temperature), the reference's at 0")

baoa = adapter(
    name="posteriors:baoa", citation="posteriors 0.1.3 posteriors.sgmcmc.baoa (Leimkuhler & Matthews 2015)",
    step=baoa_step, Params=BAOAParams, State=MomentumState, init=momentum_init,
    claims="sghmc", translate=baoa_reference,
    settings=(Setting("lr = 0.1, alpha = 1", {"lr": 0.1, "alpha": 1.0}, probes="the BAOA splitting"),
              Setting("T = 0.5, alpha = 10", {"lr": 0.1, "alpha": 10.0, "temperature": 0.5},
                      probes="a large friction at T != 1")),
    differences="the cycle starts with a kick (B A O A; the reference's A O A B), so the momenta differ by one kick "
                "while the positions agree in law; posteriors rounds exp(-alpha lr / sigma^2) and the noise scale to "
                "float32; " + _INITIAL_MOMENTA)


@hyperparameters
class SGHMCParams(BAOAParams):
    """``BAOAParams`` and posteriors' gradient-noise estimate ``beta`` >= 0 (0), with
    2 alpha - temperature lr beta >= 0."""

    beta: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        _non_negative(self, "beta")
        if 2 * self.alpha - self.temperature * self.lr * self.beta < 0:
            raise ValueError("beta is too large: posteriors' noise variance needs "
                             "2 * alpha - temperature * lr * beta >= 0")


def sghmc_step(state: MomentumState, grad_fn, draws, params: SGHMCParams):
    new = update(ps_sghmc, ps_sghmc.SGHMCState, state, grad_fn, draws, params, alpha=params.alpha, beta=params.beta,
                 sigma=params.sigma)
    return MomentumState(as_array(new.params), as_array(new.momenta), state.step + 1), Info(num_grad_evals=1)


def sghmc_reference(params: SGHMCParams) -> dict:
    return {**hamiltonian_scale(params), "integrator": "explicit_euler",
            "noise_estimate": params.beta * suite_temperature(params)**2}


sghmc = adapter(
    name="posteriors:sghmc", citation="posteriors 0.1.3 posteriors.sgmcmc.sghmc (Chen et al. 2014)",
    step=sghmc_step, Params=SGHMCParams, State=MomentumState, init=momentum_init,
    claims="sghmc", translate=sghmc_reference,
    settings=(Setting("lr = 0.1, alpha = 1", {"lr": 0.1, "alpha": 1.0}, probes="the explicit Euler scheme"),
              Setting("T = 0.5, sigma = 2", {"lr": 0.2, "alpha": 2.0, "sigma": 2.0, "temperature": 0.5},
                      probes="the momentum scale sigma and T != 1")),
    differences=_INITIAL_MOMENTA)


@hyperparameters
class SGNHTParams(SGHMCParams):
    """``SGHMCParams`` (``alpha`` is the diffusion) and ``initial_thermostat`` >= 0 (None: ``alpha``)."""

    initial_thermostat: Any = None

    def __post_init__(self):
        super().__post_init__()
        initial = self.alpha if self.initial_thermostat is None else self.initial_thermostat
        object.__setattr__(self, "initial_thermostat",
                           in_interval("initial_thermostat", initial, 0.0, math.inf, high_open=True))


def sgnht_step(state: SGNHTState, grad_fn, draws, params: SGNHTParams):
    new = update(ps_sgnht, ps_sgnht.SGNHTState, state, grad_fn, draws, params, as_tensor(state.thermostat),
                 alpha=params.alpha, beta=params.beta, sigma=params.sigma)
    return (SGNHTState(as_array(new.params), as_array(new.momenta), float(new.xi), state.step + 1),
            Info(num_grad_evals=1))


sgnht = adapter(
    name="posteriors:sgnht", citation="posteriors 0.1.3 posteriors.sgmcmc.sgnht (Ding et al. 2014)",
    step=sgnht_step, Params=SGNHTParams, State=SGNHTState, init=sgnht_init, method="sgnht", backend="numpy",
    settings=(Setting("lr = 0.1, alpha = 1", {"lr": 0.1, "alpha": 1.0}, probes="the thermostat at T = 1"),
              Setting("T = 0.5", {"lr": 0.1, "alpha": 1.0, "temperature": 0.5},
                      probes="the thermostat's target kinetic energy at T != 1")),
    differences="explicit Euler: the position and the thermostat read the old momentum (the suite's sgnht, "
                "semi-implicit, reads the new one in both, so no suite sampler is claimed); " + _INITIAL_MOMENTA)
