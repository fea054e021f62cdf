r"""Planted bugs: realistic mistakes in the samplers, targets and drivers, applied at run time.

A gate is only as good as the bugs it catches (DESIGN.md, tier 5). Each :class:`PlantedBug` is a
mistake someone could make when writing or porting a sampler (a noise scale, a drift factor, a
friction or temperature dropped from one term, a flipped sign or convention, an off-by-one, a
merge formula), planted without editing any file: by wrapping a registered sampler's step
functions (its draws, hyperparameters, gradient oracle or returned state) or by patching a
function of a target or a driver for the duration of a ``with bug.planted():`` block.
``sgbench gate --power`` (:mod:`sgbench.bench.gate.power`) runs each through the gate's cells and the fast
tests and reports which layer catches it.

Each bug says where its effect on a cell's law is exactly zero (``vanishes``: a reason, or None
where the cell's law changes), so a miss is either a cell that cannot see the bug (reported with
that reason) or a power failure.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from sgbench.base.backend import namespace

BOTH = ("reference", "optimized")
ENVIRONMENT_VARIABLE = "SGBENCH_PLANTED_BUG"  # names the bug sgbench.bench.gate.planted_plugin plants in a pytest run


@dataclasses.dataclass(frozen=True)
class PlantedBug:
    """One planted mistake.

    Args:
        name: identifier (``sgbench gate --power --bug NAME``).
        what: the mistake, as its author would have written it.
        samplers: the registered samplers whose cells it can change (``()``: every cell).
        plant: a function returning the context manager that plants it.
        vanishes: ``cell -> reason | None``: why the bug cannot change this cell's law (None: it can).
        tests: pytest arguments of the fast tests that exercise the code it changes.
    """

    name: str
    what: str
    samplers: tuple[str, ...]
    plant: Callable[[], contextlib.AbstractContextManager]
    vanishes: Callable = lambda cell: None
    tests: tuple[str, ...] = ()

    def planted(self) -> contextlib.AbstractContextManager:
        """The context in which the bug is in place."""
        return self.plant()

    def acts_on(self, cell) -> bool:
        """Whether ``cell`` runs code the bug changes (its sampler is one of ``samplers``)."""
        return not self.samplers or cell.sampler in self.samplers


class _TransformedOracle:
    """A gradient oracle whose gradients pass through ``transform`` (values unchanged)."""

    def __init__(self, inner, transform):
        self._inner, self._transform = inner, transform

    def __call__(self, x):
        return self._transform(self._inner(x))

    def value_and_grad(self, x):
        value, grad = self._inner.value_and_grad(x)
        return value, self._transform(grad)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _with(params, **changes):
    """``params`` with ``changes``, bypassing validation (a planted bug may break a range)."""
    changed = copy.copy(params)
    for key, value in changes.items():
        object.__setattr__(changed, key, value)
    return changed


@contextlib.contextmanager
def _patched_steps(names, wrap, backends=BOTH):
    """Replace the registered samplers ``names`` by copies whose ``<backend>_step`` is
    ``wrap(step, xp)`` (xp: ``np`` for the reference, ``jnp`` for the optimized step)."""
    from sgbench import samplers

    samplers.names()  # discover every sampler first
    entries = samplers._REGISTRY._entries
    saved = {name: entries[name] for name in names}
    try:
        for name, sampler in saved.items():
            entries[name] = dataclasses.replace(sampler, **{
                f"{b}_step": wrap(getattr(sampler, f"{b}_step"), np if b == "reference" else jnp) for b in backends})
        yield
    finally:
        entries.update(saved)


@contextlib.contextmanager
def _patched_attribute(owner, name, value):
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def scaled_draw(names, key, factor, backends=BOTH):
    """Plant: the step's variate ``key`` is multiplied by ``factor(params, state, xp)``."""
    def wrap(step, xp):
        def wrapped(state, grad_fn, draws, params):
            return step(state, grad_fn, {**draws, key: factor(params, state, xp) * draws[key]}, params)
        return wrapped
    return lambda: _patched_steps(names, wrap, backends)


def changed_params(names, change, backends=BOTH):
    """Plant: the step sees ``change(params)`` (a dict of altered hyperparameters)."""
    def wrap(step, xp):
        def wrapped(state, grad_fn, draws, params):
            return step(state, grad_fn, draws, _with(params, **change(params)))
        return wrapped
    return lambda: _patched_steps(names, wrap, backends)


