r"""blackjax's contour SGLD (``blackjax:csgld``, Deng, Lin & Liang 2020) and the importance-weighted check
against truth (``sgbench.bench.validate.weighted_truth``).

The adapter: it runs under the JAX driver in float32 and float64, counts the two oracle evaluations of each
step (the gradient at the old position, blackjax's ``logdensity_estimator`` at the new one), refuses bad
hyperparameters by name, returns its final states through the driver, and at ``zeta = 0`` draws exactly what
``blackjax:sgld`` draws from the same seed (the gradient multiplier is exactly 1, and the same key makes the
same noise).

The weighted check: its log-sum-exp accumulation equals the weighted sums computed directly from the states,
and its linearised statistics average to the pooled self-normalised estimates. It fails the deliberately wrong
uses of contour SGLD's draws (no weights, weights of the wrong sign: relative variance errors of about +2 and
+5 at 256 chains, ``reports/csgld/README.md``): the first with 64 chains of 4000 + 4000 steps (``FAST_WRONG``:
its step ladder must also find that the error persists as the steps shrink), the second at full scale only
(``statistical``: its estimate is heavy-tailed). It does not fail correct samplers with constant weights
(``blackjax:sgld``, csgld at ``zeta = 0``) with 32 chains of 3000 + 3000 steps (``FAST``), which cannot resolve
0.1 (INCONCLUSIVE, naming the chains that would, beyond a budget too small to run them). Each check of a correct
sampler is FAILED by chance with probability at most ``alpha`` = 1e-3 over all its looks (the check's design).
The held-out runs at full scale (256 chains, 20 000 + 20 000 steps) are marked ``statistical``; their
recorded results are in ``reports/csgld/README.md``.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sgbench import targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.adapters import blackjax as bj, load
from sgbench.bench.gate import start
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.running import run as running
from sgbench.bench.validate import targets as vt, weighted_truth as wt
from sgbench.samplers._contract import GradientOracle

ICG = dict(vt.get("icg").params)
EXACT = {"noise": "none"}
U_MIN = 2 * np.log(2 * np.pi)
# exact energies, the minimum energy in the first partition: contour SGLD's best case on icg
PARTITION = dict(step_size=0.01, step_size_stoch=0.01, zeta=1.0, num_partitions=60, energy_gap=0.25,
                 min_energy=float(U_MIN - 0.125))
FAST = dict(num_chains=32, num_steps=3000, warmup=3000)
FAST_WRONG = dict(num_chains=64, num_steps=4000, warmup=4000)  # the ladder needs these to see the error persist


class RuntimeCountingOracle(GradientOracle):
    """An oracle whose counter runs at every executed evaluation, inside compiled code too."""

    def _count(self) -> None:
        jax.debug.callback(self.on_evaluation)


# --- the adapter ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_csgld_runs_under_the_jax_driver(dtype):
    params = bj.csgld.settings[0].params
    result = running.run(bj.csgld, "icg", target_params=ICG, params=params, num_chains=2, num_steps=300,
                         dtype=dtype, block_size=300)
    assert result.diagnostics["diverged"] == [False, False]
    assert result.trace.grad_evals.tolist() == [600, 600]  # two oracle evaluations per step
    final = result.trace.final_state
    assert isinstance(final, bj.CSGLDState)
    assert final.position.shape == (2, 4) and final.position.dtype == np.dtype(dtype)
    assert final.energy_pdf.shape == (2, params["num_partitions"]) and final.energy_idx.dtype == np.int32
    np.testing.assert_allclose(final.energy_pdf.sum(axis=1), 1.0, rtol=1e-4)  # the update keeps the sum
    assert final.step.tolist() == [300, 300]


def test_csgld_counts_the_gradient_and_the_log_density():
    target = targets.get("icg", **ICG)
    p = bj.csgld.params(**bj.csgld.settings[0].params)
    calls = []
    state = bj.csgld.start(np.ones(4), p, GradientOracle.exact(target, lambda: calls.append("prime")))
    oracle = RuntimeCountingOracle(target, numpy_draws(np.random.default_rng(0), target.draw_spec),
                                   lambda: calls.append("step"))
    new, info = jax.jit(lambda s: bj.csgld.optimized_step(s, oracle, {"seed": np.array([1, 2])}, p))(state)
    jax.effects_barrier()
    assert calls.count("step") == info.num_grad_evals == 2 and "prime" not in calls
    # the new partition is the one of the oracle's log density at the new position, from the same draw
    energy = -GradientOracle(target, oracle.draw).value_and_grad(np.asarray(new.position))[0]
    expected = np.clip(np.floor((energy - p.min_energy) / p.energy_gap + 1), 1, p.num_partitions - 1)
    assert int(new.energy_idx) == int(expected)


@pytest.mark.parametrize(("name", "value", "accepted"), [
    ("step_size", 0.0, "step_size"), ("step_size_stoch", 0.0, "step_size_stoch"),
    ("step_size_stoch", 1.5, "step_size_stoch"), ("zeta", -0.5, "zeta"), ("temperature", 0.0, "temperature"),
    ("num_partitions", 2, "num_partitions"), ("num_partitions", 10.5, "num_partitions"),
    ("energy_gap", -1.0, "energy_gap"), ("min_energy", float("inf"), "min_energy"),
])
def test_csgld_params_name_the_bad_parameter(name, value, accepted):
    params = {"step_size": 0.01, name: value}
    with pytest.raises((ValueError, TypeError), match=accepted):
        bj.csgld.params(**params)


def test_csgld_params_defaults_are_blackjax_s():
    p = bj.csgld.params(step_size=0.01)
    assert (p.step_size_stoch, p.zeta, p.temperature, p.num_partitions, p.energy_gap, p.min_energy) == (
        1e-3, 1.0, 1.0, 512, 10.0, 0.0)
    assert bj.csgld.params(step_size=0.01, zeta=0.0).zeta == 0.0  # zeta = 0 is SGLD, accepted


def test_csgld_is_loaded_by_name_and_claims_nothing():
    assert load("blackjax:csgld") is bj.csgld
    assert bj.csgld.claims is None and bj.csgld.log_weight is bj.csgld_log_weight
    with pytest.raises(ValueError, match="claims no suite sampler"):
        bj.csgld.to_reference({"step_size": 0.01})
    assert "cyclical" in bj.csgld.differences  # the suite's csgld is another method


def test_csgld_settings():
    settings = bj.csgld.settings
    assert len(settings) >= 2 and all(s.targets == "icg" and s.probes for s in settings)
    params = [bj.csgld.params(**s.params) for s in settings]
    assert {p.zeta == 1.0 for p in params} == {True, False}
    assert {p.temperature == 1.0 for p in params} == {True, False}
    for p in params:  # the partitions start at or below icg's minimum energy and reach well above it
        assert p.min_energy <= U_MIN < p.min_energy + p.energy_gap
        assert p.min_energy + (p.num_partitions - 2) * p.energy_gap > U_MIN + 15 * p.temperature


def test_csgld_at_zeta_zero_draws_what_blackjax_sgld_draws():
    """The same driver seed gives both the same seed and gradient-noise draws (the same draw spec), so
    positions agree exactly: the multiplier is exactly 1 at zeta = 0."""
    common = dict(target_params=ICG, num_chains=3, num_steps=400, seed=7, keep_samples=True, block_size=400)
    csgld = running.run(bj.csgld, "icg", params={**bj.csgld.settings[0].params, "zeta": 0.0}, **common)
    sgld = running.run(bj.sgld, "icg", params=dict(step_size=0.01), **common)
    np.testing.assert_array_equal(csgld.samples, sgld.samples)
    assert not np.allclose(csgld.samples[:, 0], csgld.samples[:, -1])  # the chains moved


def test_csgld_log_weight_is_zeta_log_theta_of_the_partition():
    p = bj.csgld.params(step_size=0.01, zeta=0.75, num_partitions=5)
    state = bj.CSGLDState(jnp.zeros(2), jnp.array([0.1, 0.2, 0.3, 0.25, 0.15]), jnp.int32(3), 1)
    assert float(bj.csgld_log_weight(state, p)) == pytest.approx(0.75 * np.log(0.25))


# --- the weighted check --------------------------------------------------------------------------------------------


def test_weighted_sums_are_the_direct_sums():
    """The wrapped sampler's running log-sum-exp sums equal the weighted sums computed from its states."""
    target = targets.get("icg", **ICG)
    params = bj.csgld.params(**{**PARTITION, "zeta": 0.75})
    center, scale = np.full(4, 0.1), np.array([1.0, 2.0, 0.5, 1.5])
    warmup, steps = 5, 40
    wrapped = wt.weighted_sampler(bj.csgld, warmup, center, scale, halfway=warmup + steps // 2)
    state = wrapped.start(jnp.asarray(target.sample(jax.random.key(1), 1)[0]) * 2, params,
                          GradientOracle.exact(target))
    rng = np.random.default_rng(3)
    step = jax.jit(lambda s, g, d: wrapped.optimized_step(s, GradientOracle(target, g), d, params)[0])
    logs, zs = [], []
    for t in range(warmup + steps):
        state = step(state, numpy_draws(rng, target.draw_spec), numpy_draws(rng, bj.draw_spec(4)))
        if t >= warmup:
            logs.append(float(bj.csgld_log_weight(state.inner, params)))
            zs.append((np.asarray(state.position) - center) / scale)
    logs, zs = np.array(logs), np.array(zs)
    w = np.exp(logs - logs.max())
    assert float(state.shift) == pytest.approx(logs.max())
    assert int(state.scored) == steps
    for half, part in enumerate((slice(0, steps // 2), slice(steps // 2, steps))):
        np.testing.assert_allclose(state.weight_sum[half], w[part].sum(), rtol=1e-12)
        np.testing.assert_allclose(state.weight_sq_sum[half], (w[part] ** 2).sum(), rtol=1e-12)
        np.testing.assert_allclose(state.first[half], (w[part, None] * zs[part]).sum(axis=0), rtol=1e-10)
        np.testing.assert_allclose(state.second[half], (w[part, None] * zs[part] ** 2).sum(axis=0), rtol=1e-10)


def test_linearised_statistics_average_to_the_pooled_estimates():
    rng = np.random.default_rng(0)
    chains, n = 6, 50
    logw = rng.normal(size=(chains, n)) + rng.normal(size=(chains, 1)) * 3  # chains on different scales
    z = rng.normal(size=(chains, n, 2))
    shift = logw.max(axis=1)
    w = np.exp(logw - shift[:, None])
    halves = (slice(0, n // 2), slice(n // 2, n))
    split = lambda v: np.stack([v[:, part].sum(1) for part in halves], axis=1)  # noqa: E731
    state = wt.WeightedState(None, None, shift, split(w), split(w * w), split(w[..., None] * z),
                             split(w[..., None] * z * z), n, n)
    u_mean, u_second, ess, b, healthy = wt._statistics(state, n, np.ones(chains, bool))
    W = np.exp(logw)
    np.testing.assert_allclose(u_mean[:, 0].mean(0), (W[..., None] * z).sum((0, 1)) / W.sum(), rtol=1e-10)
    np.testing.assert_allclose(u_second[:, 0].mean(0), (W[..., None] * z * z).sum((0, 1)) / W.sum() - 1, rtol=1e-10)
    np.testing.assert_allclose(u_mean[:, 0], (u_mean[:, 1] + u_mean[:, 2]) / 2, rtol=1e-10)  # halves of equal length
    np.testing.assert_allclose(ess, W.sum(1) ** 2 / (W * W).sum(1) / n)
    assert healthy.all() and b.mean() == pytest.approx(1.0)


def test_halved_params_halve_the_steps_only():
    params = bj.csgld.params(**PARTITION)
    full = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    half = wt.halved_params(full)
    assert half == {**full, "step_size": 0.005, "step_size_stoch": 0.005}
    assert wt.halved_params(full, times=3) == {**full, "step_size": 0.00125, "step_size_stoch": 0.00125}


def test_weighted_check_fails_contour_sgld_read_without_its_weights():
    """The flattened draws taken as the target's: an r that persists down the step ladder (h to h/8). (The
    weights of the wrong sign are failed at full scale, below: their estimate is too heavy-tailed to decide at
    this size.)"""
    sampler = dataclasses.replace(bj.csgld, name="unweighted", log_weight=None)
    check = wt.check_weighted(sampler, {**PARTITION, "zeta": 0.75}, target_params=EXACT, **FAST_WRONG)
    assert check.outcome is Outcome.FAILED, check.summary()
    assert check.ladder is not None and check.ladder.outcome == "persists", check.summary()
    assert "ladder of steps 0.01, 0.005, 0.0025, 0.00125" in check.reason
    assert not check.checks[1].passed and np.all(check.variance_error > 0.3)  # the flattened law is wider
    assert check.looks == 2  # the first run, then its step ladder
    assert check.checks[0].alpha == check.checks[1].alpha == pytest.approx(wt.ALPHA / 16)  # look 2: alpha / 4 / 4
    assert check.ladder.alpha == pytest.approx(wt.ALPHA / 8)


@pytest.mark.parametrize(("name", "params"), [
    ("blackjax:sgld", dict(step_size=0.02)),
    ("blackjax:csgld", {**bj.csgld.settings[0].params, "zeta": 0.0, "step_size": 0.02}),
])
def test_weighted_check_does_not_fail_correct_constant_weights(name, params):
    check = wt.check_weighted(load(name), params, budget="1e6", **FAST)  # too small a budget for more chains
    assert check.outcome is Outcome.INCONCLUSIVE, check.summary()
    assert check.chains_needed > FAST["num_chains"] and f"about {check.chains_needed}" in check.reason
    assert "beyond the budget (1e+06 gradient evaluations)" in check.reason and "budget" in check.reason
    assert check.detectable > 0.1 and check.diverged == 0 and check.weight_ess == pytest.approx(1.0)
    assert np.all(np.abs(check.variance_error) < 5 * check.variance_error_se + 0.05)
    assert check.chain_steps_per_second > 0 and check.grad_evals_per_second > 0 and check.wall_seconds > 0


# --- the weighted check's rules and remedies on synthetic runs ------------------------------------------------------

FORGOT = start.Travel(4000, 4000, 2.0, 100.0)
SLOW = start.Travel(4000, 4000, 0.5, 3000.0)


def _run(rng, r, chains=256, dim=4, sd=0.3, drift=0.0, travel=FORGOT, steps=8000):
    """A synthetic weighted run: per chain linearised statistics around mean error 0 and relative variance error
    ``r``, the second half of the window ``drift`` above the first."""
    u_mean, u_second = sd * rng.standard_normal((chains, dim)), r + sd * rng.standard_normal((chains, dim))
    halves = np.stack([np.stack([u + sign * drift / 2 + sd * rng.standard_normal(u.shape) for sign in (-1, 1)], axis=1)
                       for u in (u_mean, u_second)])
    return wt.WeightedRun(u_mean=u_mean, u_second=u_second, halves=halves, weight_ess=np.ones(chains),
                          mean_error=u_mean.mean(0), mean_error_se=u_mean.std(0) / np.sqrt(chains),
                          variance_error=u_second.mean(0), variance_error_se=u_second.std(0) / np.sqrt(chains),
                          ratio_bias=np.zeros((2, dim)), diverged=0, chains=chains, travel=travel, run_seconds=1.0,
                          compile_seconds=1.0, chain_steps=chains * steps, grad_evals=2.0 * chains * steps,
                          params={"step_size": 0.01})


def _decided(first, ladder=(), detect=0.1):
    runs = wt._Runs(first.chains, 4000, 4000, first=first, ladder=list(ladder), look=1)
    checks = wt._truth_checks(first, 5e-4)
    return wt._decide("s", runs, checks, wt._drift_check(first, 5e-4), Resolution(detect), 5e-4, 0.05), runs


def test_the_weighted_rules_name_the_remedy_that_would_decide():
    rng = np.random.default_rng(0)
    (outcome, _, _, fix), runs = _decided(_run(rng, 0.0, chains=64))  # correct, short of power: more chains
    assert outcome is Outcome.INCONCLUSIVE and fix.kind == "chains" and fix.amount > 64
    assert wt._cost(runs, fix)[0] == pytest.approx(math.ceil(1.2 * fix.amount) / 64 + 1)  # 1 s a run + 1 s compiling
    assert _decided(_run(rng, 0.0, chains=4096))[0][0] is Outcome.PASSED
    (outcome, _, _, fix), _ = _decided(_run(rng, 0.0, travel=SLOW))  # slow chains: a longer warm-up
    assert outcome is Outcome.INCONCLUSIVE and fix.kind == "warmup" and fix.amount == 9000  # 1.5 x 2 x 3000
    (outcome, reason, _, fix), _ = _decided(_run(rng, 1.0, drift=1.0))  # off truth while drifting: warm up longer
    assert outcome is Outcome.INCONCLUSIVE and fix.kind == "warmup" and fix.amount == 8000 and "drift" in reason
    (outcome, reason, _, fix), _ = _decided(dataclasses.replace(_run(rng, 0.0), diverged=3))
    assert outcome is Outcome.FAILED and fix is None and "diverged in 3 of 256 chains (4000 warm-up + 4000" in reason
    (outcome, _, _, fix), runs = _decided(_run(rng, 1.0))  # off truth, settled: the step ladder, h/2 to h/8
    assert outcome is Outcome.INCONCLUSIVE and fix.kind == "ladder"
    assert wt._cost(runs, fix)[0] == pytest.approx(2 + 4 + 8 + 3)  # 3 runs, 2 to 8 times as long, 3 compilations


@pytest.mark.parametrize("errors, expected", [((1.0, 1.0, 1.0, 1.0), Outcome.FAILED),
                                              ((1.0, 0.5, 0.25, 0.125), Outcome.PASSED)],
                         ids=["persists", "vanishes"])
def test_the_weighted_step_ladder_decides_a_disagreement(errors, expected):
    """r that stays at 1 down the ladder is FAILED; r that halves with the step (a first-order discretisation
    bias, 0.125 at h/8, each rung's r to a standard error of 0.0016) is PASSED, as in validate. (At three times that
    error the allowed orders extrapolate to an interval wider than 0.1: undecided, as the ladder's design says.)"""
    rng = np.random.default_rng(1)
    rungs = [_run(rng, e, chains=4096, sd=0.1) for e in errors]
    (outcome, reason, fit, fix), _ = _decided(rungs[0], rungs[1:])
    assert outcome is expected and fix is None and fit is not None, reason
    assert ("persists" if expected is Outcome.FAILED else "vanishes") == fit.outcome


def test_weighted_check_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="alpha"):
        wt.check_weighted(bj.sgld, dict(step_size=0.01), alpha=0.0)
    with pytest.raises(ValueError, match="detect"):
        wt.check_weighted(bj.sgld, dict(step_size=0.01), detect=-1.0)
    with pytest.raises(ValueError, match="num_chains"):
        wt.check_weighted(bj.sgld, dict(step_size=0.01), num_chains=1)
    with pytest.raises(ValueError, match="targets must be among"):
        wt.check_weighted(bj.sgld, dict(step_size=0.01), target_key="nope", num_chains=2, num_steps=4)



def test_validate_holds_an_importance_sampler_to_truth_through_its_weights(tmp_path):
    """``validate`` of contour SGLD runs the weighted check per target (not the unweighted checks, which its
    flattened draws fail whatever the step), says so in each target's basis, and writes its page; a target without
    an exact truth is INCONCLUSIVE, saying so; a claim is refused before anything runs."""
    from sgbench.bench.validate import page as validate_page
    from sgbench.bench.validate.validate import validate

    validation = validate(bj.csgld, PARTITION, targets="icg,logreg", out=tmp_path, budget="5s",
                          progress=lambda _: None, **FAST)
    verdict = validation.verdict
    assert set(verdict.basis.values()) == {"truth, through its importance weights (the weighted check)"}
    assert set(verdict.checks["of"]) == {"truth (weighted)"} and set(verdict.checks["target"]) == {"icg"}
    assert "weighted estimates" in verdict.reasons["icg"], verdict.summary()
    assert verdict.outcomes["logreg"] is Outcome.INCONCLUSIVE and "no exact truth" in verdict.reasons["logreg"]
    assert verdict.costs["icg"][1] > FAST["num_chains"] * (FAST["num_steps"] + FAST["warmup"])
    assert validate_page.write(validation).exists()
    with pytest.raises(ValueError, match="claims .*importance sampler"):
        validate(bj.csgld, PARTITION, claims="sgld", targets="icg", out=tmp_path)


def test_an_interrupted_weighted_validation_keeps_the_targets_it_decided(tmp_path, monkeypatch):
    """Ctrl-C in the second target's weighted check: ``Interrupted`` carries the first target's verdict and names the
    other as unfinished, and its page says so."""
    from sgbench.bench.validate import page as validate_page, weighted as validate_weighted
    from sgbench.bench.validate.result import Interrupted
    from sgbench.bench.validate.validate import validate

    check = validate_weighted.check_weighted

    def interrupted_on_gmm(sampler, params, target_key, **options):
        if target_key == "gmm":
            raise KeyboardInterrupt
        return check(sampler, params, target_key=target_key, **options)

    monkeypatch.setattr(validate_weighted, "check_weighted", interrupted_on_gmm)
    with pytest.raises(Interrupted) as stopped:
        validate(bj.csgld, PARTITION, targets="icg,gmm", out=tmp_path, budget="5s", progress=lambda _: None, **FAST)
    verdict = stopped.value.validation.verdict
    assert set(verdict.outcomes) == {"icg"} and verdict.unfinished == ("gmm",), verdict.summary()
    assert set(verdict.checks["target"]) == {"icg"}
    assert "interrupted before gmm was decided" in validate_page.write(stopped.value.validation).read_text()


# --- held-out runs at full scale -----------------------------------------------------------------------------------


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "params", "allowed"), [
    ("blackjax:sgld", dict(step_size=0.01), {Outcome.PASSED}),
    ("blackjax:csgld", {**bj.csgld.settings[0].params, "zeta": 0.0}, {Outcome.PASSED}),
])
def test_weighted_check_passes_correct_samplers(name, params, allowed):
    check = wt.check_weighted(load(name), params)
    assert check.outcome in allowed, check.summary()


@pytest.mark.statistical
def test_weighted_check_passes_a_correct_importance_sampler():
    """SGLD at 1.5 T weighted by pi^(1/3) back to T: weights that are not constant, and exact."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports" / "csgld"))
    import variants

    check = wt.check_weighted(variants.tempered_sgld(targets.get("icg", **ICG)), dict(step_size=0.01))
    assert check.outcome is Outcome.PASSED, check.summary()
    assert check.weight_ess < 0.95


@pytest.mark.statistical
@pytest.mark.parametrize("wrong", ["unweighted", "wrong sign"])
def test_weighted_check_fails_wrong_weights_at_full_scale(wrong):
    sampler = (dataclasses.replace(bj.csgld, name="unweighted", log_weight=None) if wrong == "unweighted" else
               dataclasses.replace(bj.csgld, name="wrong sign",
                                   log_weight=lambda state, params: -bj.csgld_log_weight(state, params)))
    check = wt.check_weighted(sampler, {**PARTITION, "zeta": 0.75}, target_params=EXACT)
    assert check.outcome is Outcome.FAILED, check.summary()
