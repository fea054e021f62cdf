r"""SGMCMCJax 0.2.13's kernels under the suite's JAX driver (jit, vmap, scan).

**What runs.** SGMCMCJax builds each kernel of ``sgmcmcjax.kernels`` from a diffusion of
``sgmcmcjax.diffusions`` (an ``(init_fn, update(i, key, grad, state), get_params)`` triple made by
``sgmcmcjax.diffusion_util``) and a gradient estimator of ``sgmcmcjax.gradient_estimation``. Under JAX 0.10
``sgmcmcjax.kernels``, ``sgmcmcjax.samplers`` and ``sgmcmcjax.util`` cannot be imported: ``util`` imports
``jax.experimental.host_callback`` (removed from JAX; only its tqdm progress bar uses it) and the other two import
``util``. So each adapter recomposes its kernel as ``kernels.py`` does, calling the library's diffusion updates
unchanged (``diffusions`` and ``diffusion_util`` import):

- the Langevin kernel (``_build_langevin_kernel``): the diffusion's update with the gradient at the position, then,
  for a palindrome (a splitting scheme), its second update with the gradient at the new position. The library
  computes each gradient at the end of a step and keeps it for the next; the adapter computes it at the start of
  the step that uses it, on that step's draw (the same law, the draws being independent), and applies a
  palindrome's closing update there too, with the same gradient, so its state's momentum lacks that half kick;
- the SGHMC kernel (``_build_sghmc_kernel``): the momentum redrawn (``resample_momentum``), then ``L`` Langevin
  steps. One adapter step is one of those ``L`` steps (the momentum is redrawn at every step ``t`` with
  ``t mod L = 0``, iteration ``t // L``), so each gradient has its own draw, as each has its own minibatch in the
  library, and every position is recorded (the library's sampler records every ``L``-th);
- the estimators, the suite's oracle in place of the minibatch gradient: standard :math:`\hat g(x)`; control
  variates (CV) :math:`\nabla\log p(\hat x) + \hat g(x) - \hat g(\hat x)`, both :math:`\hat g` on the step's draw,
  the centre :math:`\hat x` and its full-data gradient filled in by ``sgbench.samplers.control_variates.prepare``
  (the MAP, as the library's docstring asks); SVRG, the same about a centre moved to the position, with its
  full-data gradient (the oracle's exact gradient), at each estimate made at the end of an iteration ``i`` with
  ``i mod update_rate = 0``, and its ``init_gradient`` (the full-data gradient, which becomes the centre) in the
  first step.

The library's PRNG key is made from the step's ``seed`` draw, so runs reproduce but the suite cannot feed the
library shared normals; the tests reproduce the library's normals from the key instead
(``tests/test_adapters_sgmcmcjax.py``). Only a constant step size is adapted (the library also takes schedules).

**Gradient evaluations** (``Info.num_grad_evals``): standard estimator 1 per step; CV 2 (at :math:`x` and
:math:`\hat x`, one draw; the full-data gradient at the centre, computed once by ``prepare``, is not counted, as
for the suite's ``sgld_cv``); SVRG 1 in the first step (its ``init_gradient``), then 2, and 3 where the centre
moves (the full-data gradient counts as one evaluation). The library's kernels also make one estimate at the
start, and its last one is never used. No kernel takes more than one estimate per step: SGHMC's ``L`` is the
momentum refresh period.

**Claims and translations.** With the library's ``dt`` (``step_size`` here), :math:`g` the estimator's gradient of
the log density and :math:`\xi` standard normal:

- ``sgld``: :math:`x' = x + dt\,g(x) + \sqrt{2\,dt}\,\xi`: the suite's ``sgld``, standard convention, :math:`h =
  dt` (Welling & Teh's :math:`\epsilon` is :math:`2\,dt`), exactly; ``sgld_cv``: the suite's ``sgld_cv`` likewise;
- ``psgld``: :math:`v' = \alpha v + (1-\alpha) g^2`, :math:`G = 1/(\sqrt{v'} + \epsilon)`,
  :math:`x' = x + \tfrac{dt}{2} G g + \sqrt{dt\,G}\,\xi` (no :math:`\Gamma` term): the suite's ``psgld`` at
  :math:`h = dt/2`, ``smoothing`` :math:`\alpha`, ``epsilon`` :math:`\epsilon`, exactly;
- ``sghmc``: :math:`x' = x + v`, :math:`v' = (1-\alpha) v + dt\,g(x) + \sqrt{2(\alpha-\beta)\,dt}\,\xi`, the
  momentum redrawn from :math:`\mathcal N(0, dt)` every ``L`` steps (Chen et al. 2014, appendix G): the suite's
  ``sghmc``, Chen form, ``integrator="explicit_euler"``, :math:`h = dt`, ``friction`` :math:`\alpha`,
  ``noise_estimate`` :math:`2\beta/dt`, ``refresh_every`` ``L``, exactly; ``sghmc_cv``: the suite's ``sghmc_cv``
  likewise;
- ``sgnht``: :math:`v' = (1-\alpha) v + dt\,g(x) + \sqrt{2a\,dt}\,\xi`, :math:`x' = x + v'`, :math:`\alpha' =
  \alpha + |v'|^2/D - dt` (Ding et al. 2014, Algorithm 1 in Chen's units): the suite's ``sgnht``, Chen form,
  :math:`h = dt`, ``diffusion`` and ``initial_thermostat`` :math:`a`; but the momentum starts at
  :math:`\mathcal N(0, dt)`, drawn in the first step (the reference's at 0); ``sgnht_cv``: the suite's
  ``sgnht_cv`` likewise;
- ``baoab_diffusion``: the diffusion ``baoab`` composed as the Langevin kernel composes a palindrome, B A O A B
  with friction ``gamma`` :math:`\gamma` and ``tau`` (``temperature`` here): the suite's ``sghmc``, practical
  form, ``integrator="splitting"``, :math:`\epsilon = dt`, ``friction`` :math:`\gamma`, temperature :math:`\tau`
  as the library documents it; but its O step adds :math:`\tau\sqrt{1 - e^{-2\gamma\,dt}}\,\xi`, a standard
  deviation :math:`\tau` where Leimkuhler & Matthews have :math:`\sqrt{T}`, so it samples at :math:`\tau^2` (a
  defect: FAILED at :math:`\tau \ne 1`), momentum :math:`r = -(w + dt\,g(x))` of the
  state's :math:`w`;
- no claim (the suite has no such sampler: held to truth and to their own step ladder): ``sgld_svrg`` and
  ``sghmc_svrg`` (the SVRG estimator), ``sgld_adam`` (the library's Adam-preconditioned SGLD),
  ``badodab_diffusion`` (Leimkuhler & Shang's adaptive Langevin, whose thermostat the library writes with
  :math:`|v|` for :math:`|v|^2`), and the kernels as shipped: ``baoab``, ``badodab``, ``badodab_cv``.

**The kernels as shipped.** ``build_baoab_kernel``, ``build_badodab_kernel`` and ``build_badodabCV_kernel`` unpack
their diffusion as ``init_diff, (update_diff1, update_diff1), get_p_diff = baoab(...)`` (``kernels.py`` 383, 419,
457): ``update_diff1`` is bound twice, to the second update, so the kernel composes (B, B): two half kicks per
step, and the position never moves. ``baoab``, ``badodab`` and ``badodab_cv`` reproduce those kernels;
``baoab_diffusion`` and ``badodab_diffusion`` compose the diffusions as the Langevin kernel intends,
(update1, update2).

float32 chains: the library draws float64 normals under JAX's 64-bit mode (and SGNHT's ``lax.cond`` then fails
on a float32 state), so the updates run on a float64 copy and the adapters round the state to the chain's dtype.

Conventions line by line and notes: docs/tutorial.md, section sgbench.bench.adapters.sgmcmcjax.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import sgmcmcjax.diffusions as sgj
from sgmcmcjax.types import SVRGState

from sgbench.base.arguments import in_interval, integer_at_least, positive_finite
from sgbench.bench.adapters._adapted import (
    EXTERNAL_STEPS,
    EXTERNAL_STEPS_FACTOR,
    EXTERNAL_TARGETS,
    AdaptedSampler,
    Setting,
)
from sgbench.bench.adapters._seeds import jax_key, seed_variate
from sgbench.samplers import control_variates
from sgbench.samplers._contract import Info, hyperparameters, static_field

LIBRARY = "sgmcmcjax"
VERSION = "0.2.13"


def draw_spec(dim: int, params=None) -> dict:
    """One seed per step for SGMCMCJax's PRNG key."""
    return {"seed": seed_variate()}