def transformed_gradient(names, transform, backends=BOTH):
    """Plant: every gradient the step reads is ``transform(grad, params, state, xp)``."""
    def wrap(step, xp):
        def wrapped(state, grad_fn, draws, params):
            oracle = _TransformedOracle(grad_fn, lambda g: transform(g, params, state, xp))
            return step(state, oracle, draws, params)
        return wrapped
    return lambda: _patched_steps(names, wrap, backends)


def transformed_state(names, before, after, backends=BOTH):
    """Plant: the step sees ``before(state, params)`` and returns ``after(new_state, state, params)``."""
    def wrap(step, xp):
        def wrapped(state, grad_fn, draws, params):
            new_state, info = step(before(state, params), grad_fn, draws, params)
            return after(new_state, state, params), info
        return wrapped
    return lambda: _patched_steps(names, wrap, backends)


# ---------------------------------------------------------------------------------------------
# Where a bug's effect vanishes (cell -> reason or None)


def _param_equals(key, value, default, reason):
    return lambda cell: reason if cell.params.get(key, default) == value else None


def _temperature_one(cell):
    return _param_equals("temperature", 1.0, 1.0, "temperature 1: T and 1 are the same")(cell)


def _no_gradient_noise(cell):
    return "exact gradients: nothing to cancel" if cell.target_params.get("noise") == "none" else None


def _clip_never_binds(cell):
    return None if cell.label == "stiff" else "the clip never binds at this cell's gradients (only the 'stiff' cells)"


def _euler_friction(params):
    """(friction, step) of the Euler injected noise c = step (2 friction T - step beta)."""
    return params.friction, params.step_size


def _euler_only(cell):
    return "the splitting integrator's noise has no 2 gamma T term" if cell.params.get(
        "integrator", "euler") != "euler" else None


def _first(*checks):
    def first(cell):
        for check in checks:
            reason = check(cell)
            if reason:
                return reason
        return None
    return first


# ---------------------------------------------------------------------------------------------
# Patches of shared code


def _cv_sign_flipped():
    from sgbench.samplers import control_variates

    return _patched_attribute(control_variates, "cv_grad_fn",
                              lambda grad_fn, centre, centre_grad: lambda x: centre_grad + grad_fn(x) + grad_fn(centre))


def _cv_centre_gradient_dropped():
    from sgbench.samplers import control_variates

    return _patched_attribute(control_variates, "cv_grad_fn",
                              lambda grad_fn, centre, centre_grad: lambda x: grad_fn(x) - grad_fn(centre))


def _minibatch_unscaled():
    from sgbench.targets.noise.minibatch import MinibatchNoise

    def stochastic_grad(self, x, draw):
        return self.target.grad_log_prior(x) + self.target.grad_log_likelihood(x, draw["indices"])

    return _patched_attribute(MinibatchNoise, "stochastic_grad", stochastic_grad)


def _noise_variance_as_sd():
    from sgbench.targets.noise.isotropic import IsotropicNoise

    return _patched_attribute(IsotropicNoise, "noise", lambda self, x, draw: self.variance * draw["gradient_noise"])


def _merge(weight_swapped=False, cross_term=True):
    from sgbench.reference.metrics.moments import Moments

    def merge(self, other):
        xp = namespace(self.mean)
        count = self.count + other.count
        weight_count = self.count if weight_swapped else other.count
        w = xp.where(count > 0, weight_count / xp.maximum(count, 1), 0.0)[..., None]
        cross = (self.count * other.count / xp.maximum(count, 1))[..., None] * cross_term
        delta, delta_sq = other.mean - self.mean, other.mean_sq - self.mean_sq
        return Moments(count, self.mean + delta * w, self.m2 + other.m2 + delta**2 * cross,
                       self.mean_sq + delta_sq * w, self.m2_sq + other.m2_sq + delta_sq**2 * cross)

    return _patched_attribute(Moments, "merge", merge)


# ---------------------------------------------------------------------------------------------
# The library

_LANGEVIN_TESTS = ("tests/test_equivalence.py", "tests/test_langevin_exact_laws.py")
_HAMILTONIAN_TESTS = ("tests/test_equivalence.py", "tests/test_hamiltonian_exact_laws.py", "tests/test_sgnht.py")
_MICROCANONICAL_TESTS = ("tests/test_equivalence.py", "tests/test_microcanonical.py", "tests/test_smile.py")
_SQRT2 = float(np.sqrt(2.0))


