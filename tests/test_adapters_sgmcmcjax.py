r"""The SGMCMCJax 0.2.13 adapters (``sgbench.bench.adapters.sgmcmcjax``): they run under the JAX driver (one
adapter per diffusion and per estimator in the default run, every adapter with ``-m integration``), count their
gradient evaluations as the library's estimators make them (checked at run time, step by step), validate their
hyperparameters, declare runnable settings, and each adapter that claims a suite sampler is that sampler on shared
draws. The kernels as shipped are pinned: ``kernels.py`` binds the second update twice (read with :mod:`ast`, the
module cannot be imported) and the adapters that reproduce it never move; BADODAB's thermostat step is written out.

**Shared draws.** SGMCMCJax draws its normals from the key the adapter makes of the step's seed. Its tree wrapper
(``diffusion_util.py``) splits the key into one key per leaf (``random.split(key, 1)[0]`` for the suite's one
array), and the update draws ``random.normal(leaf_key, shape)``; SGNHT at iteration 0 first splits the leaf key
into ``(key, subkey)``, draws the momentum :math:`\sqrt{dt}\,\mathcal N(0, I)` from ``subkey`` and the noise from
``key``; SGHMC's kernel splits the step's key into (refresh, update) keys, each then split per leaf. The tests
below reproduce those normals and feed them to the claimed suite sampler's ``reference_step`` (with
``to_reference``) on a noise-free Gaussian (deterministic gradients), in float64: the positions agree to 1e-12
over ``STEPS`` steps. BAOAB's practical-form momentum is minus the library's, so its normals enter negated.
"""

from __future__ import annotations

import ast
import importlib.util
import math
from pathlib import Path

import jax
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.adapters import load
from sgbench.bench.adapters._seeds import jax_key
from sgbench.bench.running import run as running
from sgbench.bench.validate import targets as validation_targets
from sgbench.samplers._contract import GradientOracle

sgj = pytest.importorskip("sgbench.bench.adapters.sgmcmcjax")

ICG = dict(dim=4, condition_number=4.0, noise="isotropic", noise_variance=1.0)
STEPS = 6
TOLERANCE = 1e-12
CENTRE = np.array([0.2, -0.1, 0.4, 0.3])
CENTRE_GRAD = np.array([0.5, -0.3, 0.1, 0.2])  # not the gradient at CENTRE: the composition shows

RUNS = {  # adapter: hyperparameters
    "sgld": dict(step_size=0.05),
    "sgld_cv": dict(step_size=0.05),
    "sgld_svrg": dict(step_size=0.05, update_rate=3),
    "psgld": dict(step_size=0.05),
    "sgld_adam": dict(step_size=0.01),
    "sghmc": dict(step_size=0.01, L=3, alpha=0.5, beta=0.001),
    "sghmc_cv": dict(step_size=0.01, L=3, alpha=0.5),
    "sghmc_svrg": dict(step_size=0.01, L=3, alpha=0.5, update_rate=2),
    "sgnht": dict(step_size=0.01, a=0.2),
    "sgnht_cv": dict(step_size=0.01, a=0.2),
    "baoab": dict(step_size=0.1, gamma=1.0),
    "baoab_diffusion": dict(step_size=0.1, gamma=1.0, temperature=0.7),
    "badodab": dict(step_size=0.05),
    "badodab_cv": dict(step_size=0.05),
    "badodab_diffusion": dict(step_size=0.05, a=0.5),
}
CLAIMS = {"sgld": "sgld", "sgld_cv": "sgld_cv", "psgld": "psgld", "sghmc": "sghmc", "sghmc_cv": "sghmc_cv",
          "sgnht": "sgnht", "sgnht_cv": "sgnht_cv", "baoab_diffusion": "sghmc"}