def citation(kernel: str, paper: str) -> str:
    return f"SGMCMCJax {VERSION} sgmcmcjax.kernels.{kernel} ({paper})"


adapter = functools.partial(AdaptedSampler.build, library=LIBRARY, backend="jax", draw_spec=draw_spec)


# --- the state and the library's diffusion state -------------------------------------------------------------------


class State(NamedTuple):
    """An adapter's chain: the library's diffusion state and SVRG state as arrays.

    Attributes:
        position: the chain's position, shape (dim,).
        auxiliary: the diffusion's other fields, in its order: () for SGLD, (v,) for pSGLD's square average and
            SGHMC's and BAOAB's momentum, (m, v) for SGLD-Adam, (v, alpha) for SGNHT's and BADODAB's momentum and
            thermostat. A palindrome's momentum lacks the step's closing half kick, which the next step applies.
        svrg: the estimator's centre and full-data gradient there (the library's ``SVRGState``): empty for the
            standard estimator, fixed for CV, moved by SVRG.
        step: the step counter t.
    """

    position: Any
    auxiliary: tuple
    svrg: SVRGState
    step: Any


def like(new, old):
    """``new`` in the dtype of ``old``: the library's ``random.normal`` is float64 under JAX's 64-bit mode, which the
    suite always runs in, so a float32 chain would turn float64 after one step (``lax.scan`` refuses the change)."""
    return jnp.asarray(new).astype(jnp.asarray(old).dtype)


def wide(x):
    """``x`` in float64 (or wider): the library's updates mix their float64 normals into the state, and SGNHT's
    ``lax.cond`` at iteration 0 then fails on a float32 chain (its branches' momenta differ in dtype), so every
    update runs in float64 and the adapters round the result to the chain's dtype."""
    x = jnp.asarray(x)
    return x.astype(jnp.promote_types(x.dtype, jax.dtypes.canonicalize_dtype(jnp.float64)))


def packed(init_fn, position, auxiliary):
    """The library's ``DiffusionState`` of a single-array position whose diffusion fields are ``(position,
    *auxiliary)`` (in float64, ``wide``): ``init_fn``'s, with its fields replaced (the tree structure is the
    library's own)."""
    return init_fn(position)._replace(packed_state=(tuple(map(wide, (position, *auxiliary))),))


def fields(diffusion_state) -> tuple:
    """``(position, *auxiliary)`` of the library's ``DiffusionState`` of a single-array position."""
    return tuple(diffusion_state.packed_state[0])


# --- the gradient estimators (gradient_estimation.py), the suite's oracle as the minibatch gradient ------------------


class Estimator(NamedTuple):
    """A gradient estimator of ``gradient_estimation.py``.

    Attributes:
        centre: ``centre(position, params)``, the ``SVRGState`` at ``init``: empty (standard), the centre and its
            full-data gradient from ``prepare`` (CV), the start (SVRG, moved in the first step).
        estimate: ``estimate(state, grad_fn, params, iteration)``, the estimate at ``state.position`` that the
            library computes at the end of its ``iteration`` (its ``init_gradient`` at step 0): (gradient,
            SVRGState, gradient evaluations).
    """

    centre: Any
    estimate: Any


def centred_gradient(grad_fn, centre: SVRGState, position):
    """``fb_grad_center + g(x) - g(centre)``, both g on the step's draw (two evaluations)."""
    return control_variates.cv_grad_fn(grad_fn, centre.centering_value, centre.fb_grad_center)(position)