def _tests(files, names):
    return (*files, "-k", " or ".join(names))


def _refresh_variance(params):
    return params.step_size * params.temperature if params.form == "chen" else params.temperature


def _centred_thermostat(new, old, params):
    h = params.step_size_at(old.step, namespace(old.position))
    return new._replace(thermostat=new.thermostat + h * (1.0 - params.temperature))


def _clip(g, bound, xp):
    return xp.clip(g, -bound, bound)


@dataclasses.dataclass(frozen=True)
class _AheadOfItsExploration:
    """A cyclical schedule whose cosine runs half a cycle ahead of the phase that places the
    exploration stage (``phase`` is the original's)."""

    schedule: object

    def phase(self, step, xp=np):
        return self.schedule.phase(step, xp)

    def __call__(self, base, step, xp=np):
        return self.schedule(base, step + self.schedule.cycle_length // 2, xp)


BUGS = (
    PlantedBug("sgld-noise-variance-doubled", "SGLD injects sqrt(4hT) xi instead of sqrt(2hT) xi", ("sgld",),
               scaled_draw(("sgld",), "noise", lambda p, s, xp: _SQRT2), tests=_tests(_LANGEVIN_TESTS, ["sgld"])),
    PlantedBug("sgld-drift-halved", "SGLD's drift h/2 grad (Welling & Teh's factor in the standard convention)",
               ("sgld",), transformed_gradient(("sgld",), lambda g, p, s, xp: 0.5 * g),
               tests=_tests(_LANGEVIN_TESTS, ["sgld"])),
    PlantedBug("sgld-temperature-ignored-in-jax", "SGLD's JAX step injects sqrt(2h) xi whatever T (NumPy is right)",
               ("sgld",), changed_params(("sgld",), lambda p: {"temperature": 1.0}, ("optimized",)),
               _temperature_one, _tests(_LANGEVIN_TESTS, ["sgld"])),
    PlantedBug("sgld-welling-teh-noise", "Welling & Teh's convention halves the drift but keeps sqrt(2 eps T) noise",
               ("sgld",), scaled_draw(("sgld",), "noise",
                                      lambda p, s, xp: _SQRT2 if p.convention == "welling_teh" else 1.0),
               _param_equals("convention", "standard", "standard", "standard convention: the branch is not run"),
               _tests(_LANGEVIN_TESTS, ["sgld"])),
    PlantedBug("sgld-reference-noise-doubled", "SGLD's NumPy reference step injects sqrt(4hT) xi (JAX is right)",
               ("sgld",), scaled_draw(("sgld",), "noise", lambda p, s, xp: _SQRT2, ("reference",)),
               tests=_tests(_LANGEVIN_TESTS, ["sgld"])),
    PlantedBug("psgld-smoothing-flipped", "pSGLD's RMSprop average weights the new g^2 by beta, the old by 1 - beta",
               ("psgld",), changed_params(("psgld",), lambda p: {"smoothing": 1.0 - p.smoothing}),
               _param_equals("smoothing", 0.5, 0.99, "smoothing 0.5: beta = 1 - beta"),
               _tests(_LANGEVIN_TESTS, ["psgld"])),
    PlantedBug("psgld-temperature-ignored-in-numpy", "pSGLD's NumPy reference ignores T (JAX is right)",
               ("psgld",), changed_params(("psgld",), lambda p: {"temperature": 1.0}, ("reference",)),
               _temperature_one, _tests(_LANGEVIN_TESTS, ["psgld"])),
    PlantedBug("cv-sign-flipped", "control variate g(x) + g(c) + grad(c) instead of g(x) - g(c) + grad(c)",
               ("sgld_cv", "sghmc_cv", "sgnht_cv"), _cv_sign_flipped, _no_gradient_noise,
               _tests(_LANGEVIN_TESTS + ("tests/test_control_variates.py",), ["cv"])),
    PlantedBug("cv-centre-gradient-dropped", "control variate g(x) - g(c), without the full gradient at the centre",
               ("sgld_cv", "sghmc_cv", "sgnht_cv"), _cv_centre_gradient_dropped,
               lambda cell: "the centre is the MAP, where the full gradient is 0: every cell's law is unchanged",
               _tests(_LANGEVIN_TESTS + ("tests/test_control_variates.py",), ["cv"])),
    PlantedBug("csgld-schedule-phase", "cyclical SGLD's cosine runs half a cycle ahead of its exploration stage",
               ("csgld",), changed_params(("csgld",), lambda p: {"schedule": _AheadOfItsExploration(p.schedule)}),
               tests=_tests(_LANGEVIN_TESTS + ("tests/test_schedules.py",), ["csgld or cyclical"])),
    PlantedBug("clipped-sgld-clip-radius", "Clipped-SGLD clips the drift at sqrt(hT), not sqrt(2hT)", ("clipped_sgld",),
               transformed_gradient(("clipped_sgld",), lambda g, p, s, xp: _clip(
                   g, xp.sqrt(p.step_size_at(s.step, xp) * p.temperature) / p.step_size_at(s.step, xp), xp)),
               _clip_never_binds, _tests(_LANGEVIN_TESTS, ["clipped"])),
    PlantedBug("sglrw-clip-radius", "SGLRW clips its tilt at 0.8 instead of 1", ("sglrw",),
               transformed_gradient(("sglrw",), lambda g, p, s, xp: _clip(
                   g, 0.8 / xp.sqrt(p.step_size_at(s.step, xp) / (2 * p.temperature)), xp)),
               _clip_never_binds, _tests(_LANGEVIN_TESTS, ["sglrw"])),
    PlantedBug("sghmc-friction-missing-in-noise", "SGHMC (Euler) injects noise of variance 2 step T, no friction",
               ("sghmc", "sghmc_cv"), scaled_draw(("sghmc", "sghmc_cv"), "noise", lambda p, s, xp: xp.sqrt(
                   (2 * p.temperature - p.step_size * p.noise_estimate)
                   / (2 * p.friction * p.temperature - p.step_size * p.noise_estimate))
                   if p.integrator == "euler" else 1.0),
               _first(_euler_only, _param_equals("friction", 1.0, None, "friction 1: gamma and 1 are the same")),
               _tests(_HAMILTONIAN_TESTS, ["sghmc"])),
    PlantedBug("sghmc-noise-estimate-ignored", "SGHMC does not subtract the gradient-noise estimate from its noise",
               ("sghmc", "sghmc_cv"), scaled_draw(("sghmc", "sghmc_cv"), "noise", lambda p, s, xp: xp.sqrt(
                   2 * p.friction * p.temperature / (2 * p.friction * p.temperature - p.step_size * p.noise_estimate))
                   if p.integrator == "euler" else 1.0),
               _param_equals("noise_estimate", 0.0, 0.0, "noise estimate 0: nothing to subtract"),
               _tests(_HAMILTONIAN_TESTS, ["sghmc"])),
    PlantedBug("sghmc-refresh-off-by-one", "SGHMC refreshes the momentum every L + 1 steps", ("sghmc", "sghmc_cv"),
               changed_params(("sghmc", "sghmc_cv"),
                              lambda p: {"refresh_every": p.refresh_every + 1 if p.refresh_every else 0}),
               _param_equals("refresh_every", 0, 0, "no refresh"), _tests(_HAMILTONIAN_TESTS, ["refresh"])),
    PlantedBug("sghmc-refresh-unit-variance", "SGHMC redraws the momentum from N(0, I) whatever h and T",
               ("sghmc", "sghmc_cv"),
               scaled_draw(("sghmc", "sghmc_cv"), "refresh", lambda p, s, xp: 1 / xp.sqrt(_refresh_variance(p))),
               _param_equals("refresh_every", 0, 0, "no refresh"), _tests(_HAMILTONIAN_TESTS, ["refresh"])),
    PlantedBug("sghmc-sa-noise-factor", "scale-adapted SGHMC's noise variance lacks its factor 2", ("sghmc_sa",),
               scaled_draw(("sghmc_sa",), "noise", lambda p, s, xp: 1 / _SQRT2),
               tests=_tests(_HAMILTONIAN_TESTS + ("tests/test_sghmc_sa.py",), ["sghmc_sa or scale"])),
    PlantedBug("sgnht-diffusion-missing-in-noise", "SGNHT injects sqrt(2hT) n instead of sqrt(2ahT) n",
               ("sgnht", "sgnht_cv"),
               scaled_draw(("sgnht", "sgnht_cv"), "noise", lambda p, s, xp: 1 / xp.sqrt(p.diffusion)),
               _param_equals("diffusion", 1.0, None, "diffusion 1: a and 1 are the same"),
               _tests(_HAMILTONIAN_TESTS, ["sgnht"])),
    PlantedBug("sgnht-thermostat-temperature", "SGNHT's thermostat drives the kinetic energy to 1, not T",
               ("sgnht", "sgnht_cv"), transformed_state(("sgnht", "sgnht_cv"), lambda s, p: s, _centred_thermostat),
               _temperature_one, _tests(_HAMILTONIAN_TESTS, ["sgnht"])),
    PlantedBug("sgnht-temperature-ignored-in-numpy", "SGNHT's NumPy reference ignores T (JAX is right)",
               ("sgnht",), changed_params(("sgnht",), lambda p: {"temperature": 1.0}, ("reference",)),
               _temperature_one, _tests(_HAMILTONIAN_TESTS, ["sgnht"])),
    PlantedBug("px-expanded-friction-ignored", "PX-SGHMC uses the V friction on the expanded P, Q coordinates",
               ("px_sghmc",), changed_params(("px_sghmc",), lambda p: {"expanded_friction": p.friction}),
               lambda cell: "expanded friction equals the friction" if cell.params.get("expanded_friction")
               == cell.params.get("friction") else None, ("tests/test_px.py", "tests/test_equivalence.py", "-k", "px")),
    PlantedBug("mclmc-refresh-dimension", "MCLMC's partial refresh noise lacks its 1/sqrt(d)", ("mclmc", "mile"),
               scaled_draw(("mclmc", "mile"), "refresh", lambda p, s, xp: float(np.sqrt(s.position.shape[-1]))),
               lambda cell: "L = inf: no refreshment" if cell.params.get("L", 1.0) == float("inf") else None,
               _tests(_MICROCANONICAL_TESTS, ["mclmc or mile"])),
    PlantedBug("smile-kick-halved", "SMILE's ESH kick uses half the gradient", ("smile_naive", "smile"),
               transformed_gradient(("smile_naive", "smile"), lambda g, p, s, xp: 0.5 * g),
               tests=_tests(_MICROCANONICAL_TESTS, ["smile"])),
    PlantedBug("psmile-noise-smoothing-flipped", "pSMILE's gradient-noise EMA weights the new gradient by 1 - alpha",
               ("psmile_naive", "psmile"), changed_params(("psmile_naive", "psmile"),
                                                          lambda p: {"noise_smoothing": 1.0 - p.noise_smoothing}),
               tests=_tests(_MICROCANONICAL_TESTS, ["psmile"])),
    PlantedBug("smile-adaptation-sign", "SMILE's eq. 7 grows the step where it should shrink it", ("smile", "psmile"),
               changed_params(("smile", "psmile"), lambda p: {"adaptation_rate": -p.adaptation_rate}),
               tests=_tests(_MICROCANONICAL_TESTS, ["smile"])),
    PlantedBug("minibatch-scale-missing", "minibatch gradients are not scaled by N/B", (), _minibatch_unscaled,
               lambda cell: None if cell.target_params.get("noise") == "minibatch" else "no minibatches",
               ("tests/test_noise_models.py", "tests/test_data_targets.py")),
    PlantedBug("isotropic-noise-variance-as-sd", "isotropic gradient noise is variance * z, not sqrt(variance) * z",
               (), _noise_variance_as_sd,
               lambda cell: None if cell.target_params.get("noise") == "isotropic"
               and cell.target_params.get("noise_variance") != 1.0 else "no isotropic noise of variance other than 1",
               ("tests/test_noise_models.py",)),
    PlantedBug("moments-merge-weights-swapped", "the streaming merge weights each block's mean by the other's count",
               (), lambda: _merge(weight_swapped=True),
               lambda cell: "the NumPy driver streams step by step, no merges" if cell.backend == "numpy" else None,
               ("tests/test_moments.py", "tests/test_driver.py")),
    PlantedBug("moments-merge-cross-term-dropped", "the streaming merge of M2 drops Chan et al.'s cross term",
               (), lambda: _merge(cross_term=False),
               lambda cell: "the gate reads the streamed E[x] and E[x^2], not the merged M2",
               ("tests/test_moments.py", "tests/test_driver.py")),
)


def get(name: str) -> PlantedBug:
    """The planted bug ``name``; ValueError listing the known ones."""
    for bug in BUGS:
        if bug.name == name:
            return bug
    raise ValueError(f"unknown planted bug {name!r}; known: {', '.join(b.name for b in BUGS)}")