def svrg_evaluations(num_steps: int, update_rate: int, L: int = 1) -> int:
    """The SVRG estimator's evaluations over ``num_steps`` steps: 1 at step 0 (the full-data gradient), then 2 per
    step and 1 more at each step whose previous iteration (t - 1) // L is a multiple of ``update_rate``."""
    return 1 + sum(2 + ((t - 1) // L % update_rate == 0) for t in range(1, num_steps))


def test_every_kernel_has_an_adapter_and_the_short_name_is_the_adapters_module():
    names = [n for n in dir(sgj) if isinstance(getattr(sgj, n), sgj.AdaptedSampler)]
    assert sorted(names) == sorted(RUNS)
    assert sgj.__name__ == "sgbench.bench.adapters.sgmcmcjax"  # not the installed package sgmcmcjax
    for name in names:
        adapter = load(f"sgmcmcjax:{name}")
        assert adapter is getattr(sgj, name) and adapter.name == f"sgmcmcjax:{name}"
        assert (adapter.library, adapter.backend, adapter.claims) == ("sgmcmcjax", "jax", CLAIMS.get(name))
        assert adapter.name not in samplers.names()  # adapters stay out of the registry


@pytest.fixture(scope="module")
def icg():
    """One icg target for the runs, so that the CV adapters' MAP search (cached per target) runs once."""
    return targets.get("icg", **ICG)


def evaluations(name: str, num_steps: int) -> int:
    params = RUNS[name]
    if name.endswith("_svrg"):
        return svrg_evaluations(num_steps, params["update_rate"], params.get("L", 1))
    return num_steps * (2 if name.endswith("_cv") else 1)


# One adapter per diffusion and per estimator in the default run (a driver run compiles for 5-10 s on 2 cores), the
# others with the integration runs.
DEFAULT_RUNS = ("sgld_svrg", "psgld", "sgld_adam", "sghmc_cv", "sgnht", "baoab", "badodab_diffusion")


@pytest.mark.parametrize("name", [n if n in DEFAULT_RUNS else pytest.param(n, marks=pytest.mark.integration)
                                  for n in RUNS])
def test_adapter_runs_under_the_jax_driver(name, icg):
    sampler = load(f"sgmcmcjax:{name}")
    num_steps = 20
    result = running.run(sampler, icg, params=RUNS[name], num_chains=2, num_steps=num_steps, backend="jax",
                         dtype="float32", block_size=num_steps)
    assert np.all(np.isfinite(result.moments.mean_sq)) and np.all(np.isfinite(result.moments.mean))
    assert result.diagnostics["diverged"] == [False, False]
    assert result.sampler == f"sgmcmcjax:{name}"
    assert result.trace.grad_evals.tolist() == [evaluations(name, num_steps)] * 2


# --- translations and hyperparameters ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_translation_is_accepted_by_the_claimed_sampler(name):
    adapter = getattr(sgj, name)
    params = dict(RUNS[name])
    if name.endswith("_cv"):
        params.update(centre=CENTRE, centre_grad=CENTRE_GRAD)
    adapter.reference().params(**adapter.to_reference(params))


def test_translations():
    assert sgj.sgld.to_reference({"step_size": 0.1}) == {"step_size": 0.1}
    assert sgj.psgld.to_reference({"step_size": 0.1, "alpha": 0.9, "eps": 1e-3}) == pytest.approx(
        {"step_size": 0.05, "smoothing": 0.9, "epsilon": 1e-3})
    assert sgj.sghmc.to_reference({"step_size": 0.01, "L": 5, "alpha": 0.3, "beta": 0.1}) == pytest.approx(
        {"form": "chen", "integrator": "explicit_euler", "step_size": 0.01, "friction": 0.3, "noise_estimate": 20.0,
         "refresh_every": 5})
    assert sgj.sgnht.to_reference({"step_size": 0.01, "a": 0.2}) == pytest.approx(
        {"form": "chen", "step_size": 0.01, "diffusion": 0.2, "initial_thermostat": 0.2})
    assert sgj.baoab_diffusion.to_reference({"step_size": 0.1, "gamma": 2.0, "temperature": 0.5}) == pytest.approx(
        {"form": "practical", "integrator": "splitting", "step_size": 0.1, "friction": 2.0, "temperature": 0.5})
    centred = sgj.sgld_cv.to_reference({"step_size": 0.1, "centre": CENTRE, "centre_grad": CENTRE_GRAD})
    assert centred["step_size"] == 0.1 and np.array_equal(centred["centre"], CENTRE)
    # before prepare fills the centre in, the reference's own prepare finds the same MAP
    assert "centre" not in sgj.sgnht_cv.to_reference({"step_size": 0.01})
    with pytest.raises(ValueError, match="centre is required"):
        sgj.sgld_cv.init(np.zeros(4), sgj.sgld_cv.params(step_size=0.1))
    assert all(getattr(sgj, name).differences == "" for name in ("sgld", "sgld_cv", "psgld", "sghmc", "sghmc_cv"))
    for name in set(RUNS) - set(CLAIMS):
        with pytest.raises(ValueError, match="claims no suite sampler"):
            getattr(sgj, name).to_reference(RUNS[name])


@pytest.mark.parametrize(("name", "params", "parameter"), [
    ("sgld", dict(step_size=0.0), "step_size"),
    ("sgld", dict(step_size=math.inf), "step_size"),
    ("sgld_svrg", dict(step_size=0.1, update_rate=0), "update_rate"),
    ("psgld", dict(step_size=0.1, alpha=1.5), "alpha"),
    ("psgld", dict(step_size=0.1, eps=0.0), "eps"),
    ("sgld_adam", dict(step_size=0.1, beta1=1.0), "beta1"),
    ("sgld_adam", dict(step_size=0.1, beta2=-0.1), "beta2"),
    ("sghmc", dict(step_size=0.1, L=0), "L"),
    ("sghmc", dict(step_size=0.1, L=2, alpha=2.0), "alpha"),
    ("sghmc", dict(step_size=0.1, L=2, alpha=0.1, beta=0.2), "beta"),
    ("sghmc_svrg", dict(step_size=0.1, L=2, update_rate=0), "update_rate"),
    ("sgnht", dict(step_size=0.1, a=0.5), "a"),
    ("baoab", dict(step_size=0.1, gamma=-1.0), "gamma"),
    ("baoab_diffusion", dict(step_size=0.1, gamma=1.0, temperature=0.0), "temperature"),
    ("badodab", dict(step_size=0.1, a=-0.1), "a"),
    ("sgld_cv", dict(step_size=0.1, centre=[0.0, np.nan]), "centre"),
])
def test_bad_hyperparameters_name_the_parameter(name, params, parameter):
    with pytest.raises(ValueError, match=rf"^{parameter}\b|\b{parameter}\b"):
        getattr(sgj, name).params(**params)


def test_settings_are_at_least_two_and_runnable():
    for name in RUNS:
        adapter = getattr(sgj, name)
        assert len(adapter.settings) >= 2, name
        for setting in adapter.settings:
            assert setting.probes and setting.label, (name, setting)
            for key in setting.targets.split(","):
                validation_targets.get(key)
                params = {k.partition(":")[2] if ":" in k else k: v for k, v in setting.params.items()
                          if ":" not in k or k.startswith(f"{key}:")}
                if name.endswith("_cv"):
                    params.update(centre=CENTRE, centre_grad=CENTRE_GRAD)
                adapter.params(**params)


# --- gradient evaluations ------------------------------------------------------------------------------------------


class RuntimeCountingOracle(GradientOracle):
    """An oracle whose counter runs at every executed evaluation (inside ``lax.cond`` branches too)."""

    def _count(self) -> None:
        jax.debug.callback(self.on_evaluation)


@pytest.mark.parametrize(("name", "params", "expected"), [
    ("sgld", dict(step_size=0.05), [1, 1, 1, 1]),
    ("sgnht_cv", dict(step_size=0.01, centre=CENTRE, centre_grad=CENTRE_GRAD), [2, 2, 2, 2]),
    ("sgld_svrg", dict(step_size=0.05, update_rate=2), [1, 3, 2, 3, 2]),
    # the centre moves at every step of iteration (t - 1) // L = 0 and 2: L full-data gradients
    ("sghmc_svrg", dict(step_size=0.01, L=2, update_rate=2), [1, 3, 3, 2, 2, 3, 3]),
])
def test_gradient_counts_are_the_evaluations_made(name, params, expected):
    """Counted at run time against ``Info.num_grad_evals`` step by step."""
    adapter = getattr(sgj, name)
    target = targets.get("icg", **ICG)
    p = adapter.params(**params)
    calls = []
    step = jax.jit(lambda state, noise, seed: adapter.optimized_step(
        state, RuntimeCountingOracle(target, {"gradient_noise": noise}, lambda: calls.append(1)), {"seed": seed}, p))
    state = adapter.init(np.ones(target.dim), p)
    rng = np.random.default_rng(0)
    for t, expected_now in enumerate(expected):
        before = len(calls)
        state, info = step(state, rng.standard_normal(target.dim), np.array([t, 1]))
        jax.effects_barrier()
        assert len(calls) - before == int(info.num_grad_evals) == expected_now, f"step {t}"


def test_svrg_moves_its_centre_to_the_position_with_the_full_data_gradient():
    target = targets.get("icg", **ICG)
    p = sgj.sgld_svrg.params(step_size=0.05, update_rate=3)
    step = jax.jit(lambda state, noise, seed: sgj.sgld_svrg.optimized_step(
        state, GradientOracle(target, {"gradient_noise": noise}), {"seed": seed}, p)[0])
    state = sgj.sgld_svrg.init(np.ones(target.dim), p)
    rng = np.random.default_rng(1)
    for t in range(5):
        position = np.asarray(state.position)
        state = step(state, rng.standard_normal(target.dim), np.array([t, 2]))
        if t in (0, 1, 4):  # step 0 (init_gradient) and previous iterations 0 and 3
            np.testing.assert_allclose(state.svrg.centering_value, position, rtol=0, atol=0)
            np.testing.assert_allclose(state.svrg.fb_grad_center, target.grad_logdensity(position), rtol=1e-14)
        else:
            assert not np.allclose(state.svrg.centering_value, position)


# --- shared draws --------------------------------------------------------------------------------------------------


def leaf_normal(key, dim: int):
    """The normal the library's tree wrapper makes a one-array update draw from ``key``."""
    return np.asarray(jax.random.normal(jax.random.split(key, 1)[0], (dim,)))


def library_draws(name: str, seed, step: int, dim: int, params) -> tuple[dict, np.ndarray | None]:
    """The reference's draws equal to the library's normals at ``step`` from ``seed``, and SGNHT's first momentum."""
    key = jax_key(seed)
    if name.startswith("sghmc"):
        refresh_key, update_key = jax.random.split(key)
        return {"noise": leaf_normal(update_key, dim), "refresh": leaf_normal(refresh_key, dim)}, None
    if name.startswith("sgnht") and step == 0:
        noise_key, momentum_key = jax.random.split(jax.random.split(key, 1)[0])
        momentum = np.sqrt(params.step_size) * np.asarray(jax.random.normal(momentum_key, (dim,)))
        return {"noise": np.asarray(jax.random.normal(noise_key, (dim,)))}, momentum
    sign = -1.0 if name == "baoab_diffusion" else 1.0  # the practical form's momentum is minus the library's
    return {"noise": sign * leaf_normal(key, dim)}, None


EQUIVALENCE = {  # adapter: hyperparameter sets
    "sgld": [dict(step_size=0.05)],
    "sgld_cv": [dict(step_size=0.05, centre=CENTRE, centre_grad=CENTRE_GRAD)],
    "psgld": [dict(step_size=0.05), dict(step_size=0.01, alpha=0.9, eps=1e-3)],
    "sghmc": [dict(step_size=0.01, L=3, alpha=0.3), dict(step_size=0.02, L=1, alpha=1.5, beta=0.5)],
    "sghmc_cv": [dict(step_size=0.01, L=2, alpha=0.3, centre=CENTRE, centre_grad=CENTRE_GRAD)],
    "sgnht": [dict(step_size=0.01, a=0.2), dict(step_size=0.04, a=0.01)],
    "sgnht_cv": [dict(step_size=0.01, a=0.2, centre=CENTRE, centre_grad=CENTRE_GRAD)],
    "baoab_diffusion": [dict(step_size=0.1, gamma=1.0), dict(step_size=0.2, gamma=5.0)],
}


@pytest.mark.parametrize(("name", "params"), [(n, p) for n, sets in EQUIVALENCE.items() for p in sets])
def test_adapter_is_its_claimed_sampler_on_shared_draws(name, params):
    assert_shared_draws_agree(name, params)


def test_baoab_tau_is_a_standard_deviation():
    """SGMCMCJax's BAOAB (diffusions.py 232) adds tau sqrt(1 - c^2) xi in its O step: on shared draws it is the
    reference at temperature tau^2, not at the temperature tau it documents. A release that fixes it fails
    here: update docs/defects_sgmcmcjax.md and the conformance report."""
    params = dict(step_size=0.2, gamma=5.0, temperature=0.5)
    assert_shared_draws_agree("baoab_diffusion", params, temperature=0.25)
    with pytest.raises(AssertionError):
        assert_shared_draws_agree("baoab_diffusion", params)


def assert_shared_draws_agree(name, params, temperature=None):
    """The adapter ``name`` at ``params`` against its claimed sampler (at ``temperature`` if given) over ``STEPS``
    steps on the library's own normals, to ``TOLERANCE``."""
    adapter = getattr(sgj, name)
    target = targets.get("icg", dim=4, condition_number=4.0)
    oracle = GradientOracle.exact(target)
    p = adapter.params(**params)
    reference = adapter.reference()
    translated = adapter.to_reference(p)
    q = reference.params(**(translated if temperature is None else {**translated, "temperature": temperature}))
    x0 = np.array([1.0, -0.5, 0.3, 2.0])
    state, expected = adapter.init(x0, p), reference.init(x0, q)
    if name == "baoab_diffusion":  # the library's opening half kick from v = 0
        expected = expected._replace(momentum=-p.step_size / 2 * target.grad_logdensity(x0))
    step = jax.jit(lambda state, seed: adapter.optimized_step(state, oracle, {"seed": seed}, p)[0])
    rng = np.random.default_rng(3)
    for t in range(STEPS):
        seed = rng.integers(0, 2**31 - 1, 2)
        draws, first_momentum = library_draws(name, seed, t, target.dim, p)
        if first_momentum is not None:
            expected = expected._replace(momentum=first_momentum)
        state = step(state, seed)
        expected, _ = reference.reference_step(expected, oracle, draws, q)
        np.testing.assert_allclose(state.position, expected.position, rtol=0, atol=TOLERANCE, err_msg=f"step {t}")
    if name == "baoab_diffusion":  # r = -(w + dt g(x)): the state lacks the closing half kick
        momentum = -(np.asarray(state.auxiliary[0]) + p.step_size * target.grad_logdensity(expected.position))
        np.testing.assert_allclose(momentum, expected.momentum, rtol=0, atol=TOLERANCE)
    elif "momentum" in expected._fields:
        np.testing.assert_allclose(state.auxiliary[0], expected.momentum, rtol=0, atol=TOLERANCE)
    if "thermostat" in expected._fields:
        np.testing.assert_allclose(state.auxiliary[1], expected.thermostat, rtol=0, atol=TOLERANCE)


# --- the kernels as shipped ----------------------------------------------------------------------------------------


def test_library_kernels_bind_the_second_update_twice():
    """``kernels.py`` (which cannot be imported under JAX 0.10) unpacks the palindromes as
    ``init_diff, (update_diff1, update_diff1), get_p_diff = ...`` in the BAOAB and both BADODAB kernels: the
    adapters ``baoab``, ``badodab``, ``badodab_cv`` reproduce that. A release that fixes it fails here."""
    source = Path(importlib.util.find_spec("sgmcmcjax").origin).with_name("kernels.py").read_text()
    doubled = {}
    for function in ast.parse(source).body:
        if isinstance(function, ast.FunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
                    names = [n.id for t in node.targets[0].elts for n in ast.walk(t) if isinstance(n, ast.Name)]
                    if len(names) != len(set(names)):
                        doubled[function.name] = node.lineno
    assert doubled == {"build_baoab_kernel": 383, "build_badodab_kernel": 419, "build_badodabCV_kernel": 457}


@pytest.mark.parametrize("name", ["baoab", "badodab", "badodab_cv"])
def test_kernels_as_shipped_never_move_the_position(name):
    """Two half kicks per step and nothing else: after n steps the momentum is (n - 1/2) dt g(x0) (the state lacks
    the closing half kick) and the position is x0."""
    adapter = getattr(sgj, name)
    target = targets.get("icg", dim=4, condition_number=4.0)
    oracle = GradientOracle.exact(target)
    params = dict(RUNS[name], centre=CENTRE, centre_grad=target.grad_logdensity(CENTRE)) if name.endswith("_cv") \
        else RUNS[name]
    p = adapter.params(**params)
    x0 = np.array([1.0, -0.5, 0.3, 2.0])
    state = adapter.init(x0, p)
    for t in range(STEPS):
        state, _ = adapter.optimized_step(state, oracle, {"seed": np.array([t, 5])}, p)
    np.testing.assert_array_equal(state.position, x0)
    np.testing.assert_allclose(state.auxiliary[0], (STEPS - 0.5) * p.step_size * target.grad_logdensity(x0),
                               rtol=1e-12)


def test_badodab_thermostat_reads_the_norm_of_the_momentum_not_its_square():
    """One step of ``badodab_diffusion`` from a given state, against B A D O D A written out with the library's
    ``|v| - D`` in both D steps (``diffusions.py`` 326, 334; Leimkuhler & Shang's thermostat reads
    ``|v|^2 - D``): equal to 1e-12, and the square's thermostat differs."""
    target = targets.get("icg", dim=4, condition_number=4.0)
    p = sgj.badodab_diffusion.params(step_size=0.05, a=0.3)
    dt, h, dim = p.step_size, p.step_size / 2, target.dim
    x0, v0, thermostat = np.array([1.0, -0.5, 0.3, 2.0]), np.array([1.5, -2.0, 0.5, 1.0]), 0.3
    state = sgj.State(x0, (v0, np.asarray(thermostat)), sgj.SVRGState(), 1)  # step 1: the closing half kick applies
    seed = np.array([11, 12])
    new, _ = sgj.badodab_diffusion.optimized_step(state, GradientOracle.exact(target), {"seed": seed}, p)
    xi = leaf_normal(jax_key(seed), dim)

    def written_out(kinetic):
        v = v0 + dt * target.grad_logdensity(x0)  # the previous step's closing half kick and this step's B
        x = x0 + h * v
        alpha = thermostat + h * (kinetic(v) - dim)
        c1 = np.exp(-alpha * dt)
        v = c1 * v + np.sqrt(abs((1 - c1**2) / (2 * alpha))) * xi
        alpha = alpha + h * (kinetic(v) - dim)
        return x + h * v, alpha

    position, alpha = written_out(np.linalg.norm)
    np.testing.assert_allclose(new.position, position, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(new.auxiliary[1], alpha, rtol=0, atol=TOLERANCE)
    assert abs(written_out(lambda v: v @ v)[1] - alpha) > 0.1