def standard_estimate(state: State, grad_fn, params, iteration):
    """``build_gradient_estimation_fn``: the minibatch gradient, here the step's oracle (one evaluation)."""
    return grad_fn(state.position), state.svrg, 1


def cv_estimate(state: State, grad_fn, params, iteration):
    """``build_gradient_estimation_fn_CV``: the centred gradient about the fixed centre (two evaluations)."""
    return centred_gradient(grad_fn, state.svrg, state.position), state.svrg, 2


def svrg_estimate(state: State, grad_fn, params, iteration):
    """``build_gradient_estimation_fn_SVRG``: at iterations with ``iteration mod update_rate = 0`` the centre moves
    to the position, with its full-data gradient (the oracle's exact gradient), then the centred gradient (2
    evaluations, 3 where the centre moves); at step 0 its ``init_gradient``, the full-data gradient, which
    becomes the centre (1 evaluation)."""
    start = jnp.asarray(state.step == 0)
    moves = start | (iteration % params.update_rate == 0)
    full_data = dataclasses.replace(grad_fn, draw=None)
    centre = jax.lax.cond(
        moves, lambda: SVRGState(state.position, like(full_data(state.position), state.position)), lambda: state.svrg)
    gradient = jax.lax.cond(start, lambda: centre.fb_grad_center,
                            lambda: like(centred_gradient(grad_fn, centre, state.position), state.position))
    return gradient, centre, jnp.where(start, 1, 2 + moves.astype(int))


STANDARD = Estimator(lambda position, params: SVRGState(), standard_estimate)
CONTROL_VARIATES = Estimator(
    lambda position, params: SVRGState(like(params.centre, position), like(params.centre_grad, position)), cv_estimate)
SVRG = Estimator(lambda position, params: SVRGState(position, 0 * position), svrg_estimate)


# --- the kernels (kernels.py), recomposed ---------------------------------------------------------------------------


def initializer(updates, estimator: Estimator):
    """``init`` of a kernel on ``updates`` (Params -> the library's triple) with ``estimator``."""

    def init(position, params) -> State:
        """The chain at ``position``, the diffusion's other fields as its ``init_fn`` makes them (in the position's
        dtype), the estimator's centre, the step counter at 0."""
        if estimator is CONTROL_VARIATES:
            if params.centre is None:
                raise ValueError("centre is required: a vector of the target's dimension (bench.run and "
                                 "Sampler.params_for fill it in from the target's MAP)")
            control_variates.check_dimension(params, position)
        auxiliary = tuple(like(value, position) for value in fields(updates(params)[0](position))[1:])
        return State(position, auxiliary, estimator.centre(position, params), 0)

    return init


def move(state: State, triple, iteration, previous, key, grad_fn, params, estimator: Estimator, auxiliary):
    """One call of ``_build_langevin_kernel``'s kernel (at ``iteration``) from ``(state.position, *auxiliary)``,
    the estimate at the position first: the library computes it at the end of the ``previous`` iteration (its
    ``init_gradient`` at step 0), and a palindrome's closing update of that iteration takes it too. Then the
    diffusion's update with it."""
    init_fn, update, get_params = triple
    first, closing = update if isinstance(update, tuple) else (update, None)
    gradient, svrg, evaluations = estimator.estimate(state, grad_fn, params, previous)
    diffusion_state = packed(init_fn, state.position, auxiliary)
    if closing is not None:  # the previous step's closing half kick (none before the first step)
        diffusion_state = closing(previous, key, jnp.where(state.step > 0, wide(gradient), 0.0), diffusion_state)
    position, *new_auxiliary = fields(first(iteration, key, wide(gradient), diffusion_state))
    new = State(like(position, state.position), tuple(map(like, new_auxiliary, state.auxiliary)), svrg,
                state.step + 1)
    return new, Info(num_grad_evals=evaluations)


def langevin(updates, estimator: Estimator, state: State, grad_fn, draws, params):
    """One step of ``_build_langevin_kernel``'s kernel, iteration ``t``, its key from the step's seed."""
    return move(state, updates(params), state.step, state.step - 1, jax_key(draws["seed"]), grad_fn, params,
                estimator, state.auxiliary)


def hamiltonian(estimator: Estimator, state: State, grad_fn, draws, params):
    """One of the ``L`` Langevin steps of ``_build_sghmc_kernel``'s kernel (iteration ``t // L``), the momentum
    first redrawn by ``resample_momentum`` where ``t mod L = 0``. The seed's key splits as the kernel's does: the
    first half redraws, the second steps."""
    init_fn, update, get_params, resample_momentum = sghmc_updates(params)
    refresh_key, key = jax.random.split(jax_key(draws["seed"]))
    iteration = state.step // params.L
    redrawn = fields(resample_momentum(iteration, refresh_key, packed(init_fn, state.position, state.auxiliary)))[1:]
    refresh = state.step % params.L == 0
    auxiliary = tuple(jnp.where(refresh, like(new, old), old) for new, old in zip(redrawn, state.auxiliary))
    return move(state, (init_fn, update, get_params), iteration, (state.step - 1) // params.L, key, grad_fn, params,
                estimator, auxiliary)


def as_shipped(updates):
    """``updates`` (a palindrome) as ``build_baoab_kernel``, ``build_badodab_kernel`` and
    ``build_badodabCV_kernel`` pass it: ``init_diff, (update_diff1, update_diff1), get_p_diff = diffusion(...)``
    binds ``update_diff1`` to the second update, so the kernel composes (update2, update2)."""

    def shipped(params):
        init_fn, (_, second), get_params = updates(params)
        return init_fn, (second, second), get_params

    return shipped


# --- hyperparameters -------------------------------------------------------------------------------------------------


def positive(params, *names) -> None:
    for name in names:
        object.__setattr__(params, name, positive_finite(name, getattr(params, name)))


def within(params, name: str, low: float, high: float, low_open: bool = False, high_open: bool = False) -> None:
    object.__setattr__(params, name, in_interval(name, getattr(params, name), low, high, low_open, high_open))


