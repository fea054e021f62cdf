"""The held-out samplers of ``tests/heldout`` (written for testing ``sgbench validate``) keep the sampler
contract: each loads with ``sgbench.bench.adapters.load_sampler`` as a ``samplers.Sampler`` that is not registered and
declares no benchmarks; its reference (NumPy) and optimized (JAX: jitted and vmapped, as the driver runs it)
steps agree on shared draws in float64; its hyperparameters are validated; and the manifest ``CASES`` names
samplers, hyperparameters, claims and targets that exist. Deterministic and fast (no statistical assertion).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.adapters import load_sampler
from sgbench.bench.gate import gold_standard
from sgbench.samplers._contract import GradientOracle

REPO = Path(__file__).resolve().parents[1]
MANIFESTS = ("decisive",)  # tests/heldout/decisive.py is a manifest (DECISIVE_CASES), not a sampler
MODULES = sorted(p.stem for p in (REPO / "tests" / "heldout").glob("*.py")
                 if not p.stem.startswith("_") and p.stem not in MANIFESTS)
NUM_STEPS = 30
NUM_CHAINS = 3
TOLERANCE = 1e-10

# Hyperparameter sets at which both implementations are compared (every branch of every step).
SETTINGS = {
    "frozen": [{"step_size": 0.01}],
    "sgld_tiny": [{"step_size": 1e-5}, {"step_size": 0.05, "temperature": 0.5}],
    "smoothed_gradient_sgld": [{"step_size": 0.01}, {"step_size": 0.02, "eps": 0.3, "temperature": 2.0}],
    "sgld_noise_inflated": [{"step_size": 0.02}],
    "sghmc_independent": [{"step_size": 0.01, "friction": 0.1},
                          {"step_size": 0.05, "friction": 10.0, "form": "practical", "noise_estimate": 2.0}],
    "sghmc_half_noise": [{"step_size": 0.01, "friction": 0.1, "temperature": 0.5},
                         {"step_size": 0.05, "friction": 10.0, "form": "practical"}],
    "sgld_lr_names": [{"lr": 0.01, "temp": 0.5}],
    "tamed_sgld": [{"step_size": 0.5}],
    "sgld_diverging": [{"step_size": 0.01}],
    # the samplers of tests/heldout/decisive.py
    "sgld_correct": [{"step_size": 0.02}, {"step_size": 1e-3, "temperature": 0.5}],
    "sgld_noise_115": [{"step_size": 0.02}],
    "sgld_temperature_in_drift": [{"step_size": 0.02, "temperature": 0.9}],
    "sgld_first_coordinate": [{"step_size": 0.02}],
    "sgld_weight_decay": [{"step_size": 0.02}],
    "sgld_minibatch_off_by_one": [{"step_size": 0.02}],
    "sgld_noise_growing": [{"step_size": 0.02}],
    "sgld_drift_growing": [{"step_size": 0.02}],
    "lm_langevin": [{"step_size": 0.1}, {"step_size": 0.1, "noise_estimate": 2.0, "temperature": 0.5}],
    "sghmc_bao": [{"step_size": 0.05, "friction": 20.0}, {"step_size": 0.1, "friction": 0.5, "temperature": 0.5}],
    "sghmc_refresh_mass": [{"step_size": 0.01, "friction": 0.1, "refresh_every": 3},
                           {"step_size": 0.01, "friction": 0.2, "noise_estimate": 2.0, "temperature": 0.5,
                            "refresh_every": 1}],
    "sghmc_old_gradient": [{"step_size": 0.04, "friction": 0.2},
                           {"step_size": 0.05, "friction": 10.0, "form": "practical", "noise_estimate": 2.0}],
}

BAD = {
    "frozen": {"step_size": 0.0},
    "sgld_tiny": {"step_size": 1e-5, "temperature": -1.0},
    "smoothed_gradient_sgld": {"step_size": 0.01, "eps": 0.0},
    "sgld_noise_inflated": {"step_size": float("inf")},
    "sghmc_independent": {"step_size": 0.5, "friction": 10.0, "form": "practical"},
    "sghmc_half_noise": {"step_size": 0.01, "friction": 0.1, "noise_estimate": 100.0},
    "sgld_lr_names": {"lr": -0.01},
    "tamed_sgld": {"step_size": 0.0},
    "sgld_diverging": {"step_size": -1.0},
    "sgld_correct": {"step_size": 0.0},
    "sgld_noise_115": {"step_size": float("nan")},
    "sgld_temperature_in_drift": {"step_size": 0.02, "temperature": 0.0},
    "sgld_first_coordinate": {"step_size": -0.02},
    "sgld_weight_decay": {"step_size": float("inf")},
    "sgld_minibatch_off_by_one": {"step_size": 0.0},
    "sgld_noise_growing": {"step_size": -1.0},
    "sgld_drift_growing": {"step_size": 0.02, "temperature": -1.0},
    "lm_langevin": {"step_size": 0.1, "noise_estimate": 100.0},
    "sghmc_bao": {"step_size": 0.1, "friction": 0.0},
    "sghmc_refresh_mass": {"step_size": 0.01, "friction": 2.5},
    "sghmc_old_gradient": {"step_size": 0.5, "friction": 10.0, "form": "practical"},
}


@pytest.fixture(autouse=True)
def repository_importable(monkeypatch):
    """``tests.heldout`` is imported from the repository root (pytest puts only ``tests/`` on the path)."""
    monkeypatch.syspath_prepend(str(REPO))


def _load(name):
    return load_sampler(f"tests.heldout.{name}:SAMPLER")


def test_every_module_has_settings():
    assert set(MODULES) == set(SETTINGS) == set(BAD)


@pytest.mark.parametrize("name", MODULES)
def test_loads_unregistered_without_benchmarks(name):
    sampler = _load(name)
    assert isinstance(sampler, samplers.Sampler)
    assert sampler.name == name and sampler.benchmarks is None
    assert name not in samplers.names()
    assert "Verdict" in importlib.import_module(f"tests.heldout.{name}").__doc__


@pytest.mark.parametrize("name", MODULES)
def test_hyperparameters_are_validated(name):
    with pytest.raises(ValueError):
        _load(name).params(**BAD[name])
    with pytest.raises(ValueError, match="no_such_parameter"):
        _load(name).params(**SETTINGS[name][0], no_such_parameter=1.0)


def _reference_paths(sampler, target, params, positions, draws, gradient_draws):
    paths = []
    for c in range(NUM_CHAINS):
        state = sampler.start(positions[c].copy(), params, GradientOracle.exact(target))
        path = []
        for t in range(NUM_STEPS):
            step_draws = {k: v[t, c] for k, v in draws.items()}
            state, info = sampler.reference_step(state, GradientOracle(target, {k: v[t, c] for k, v in
                                                                                 gradient_draws.items()}),
                                                 step_draws, params)
            path.append(state.position)
        paths.append(path)
    return np.array(paths), info


def _optimized_paths(sampler, target, params, positions, draws, gradient_draws):
    def one_step(state, step_draws, grad_draw, params):
        return sampler.optimized_step(state, GradientOracle(target, grad_draw), step_draws, params)

    step = jax.jit(jax.vmap(one_step, in_axes=(0, 0, 0, None)))
    state = jax.vmap(lambda x: sampler.start(x, params, GradientOracle.exact(target)))(jnp.asarray(positions))
    path = []
    for t in range(NUM_STEPS):
        state, info = step(state, {k: v[t] for k, v in draws.items()}, {k: v[t] for k, v in gradient_draws.items()},
                           params)
        path.append(np.asarray(state.position))
    return np.stack(path, axis=1), info


@pytest.mark.parametrize("name,params", [(n, p) for n in MODULES for p in SETTINGS[n]], ids=str)
def test_reference_and_optimized_agree_on_shared_draws(name, params):
    sampler = _load(name)
    target = targets.get("icg", dim=4, condition_number=4.0, rotation_seed=0, noise="isotropic", noise_variance=2.0)
    params = sampler.params(**params)
    rng = np.random.default_rng(7)
    draws = numpy_draws(rng, sampler.draw_spec(target.dim, params), (NUM_STEPS, NUM_CHAINS))
    gradient_draws = numpy_draws(rng, target.draw_spec, (NUM_STEPS, NUM_CHAINS))
    positions = 3 * rng.standard_normal((NUM_CHAINS, target.dim))

    reference, reference_info = _reference_paths(sampler, target, params, positions, draws, gradient_draws)
    optimized, optimized_info = _optimized_paths(sampler, target, params, positions, draws, gradient_draws)

    assert optimized.dtype == np.float64 and np.all(np.isfinite(reference))
    np.testing.assert_allclose(optimized, reference, rtol=TOLERANCE, atol=TOLERANCE)
    np.testing.assert_array_equal(np.asarray(optimized_info.num_grad_evals),
                                  np.full(NUM_CHAINS, reference_info.num_grad_evals))
    if name == "frozen":
        np.testing.assert_array_equal(reference, np.broadcast_to(positions[:, None], reference.shape))
    else:
        assert np.all(np.abs(np.diff(reference, axis=1)) > 0)


def test_the_manifest_names_what_exists():
    from tests.heldout import CASES, OUTCOMES, TARGETS
    from tests.heldout.decisive import DECISIVE_CASES

    assert len({case.name for case in CASES}) == len(CASES)
    held_out = [c for c in CASES + DECISIVE_CASES if c.module.startswith("tests.heldout.")]
    assert {case.module.rpartition(".")[2] for case in held_out} == set(MODULES)
    for case in CASES:
        sampler = load_sampler(case.sampler)
        sampler.params(**case.params)
        assert case.expected and case.expected <= OUTCOMES
        assert set(case.targets) <= set(TARGETS) and (case.num_chains or 2) >= 2 and case.num_steps >= 1
        if case.claims is not None:
            mapping = case.param_map or {}
            samplers.get(case.claims).params(**{mapping.get(k, k): v for k, v in case.params.items()})
        else:
            assert case.param_map is None
    for preset in TARGETS.values():
        kwargs = dict(preset)
        target = targets.get(kwargs.pop("name"), **kwargs)
        # logreg's truth is its stored NUTS gold standard (docs/tutorial.md, "The targets")
        assert target.truth is not None or gold_standard.truth_of(target).mean is not None


def test_minibatch_off_by_one_rescales_the_minibatch_sum():
    """On linreg's minibatch oracle the held-out bug's gradient is prior + N/(B + 1) x the minibatch sum, in both
    backends; where the oracle draws no minibatch (icg) it is the oracle's own."""
    from tests.heldout import sgld_minibatch_off_by_one as bug

    target = targets.get("linreg", num_data=40, dim=2, noise="minibatch", noise_batch_size=8)
    x = np.array([0.3, -0.2])
    draw = {"indices": np.array([0, 3, 3, 7, 11, 20, 31, 39])}
    expected = (target.grad_log_prior(x) + 40 / 9 * np.asarray(target.grad_log_likelihood(x, draw["indices"])))
    np.testing.assert_allclose(bug.gradient(GradientOracle(target, draw), x), expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda y, d: bug.gradient(GradientOracle(target, d), y))(
        jnp.asarray(x), {"indices": jnp.asarray(draw["indices"])})), expected, rtol=1e-12)
    icg = targets.get("icg", dim=4, condition_number=4.0, rotation_seed=0, noise="isotropic", noise_variance=2.0)
    icg_draw = numpy_draws(np.random.default_rng(0), icg.draw_spec, ())
    oracle = GradientOracle(icg, icg_draw)
    np.testing.assert_array_equal(bug.gradient(oracle, np.ones(4)), oracle(np.ones(4)))