@dataclasses.dataclass(frozen=True)
class Centre:
    """The control variate's ``centre`` (the library's ``centering_value``) and ``centre_grad`` (the full-data
    gradient there), added to a base's ``Params`` (``class Params(Centre, BaseParams)``). Both None until
    ``control_variates.prepare`` fills them in from the target's MAP (``bench.run``, ``Sampler.params_for``), so
    that ``to_reference`` translates hyperparameters without them: the claimed sampler's ``prepare`` then finds the
    same MAP (``find_map`` is deterministic and cached per target). Given, they are checked as
    ``control_variates.Centred`` checks them."""

    centre: Any = None
    centre_grad: Any = None

    def __post_init__(self):
        super().__post_init__()
        if self.centre is not None or self.centre_grad is not None:
            control_variates.check_centre(self)


def with_centre(translation: dict, params) -> dict:
    """``translation`` and the centre, where it is filled in."""
    if params.centre is None:
        return translation
    return {**translation, "centre": params.centre, "centre_grad": params.centre_grad}


# --- SGLD, SGLD-CV, SGLD-SVRG ----------------------------------------------------------------------------------------


@hyperparameters
class SGLDParams:
    r"""The library's ``dt`` > 0, named ``step_size``: :math:`x' = x + dt\,g(x) + \sqrt{2\,dt}\,\xi`
    (``diffusions.sgld``; the standard convention, Welling & Teh's :math:`\epsilon = 2\,dt`)."""

    step_size: float

    def __post_init__(self):
        positive(self, "step_size")


@hyperparameters
class SGLDCVParams(Centre, SGLDParams):
    """``SGLDParams`` and the control variate's ``centre`` and ``centre_grad`` (the library's ``centering_value``
    and the full-data gradient there; ``prepare`` fills both in from the target's MAP)."""


@hyperparameters
class SGLDSVRGParams(SGLDParams):
    """``SGLDParams`` and ``update_rate`` >= 1: the SVRG centre moves to the current position, with its full-data
    gradient, at every iteration i with i mod update_rate = 0."""

    update_rate: int = static_field()

    def __post_init__(self):
        super().__post_init__()
        integer_at_least("update_rate", self.update_rate, 1)


def sgld_updates(params):
    return sgj.sgld(params.step_size)


def sgld_step(state: State, grad_fn, draws, params: SGLDParams):
    r"""``build_sgld_kernel``: :math:`x' = x + dt\,g(x) + \sqrt{2\,dt}\,\xi`, g the standard estimator."""
    return langevin(sgld_updates, STANDARD, state, grad_fn, draws, params)


def sgld_cv_step(state: State, grad_fn, draws, params: SGLDCVParams):
    r"""``build_sgldCV_kernel``: the SGLD step with :math:`g(x) = \nabla\log p(\hat x) + \hat g(x) - \hat g(\hat x)`."""
    return langevin(sgld_updates, CONTROL_VARIATES, state, grad_fn, draws, params)


def sgld_svrg_step(state: State, grad_fn, draws, params: SGLDSVRGParams):
    r"""``build_sgld_SVRG_kernel``: the SGLD step with the SVRG estimator
    :math:`g(x) = \nabla\log p(c) + \hat g(x) - \hat g(c)`, the centre c moved to the new position every
    ``update_rate`` iterations."""
    return langevin(sgld_updates, SVRG, state, grad_fn, draws, params)


def sgld_reference(params: SGLDParams) -> dict:
    return {"step_size": params.step_size}


def sgld_cv_reference(params: SGLDCVParams) -> dict:
    return with_centre(sgld_reference(params), params)


SGLD_SETTINGS = (
    Setting("dt = 0.02", {"step_size": 0.02}, "icg,gmm",
            "a moderate step on the Gaussian and the mixture: x + dt g + sqrt(2 dt) xi against the suite's sgld at "
            "h = dt (bias about 0.04 on icg)"),
    Setting("dt = 0.005", {"step_size": 0.005}, "icg",
            "a small step (bias about 0.01): a noise scale off by a constant factor shows as a variance error"),
    Setting("external targets", dict(EXTERNAL_STEPS), EXTERNAL_TARGETS,
            "posteriors whose truth others computed (posteriordb), at steps of the same fraction of each one's "
            "stability limit", steps_factor=EXTERNAL_STEPS_FACTOR),
)

sgld = adapter(
    name="sgmcmcjax:sgld", citation=citation("build_sgld_kernel", "Welling & Teh 2011"), step=sgld_step,
    Params=SGLDParams, State=State, init=initializer(sgld_updates, STANDARD), claims="sgld", translate=sgld_reference,
    settings=SGLD_SETTINGS)

sgld_cv = adapter(
    name="sgmcmcjax:sgld_cv", citation=citation("build_sgldCV_kernel", "Baker et al. 2019"), step=sgld_cv_step,
    Params=SGLDCVParams, State=State, init=initializer(sgld_updates, CONTROL_VARIATES),
    prepare=control_variates.prepare, claims="sgld_cv", translate=sgld_cv_reference,
    settings=(
        Setting("dt = 0.02", {"step_size": 0.02, "linreg:step_size": 1e-3}, "icg,linreg",
                "a moderate step about the MAP: additive noise cancels on icg, minibatch noise does not on linreg"),
        Setting("dt = 0.005", {"step_size": 0.005}, "icg,gmm",
                "a small step; on the mixture the MAP centre sits in one mode, far from half of the mass"),
    ))

sgld_svrg = adapter(
    name="sgmcmcjax:sgld_svrg", citation=citation("build_sgld_SVRG_kernel", "Dubey et al. 2016"),
    step=sgld_svrg_step, Params=SGLDSVRGParams, State=State, init=initializer(sgld_updates, SVRG), method="sgld_cv",
    differences="the suite has no SVRG estimator: held to truth and its own step ladder. The centre's full-data "
                "gradient is the oracle's exact gradient, counted as one evaluation",
    settings=(
        Setting("dt = 0.01, update_rate = 10", {"step_size": 0.01, "update_rate": 10, "linreg:step_size": 1e-3},
                "icg,linreg", "a centre moved often; noise-free steps where it moves"),
        Setting("dt = 0.01, update_rate = 1000", {"step_size": 0.01, "update_rate": 1000}, "icg,gmm",
                "a centre that stays for long stretches, far from the chain on the mixture"),
    ))


# --- pSGLD, SGLD-Adam ------------------------------------------------------------------------------------------------


@hyperparameters
class PSGLDParams(SGLDParams):
    r"""``step_size`` (``dt``) > 0, decay ``alpha`` in [0, 1] (0.99) and ``eps`` > 0 (1e-5):
    :math:`v' = \alpha v + (1-\alpha) g^2`, :math:`G = 1/(\sqrt{v'} + \epsilon)`,
    :math:`x' = x + \tfrac{dt}{2} G g + \sqrt{dt\,G}\,\xi` (``diffusions.psgld``; Li et al. 2016, Algorithm 1
    without :math:`\Gamma`)."""

    alpha: float = 0.99
    eps: float = 1e-5

    def __post_init__(self):
        super().__post_init__()
        within(self, "alpha", 0.0, 1.0)
        positive(self, "eps")


@hyperparameters
class AdamParams(SGLDParams):
    r"""``step_size`` (``dt``) > 0, ``beta1`` and ``beta2`` in [0, 1) (0.9, 0.999), ``eps`` > 0 (1e-8), at
    iteration :math:`i`: :math:`m' = \beta_1 m + (1-\beta_1) g`, :math:`v' = \beta_2 v + (1-\beta_2) g^2`,
    :math:`\hat m = m'/(1-\beta_1^{i+1})`, :math:`\hat v = v'/(1-\beta_2^{i+1})`,
    :math:`\delta = dt/(\sqrt{\hat v} + \epsilon)`, :math:`x' = x + \tfrac{\delta}{2}\hat m + \sqrt{\delta}\,\xi`
    (``diffusions.sgldAdam``)."""

    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def __post_init__(self):
        super().__post_init__()
        within(self, "beta1", 0.0, 1.0, high_open=True)
        within(self, "beta2", 0.0, 1.0, high_open=True)
        positive(self, "eps")


def psgld_updates(params):
    return sgj.psgld(params.step_size, params.alpha, params.eps)


def adam_updates(params):
    return sgj.sgldAdam(params.step_size, params.beta1, params.beta2, params.eps)


def psgld_step(state: State, grad_fn, draws, params: PSGLDParams):
    r"""``build_psgld_kernel``: :math:`v' = \alpha v + (1-\alpha) g^2`, :math:`G = 1/(\sqrt{v'} + \epsilon)`,
    :math:`x' = x + \tfrac{dt}{2} G g + \sqrt{dt\,G}\,\xi`, g the standard estimator."""
    return langevin(psgld_updates, STANDARD, state, grad_fn, draws, params)


def sgld_adam_step(state: State, grad_fn, draws, params: AdamParams):
    r"""``build_sgldAdam_kernel``: :math:`x' = x + \tfrac{\delta}{2}\hat m + \sqrt{\delta}\,\xi` with Adam's
    bias-corrected moments of the standard estimator's g at iteration i = t (``AdamParams``)."""
    return langevin(adam_updates, STANDARD, state, grad_fn, draws, params)


def psgld_reference(params: PSGLDParams) -> dict:
    return {"step_size": params.step_size / 2, "smoothing": params.alpha, "epsilon": params.eps}


psgld = adapter(
    name="sgmcmcjax:psgld", citation=citation("build_psgld_kernel", "Li et al. 2016"), step=psgld_step,
    Params=PSGLDParams, State=State, init=initializer(psgld_updates, STANDARD), claims="psgld",
    translate=psgld_reference,
    settings=(
        Setting("dt = 0.04", {"step_size": 0.04, "linreg:step_size": 2e-3}, "icg,linreg",
                "the suite's h = dt/2 = 0.02 (its gate's step) with alpha = 0.99: a preconditioner that follows the "
                "gradient noise (bias about 0.12 on icg, which halving the step does not remove)"),
        Setting("dt = 0.02, alpha = 0.999, eps = 1e-3", {"step_size": 0.02, "alpha": 0.999, "eps": 1e-3}, "icg",
                "a slowly moving preconditioner (bias below 0.05): the dt/2 drift and dt G noise scales"),
    ))

sgld_adam = adapter(
    name="sgmcmcjax:sgld_adam", citation=citation("build_sgldAdam_kernel", "Coullon & Nemeth 2021, appendix"),
    step=sgld_adam_step, Params=AdamParams, State=State, init=initializer(adam_updates, STANDARD), method="psgld",
    differences="the suite has no Adam-preconditioned SGLD: held to truth and its own step ladder. Its drift is "
                "the running mean of past gradients, not the gradient at x",
    settings=(
        Setting("dt = 0.01", {"step_size": 0.01}, "icg,gmm",
                "the library's defaults (beta1 = 0.9, beta2 = 0.999); bias about 0.1 on icg, which grows as the "
                "step shrinks (the preconditioner follows the chain's path)"),
        Setting("dt = 0.01, beta1 = 0", {"step_size": 0.01, "beta1": 0.0}, "icg",
                "no first-moment averaging: an RMSprop-preconditioned SGLD with bias-corrected averages"),
    ))


# --- SGHMC, SGHMC-CV, SGHMC-SVRG -------------------------------------------------------------------------------------


def check_sghmc(params) -> None:
    positive(params, "step_size")
    integer_at_least("L", params.L, 1)
    within(params, "alpha", 0.0, 2.0, low_open=True, high_open=True)
    within(params, "beta", 0.0, params.alpha)


@hyperparameters
class SGHMCParams:
    r"""``step_size`` (``dt``) > 0, ``L`` >= 1 (the kernel's leapfrog steps: the momentum is redrawn every ``L``
    steps), friction ``alpha`` in (0, 2) (0.01) and the diffusion's gradient-noise estimate ``beta`` in
    [0, alpha] (0; the kernels leave it there): :math:`x' = x + v`,
    :math:`v' = (1-\alpha) v + dt\,g(x) + \sqrt{2(\alpha-\beta)\,dt}\,\xi`, and :math:`v \sim \mathcal N(0, dt)`
    before every ``L``-th step (``diffusions.sghmc``; Chen et al. 2014, appendix G)."""

    step_size: float
    L: int = static_field()
    alpha: float = 0.01
    beta: float = 0.0

    def __post_init__(self):
        check_sghmc(self)


@hyperparameters
class SGHMCCVParams(Centre, SGHMCParams):
    """``SGHMCParams`` and the control variate's ``centre`` and ``centre_grad`` (``prepare``: the MAP)."""


@hyperparameters
class SGHMCSVRGParams:
    """``SGHMCParams``' fields and ``update_rate`` >= 1: the SVRG centre moves at every kernel iteration
    i = t // L with i mod update_rate = 0, so at all L steps of that iteration."""

    step_size: float
    L: int = static_field()
    update_rate: int = static_field()
    alpha: float = 0.01
    beta: float = 0.0

    def __post_init__(self):
        check_sghmc(self)
        integer_at_least("update_rate", self.update_rate, 1)


def sghmc_updates(params):
    return sgj.sghmc(params.step_size, params.alpha, params.beta)


def sghmc_step(state: State, grad_fn, draws, params: SGHMCParams):
    r"""One of the L steps of ``build_sghmc_kernel``: where t mod L = 0, :math:`v \sim \mathcal N(0, dt)`; then
    :math:`x' = x + v`, :math:`v' = (1-\alpha) v + dt\,g(x) + \sqrt{2(\alpha-\beta)\,dt}\,\xi`, g the standard
    estimator."""
    return hamiltonian(STANDARD, state, grad_fn, draws, params)


def sghmc_cv_step(state: State, grad_fn, draws, params: SGHMCCVParams):
    """One of the L steps of ``build_sghmcCV_kernel``: the SGHMC step with the control-variate gradient."""
    return hamiltonian(CONTROL_VARIATES, state, grad_fn, draws, params)


def sghmc_svrg_step(state: State, grad_fn, draws, params: SGHMCSVRGParams):
    """One of the L steps of ``build_sghmc_SVRG_kernel``: the SGHMC step with the SVRG gradient, the centre moved
    at every step of the iterations i = t // L with i mod update_rate = 0."""
    return hamiltonian(SVRG, state, grad_fn, draws, params)


def sghmc_reference(params: SGHMCParams) -> dict:
    return {"form": "chen", "integrator": "explicit_euler", "step_size": params.step_size, "friction": params.alpha,
            "noise_estimate": 2 * params.beta / params.step_size, "refresh_every": params.L}


def sghmc_cv_reference(params: SGHMCCVParams) -> dict:
    return with_centre(sghmc_reference(params), params)


SGHMC_SETTINGS = (
    Setting("dt = 0.001, alpha = 0.05, L = 100", {"step_size": 0.001, "alpha": 0.05, "L": 100}, "icg",
            "small friction: momentum carried over many steps, refreshed every 100 from N(0, dt) (exact-law bias "
            "0.03-0.05 on icg)"),
    Setting("dt = 0.01, alpha = 1, L = 50", {"step_size": 0.01, "alpha": 1.0, "L": 50}, "icg,gmm",
            "friction 1 per step (the momentum forgets itself each step), rare refreshes (bias 0.03-0.04)"),
    Setting("dt = 0.01, alpha = 1.5, beta = 0.01, L = 100", {"step_size": 0.01, "alpha": 1.5, "beta": 0.01, "L": 100},
            "icg", "friction above 1 (the momentum's sign alternates) and beta = dt V / 2 for icg's gradient-noise "
            "variance V = 2: the noise estimate 2 beta / dt"),
)

sghmc = adapter(
    name="sgmcmcjax:sghmc", citation=citation("build_sghmc_kernel", "Chen et al. 2014, appendix G"),
    step=sghmc_step, Params=SGHMCParams, State=State, init=initializer(sghmc_updates, STANDARD), claims="sghmc",
    translate=sghmc_reference, settings=SGHMC_SETTINGS)

sghmc_cv = adapter(
    name="sgmcmcjax:sghmc_cv", citation=citation("build_sghmcCV_kernel", "Baker et al. 2019"), step=sghmc_cv_step,
    Params=SGHMCCVParams, State=State, init=initializer(sghmc_updates, CONTROL_VARIATES),
    prepare=control_variates.prepare, claims="sghmc_cv", translate=sghmc_cv_reference,
    settings=SGHMC_SETTINGS)

sghmc_svrg = adapter(
    name="sgmcmcjax:sghmc_svrg", citation=citation("build_sghmc_SVRG_kernel", "Dubey et al. 2016"),
    step=sghmc_svrg_step, Params=SGHMCSVRGParams, State=State, init=initializer(sghmc_updates, SVRG),
    method="sghmc_cv",
    differences="the suite has no SVRG estimator: held to truth and its own step ladder. As in the library, the "
                "centre moves at every one of the L steps of the iterations it moves in (L full-data gradients)",
    settings=(
        Setting("dt = 0.001, alpha = 0.05, L = 100, update_rate = 10",
                {"step_size": 0.001, "alpha": 0.05, "L": 100, "update_rate": 10}, "icg",
                "small friction; the centre moves at each of 100 steps in every 1000"),
        Setting("dt = 0.01, alpha = 1, L = 100, update_rate = 20",
                {"step_size": 0.01, "alpha": 1.0, "L": 100, "update_rate": 20}, "icg,gmm",
                "friction 1 per step; a centre kept for 1900 steps, far from the chain on the mixture"),
    ))


# --- SGNHT, SGNHT-CV -------------------------------------------------------------------------------------------------


@hyperparameters
class SGNHTParams:
    r"""``step_size`` (``dt``) > 0 and the diffusion ``a`` in (0, 0.5) (0.01), also the initial thermostat:
    :math:`v' = (1-\alpha) v + dt\,g(x) + \sqrt{2a\,dt}\,\xi`, :math:`x' = x + v'`,
    :math:`\alpha' = \alpha + |v'|^2/D - dt`, with :math:`v \sim \mathcal N(0, dt)` drawn in the first step
    (``diffusions.sgnht``; Ding et al. 2014, Algorithm 2). With a >= 1/2 the thermostat's target :math:`dt` lies
    below the momentum's least stationary variance :math:`2a\,dt` and the chain diverges (``samplers/sgnht.py``)."""

    step_size: float
    a: float = 0.01

    def __post_init__(self):
        positive(self, "step_size")
        within(self, "a", 0.0, 0.5, low_open=True, high_open=True)


@hyperparameters
class SGNHTCVParams(Centre, SGNHTParams):
    """``SGNHTParams`` and the control variate's ``centre`` and ``centre_grad`` (``prepare``: the MAP)."""


def sgnht_updates(params):
    return sgj.sgnht(params.step_size, params.a)


def sgnht_step(state: State, grad_fn, draws, params: SGNHTParams):
    r"""``build_sgnht_kernel``: :math:`v' = (1-\alpha) v + dt\,g(x) + \sqrt{2a\,dt}\,\xi`, :math:`x' = x + v'`,
    :math:`\alpha' = \alpha + |v'|^2/D - dt` (the momentum drawn from :math:`\mathcal N(0, dt)` at iteration 0)."""
    return langevin(sgnht_updates, STANDARD, state, grad_fn, draws, params)


def sgnht_cv_step(state: State, grad_fn, draws, params: SGNHTCVParams):
    """``build_sgnhtCV_kernel``: the SGNHT step with the control-variate gradient."""
    return langevin(sgnht_updates, CONTROL_VARIATES, state, grad_fn, draws, params)


def sgnht_reference(params: SGNHTParams) -> dict:
    return {"form": "chen", "step_size": params.step_size, "diffusion": params.a, "initial_thermostat": params.a}


def sgnht_cv_reference(params: SGNHTCVParams) -> dict:
    return with_centre(sgnht_reference(params), params)


SGNHT_DIFFERENCES = "the momentum starts at N(0, dt), drawn in the first step (the reference's at 0)"
SGNHT_SETTINGS = (
    Setting("dt = 0.01, a = 0.05", {"step_size": 0.01, "a": 0.05}, "icg,gmm",
            "Ding et al.'s A = a / sqrt(dt) = 0.5; bias about -0.03 on icg (it grows with a: -0.12 at a = 0.2)"),
    Setting("dt = 0.0025, a = 0.01", {"step_size": 0.0025, "a": 0.01}, "icg",
            "the library's default diffusion, small against the friction the thermostat finds (bias below 0.02)"),
)

sgnht = adapter(
    name="sgmcmcjax:sgnht", citation=citation("build_sgnht_kernel", "Ding et al. 2014, Algorithm 2"),
    step=sgnht_step, Params=SGNHTParams, State=State, init=initializer(sgnht_updates, STANDARD), claims="sgnht",
    translate=sgnht_reference, differences=SGNHT_DIFFERENCES, settings=SGNHT_SETTINGS)

sgnht_cv = adapter(
    name="sgmcmcjax:sgnht_cv", citation=citation("build_sgnhtCV_kernel", "Baker et al. 2019"), step=sgnht_cv_step,
    Params=SGNHTCVParams, State=State, init=initializer(sgnht_updates, CONTROL_VARIATES),
    prepare=control_variates.prepare, claims="sgnht_cv", translate=sgnht_cv_reference,
    differences=SGNHT_DIFFERENCES, settings=SGNHT_SETTINGS)


# --- BAOAB -----------------------------------------------------------------------------------------------------------


@hyperparameters
class BAOABParams:
    r"""``step_size`` (``dt``) > 0, friction ``gamma`` > 0 and the library's "temperature" ``tau`` > 0 (1), named
    ``temperature``: B :math:`v \mathrel{+}= \tfrac{dt}{2} g(x)`, A :math:`x \mathrel{+}= \tfrac{dt}{2} v`,
    O :math:`v \leftarrow e^{-\gamma\,dt} v + \tau\sqrt{1 - e^{-2\gamma\,dt}}\,\xi`, A, then B with the gradient
    at the new position (``diffusions.baoab``; Leimkuhler & Matthews 2013). The O step's :math:`\tau` is a standard
    deviation: the chain samples at temperature :math:`\tau^2`."""

    step_size: float
    gamma: float
    temperature: float = 1.0

    def __post_init__(self):
        positive(self, "step_size", "gamma", "temperature")


def baoab_updates(params):
    return sgj.baoab(params.step_size, params.gamma, params.temperature)


def baoab_step(state: State, grad_fn, draws, params: BAOABParams):
    r"""``build_baoab_kernel`` as shipped: (update2, update2), two half kicks :math:`v \mathrel{+}= \tfrac{dt}{2}g`
    (the cached gradient, then the new one at the same position); the position never moves."""
    return langevin(as_shipped(baoab_updates), STANDARD, state, grad_fn, draws, params)


def baoab_palindrome_step(state: State, grad_fn, draws, params: BAOABParams):
    r"""``diffusions.baoab`` in ``_build_langevin_kernel`` as a palindrome: B A O A with the cached gradient, then
    B with the gradient at the new position (``BAOABParams``)."""
    return langevin(baoab_updates, STANDARD, state, grad_fn, draws, params)


def baoab_reference(params: BAOABParams) -> dict:
    return {"form": "practical", "integrator": "splitting", "step_size": params.step_size, "friction": params.gamma,
            "temperature": params.temperature}


BAOAB_SETTINGS = (
    Setting("dt = 0.1, gamma = 10", {"step_size": 0.1, "gamma": 10.0}, "icg,gmm",
            "large friction (gamma dt = 1) at temperature 1 (bias about 0.01 on icg)"),
    Setting("dt = 0.02, gamma = 0.5", {"step_size": 0.02, "gamma": 0.5}, "icg",
            "small friction: the gradient noise heats the momentum by about dt V / (2 gamma) = 0.04"),
    Setting("dt = 0.05, gamma = 2, tau = 0.5", {"step_size": 0.05, "gamma": 2.0, "temperature": 0.5}, "icg",
            "the library's temperature tau = 0.5, which its O step makes tau^2 = 0.25 (a defect)"),
)

baoab = adapter(
    name="sgmcmcjax:baoab", citation=citation("build_baoab_kernel", "Leimkuhler & Matthews 2013"), step=baoab_step,
    Params=BAOABParams, State=State, init=initializer(baoab_updates, STANDARD), method="sghmc",
    differences="the kernel as shipped composes the second update twice (kernels.py 383): the position never "
                "moves and the momentum grows by dt g(x) per step; no suite sampler does that",
    settings=BAOAB_SETTINGS)

baoab_diffusion = adapter(
    name="sgmcmcjax:baoab_diffusion", citation=f"SGMCMCJax {VERSION} sgmcmcjax.diffusions.baoab in the Langevin kernel "
                                                "(Leimkuhler & Matthews 2013)",
    step=baoab_palindrome_step, Params=BAOABParams, State=State, init=initializer(baoab_updates, STANDARD),
    claims="sghmc", translate=baoab_reference,
    differences="the library's opening half kick from v = 0 makes the first momentum dt/2 g(x0), where the "
                "reference's starts at 0 (the chains agree from the reference's r0 = -dt/2 g(x0)); the state's "
                "momentum w lacks the step's closing half kick, which the next step applies (the reference's "
                "r = -(w + dt g(x))); the reference runs at the temperature tau the library documents, where its O "
                "step's noise makes it tau^2 (a defect, diffusions.py 232)",
    settings=BAOAB_SETTINGS)


# --- BADODAB, BADODAB-CV ---------------------------------------------------------------------------------------------


@hyperparameters
class BADODABParams:
    r"""``step_size`` (``dt``) > 0 and the initial thermostat ``a`` >= 0 (0.01): with :math:`h = dt/2`, B
    :math:`v \mathrel{+}= h g(x)`, A :math:`x \mathrel{+}= h v`, D :math:`\alpha \mathrel{+}= h(|v| - D)`, O
    :math:`v \leftarrow e^{-\alpha\,dt} v + \sqrt{|1 - e^{-2\alpha\,dt}|/(2|\alpha|)}\,\xi`, D, A, then B with the
    gradient at the new position (``diffusions.badodab``; Leimkuhler & Shang 2016 write :math:`|v|^2` in D)."""

    step_size: float
    a: float = 0.01

    def __post_init__(self):
        positive(self, "step_size")
        within(self, "a", 0.0, math.inf, high_open=True)


@hyperparameters
class BADODABCVParams(Centre, BADODABParams):
    """``BADODABParams`` and the control variate's ``centre`` and ``centre_grad`` (``prepare``: the MAP)."""


def badodab_updates(params):
    return sgj.badodab(params.step_size, params.a)


def badodab_step(state: State, grad_fn, draws, params: BADODABParams):
    r"""``build_badodab_kernel`` as shipped: (update2, update2), two half kicks :math:`v \mathrel{+}= \tfrac{dt}{2}g`;
    the position and the thermostat never move."""
    return langevin(as_shipped(badodab_updates), STANDARD, state, grad_fn, draws, params)


def badodab_cv_step(state: State, grad_fn, draws, params: BADODABCVParams):
    """``build_badodabCV_kernel`` as shipped: the two half kicks with the control-variate gradient."""
    return langevin(as_shipped(badodab_updates), CONTROL_VARIATES, state, grad_fn, draws, params)


def badodab_palindrome_step(state: State, grad_fn, draws, params: BADODABParams):
    """``diffusions.badodab`` in ``_build_langevin_kernel`` as a palindrome: B A D O D A with the cached gradient,
    then B with the gradient at the new position (``BADODABParams``)."""
    return langevin(badodab_updates, STANDARD, state, grad_fn, draws, params)


AS_SHIPPED = ("the kernel as shipped composes the second update twice (kernels.py {line}): the position never moves "
              "and the momentum grows by dt g(x) per step. The suite has no adaptive-Langevin sampler: held to truth")
BADODAB_SETTINGS = (
    Setting("dt = 0.05, a = 0.01", {"step_size": 0.05}, "icg,gmm",
            "the library's initial thermostat; its thermostat drives |v| (not |v|^2) to D"),
    Setting("dt = 0.02, a = 1", {"step_size": 0.02, "a": 1.0}, "icg", "a large initial thermostat, a small step"),
)

badodab = adapter(
    name="sgmcmcjax:badodab", citation=citation("build_badodab_kernel", "Leimkuhler & Shang 2016"),
    step=badodab_step, Params=BADODABParams, State=State, init=initializer(badodab_updates, STANDARD),
    method="sgnht",
    differences=AS_SHIPPED.format(line=419), settings=BADODAB_SETTINGS)

badodab_cv = adapter(
    name="sgmcmcjax:badodab_cv", citation=citation("build_badodabCV_kernel", "Leimkuhler & Shang 2016"),
    step=badodab_cv_step, Params=BADODABCVParams, State=State, init=initializer(badodab_updates, CONTROL_VARIATES),
    method="sgnht_cv",
    prepare=control_variates.prepare, differences=AS_SHIPPED.format(line=457), settings=BADODAB_SETTINGS)

badodab_diffusion = adapter(
    name="sgmcmcjax:badodab_diffusion", citation=f"SGMCMCJax {VERSION} sgmcmcjax.diffusions.badodab in the Langevin "
                                                  "kernel (Leimkuhler & Shang 2016)",
    step=badodab_palindrome_step, Params=BADODABParams, State=State, init=initializer(badodab_updates, STANDARD),
    method="sgnht",
    differences="the suite has no adaptive-Langevin sampler: held to truth and its own step ladder; the thermostat "
                "reads |v| - D where Leimkuhler & Shang have |v|^2 - D", settings=BADODAB_SETTINGS)
