r"""Adapters of other libraries' samplers (``bench/adapters``): they run under the driver they declare,
count their gradient evaluations, translate their conventions into the suite's, and sample the target.

**One-step laws** (SGLD of both libraries; posteriors' BAOA). On a Gaussian target with exact
gradients the suite's reference step is affine in its normal draws, so its one-step law from a fixed
state is Gaussian with mean ``step(0)`` and covariance :math:`JJ^\top`, :math:`J_{:,k} = step(e_k) - step(0)`:
computed exactly from ``samplers.get(claims).reference_step`` with ``to_reference(params)``, not from a
formula written here. The adapter's increments from ``M`` seeds are tested against it: a z-test per
coordinate of the mean, a chi-square test per coordinate of the whitened variance, a z-test per pair of
the whitened correlation; Bonferroni over those tests at family-wise false-failure rate ``ALPHA_LAW`` =
1e-6 (exact for the mean and variance under normality; the pair tests up to the CLT over ``M`` = 40 000
products). Power, asserted from the design: the Welling & Teh reading of the step size (half the
drift, half the variance) and a temperature off by 10 % are rejected with probability >= 1 - 1e-6.

**Bias at a small step** (``test_sgld_adapters_reach_the_target``). On icg (dimension 4, condition number
4, exact gradients plus isotropic noise of variance ``v`` = 1) SGLD's relative variance error per
coordinate obeys :math:`0 \le r_i \le Kh`, :math:`K = (\lambda_{max} + v)/(2 - h\lambda_{max})` (the module
docstring of ``tests/test_langevin_gates.py`` derives it from the Lyapunov recursion); chains start at
exact draws, so the time average of :math:`E_t = E^* - A^tE^*A^t` stays in the same interval. Per chain
``r_ij`` is the time average of :math:`x_i^2` over ``Sigma_ii`` minus 1; across ``C`` independent chains a t-test
(``C - 1`` degrees of freedom, up to the CLT) checks both ends, Bonferroni over coordinates and sides at
family-wise rate ``ALPHA_BIAS`` = 1e-4. With ``C`` = 200 chains of 3000 steps at :math:`h = 0.02`
(:math:`Kh = 0.031`) the measured standard errors are 0.011-0.018 (critical t 4.32), so a relative variance
error of 0.13 in every coordinate (a temperature 13 % off) is detected with probability 0.9; a step-size or
noise convention error (a factor 2) is detected surely. blackjax runs through ``bench.run`` (JAX
driver); posteriors' update is elementwise, so its chains advance as one (C, d) array through the
adapter's step (the NumPy driver runs one chain at a time, about 1 ms per step: 600 000 chain-steps
would take 10 minutes).
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
import scipy.stats

from sgbench import samplers, targets
from sgbench.base.draws import numpy_draws
from sgbench.bench.adapters import AdaptedSampler, blackjax as bj, load
from sgbench.bench.adapters._adapted import WrongBackendError
from sgbench.bench.running import run as running
from sgbench.samplers._contract import GradientOracle

ALPHA_LAW = 1e-6
ALPHA_BIAS = 1e-4
ICG = dict(dim=4, condition_number=4.0, noise="isotropic", noise_variance=1.0)
LAW_DRAWS = 40_000

RUNS = {  # adapter: (params, gradient evaluations per step, at the start)
    "blackjax:sgld": (dict(step_size=0.05), 1, 0),
    "blackjax:sghmc": (dict(step_size=0.1, alpha=1.0, num_integration_steps=3), 3, 0),
    "blackjax:sgnht": (dict(step_size=0.1, alpha=1.0), 1, 0),
    "blackjax:mclmc": (dict(step_size=0.3, L=2.0), 2, 1),
    "posteriors:sgld": (dict(lr=0.5, num_data=10.0), 1, 0),
    "posteriors:sglrw": (dict(lr=0.05), 1, 0),
    "posteriors:sghmc": (dict(lr=0.1, alpha=1.0), 1, 0),
    "posteriors:sgnht": (dict(lr=0.1, alpha=1.0), 1, 0),
    "posteriors:baoa": (dict(lr=0.1, alpha=1.0, num_data=4.0), 1, 0),
}


def posteriors_adapters():
    """``sgbench.bench.adapters.posteriors``; the test skips where torch or posteriors is not installed."""
    pytest.importorskip("torch")
    pytest.importorskip("posteriors")
    return pytest.importorskip("sgbench.bench.adapters.posteriors")


def adapter(name: str) -> AdaptedSampler:
    """The adapter ``name`` (posteriors' skip where they cannot be imported)."""
    if name.startswith("posteriors:"):
        posteriors_adapters()
    return load(name)


@pytest.mark.parametrize("name", RUNS)
def test_adapter_runs_under_its_driver(name):
    sampler = adapter(name)
    params, per_step, at_start = RUNS[name]
    num_steps = 200
    dtype = "float32" if sampler.backend == "jax" else "float64"  # float32 chains stay float32 through blackjax
    result = running.run(sampler, "icg", target_params=ICG, params=params, num_chains=2, num_steps=num_steps,
                         backend=sampler.backend, dtype=dtype, block_size=num_steps)  # one block: one body to compile
    assert np.all(np.isfinite(result.moments.mean_sq)) and np.all(np.isfinite(result.moments.mean))
    assert result.diagnostics["diverged"] == [False, False]
    assert result.trace.grad_evals.tolist() == [at_start + per_step * num_steps] * 2
    assert result.sampler == name
    if sampler.claims is not None:
        sampler.reference().params(**sampler.to_reference(params))  # the translation is valid for the claimed sampler


@pytest.mark.parametrize("name", ["blackjax:sgld", "posteriors:sgld"])
def test_the_other_backend_says_which_to_use(name):
    sampler = adapter(name)
    other = "numpy" if sampler.backend == "jax" else "jax"
    params = RUNS[name][0]
    with pytest.raises(WrongBackendError, match=f"backend={sampler.backend!r}"):
        running.run(sampler, "icg", target_params=ICG, params=params, num_chains=1, num_steps=2, backend=other)


def test_load_and_names():
    assert load("blackjax:sgld") is bj.sgld is load("sgbench.bench.adapters.blackjax:sgld")
    for spec in ("blackjax", "blackjax:Params", "sgbench.bench.adapters.blackjax:draw_spec"):
        with pytest.raises(ValueError, match="adapter"):
            load(spec)
    assert "blackjax:sgld" not in samplers.names()  # adapters stay out of the suite's registry
    assert {(a.library, a.backend, a.claims) for a in (bj.sgld, bj.sghmc, bj.sgnht, bj.mclmc)} == {
        ("blackjax", "jax", "sgld"), ("blackjax", "jax", "sghmc"), ("blackjax", "jax", None),
        ("blackjax", "jax", "mclmc")}


def test_posteriors_adapters_step_all_chains_at_once_but_sgnht():
    """posteriors' elementwise updates run under the batched driver; SGNHT's thermostat, an average over all
    coordinates, would couple chains stepped as one array, so its adapter steps one chain at a time."""
    ps = posteriors_adapters()
    assert {a.name: a.backend for a in (ps.sgld, ps.sglrw, ps.sghmc, ps.baoa, ps.sgnht)} == {
        "posteriors:sgld": "batched", "posteriors:sglrw": "batched", "posteriors:sghmc": "batched",
        "posteriors:baoa": "batched", "posteriors:sgnht": "numpy"}


def test_the_temperature_validate_holds_a_posteriors_adapter_to_is_the_suites():
    """posteriors' tau = 0.05 with N = 10 samples at the suite's T = N tau = 0.5: validate's truth for it is
    N(mu, 0.5 Sigma), not N(mu, 0.05 Sigma) (which made its r against truth read +9 on the conformance page)."""
    from sgbench.bench.gate import cells as gate_cells
    from sgbench.bench.validate.plan import _temperature

    ps = posteriors_adapters()
    params = {"lr": 0.1, "num_data": 10.0, "temperature": 0.05}
    cell = gate_cells.Cell(ps.sgld.name, params, target="icg", target_params=ICG)
    assert _temperature(ps.sgld, cell) == pytest.approx(0.5) == ps.sgld.to_reference(params)["temperature"]
    assert _temperature(bj.sgld, gate_cells.Cell(bj.sgld.name, {"step_size": 0.01, "temperature": 0.5}, target="icg",
                                                 target_params=ICG)) == 0.5  # blackjax's units are the suite's


def test_translations():
    assert bj.sgld.to_reference({"step_size": 0.1, "temperature": 0.5}) == {"step_size": 0.1, "temperature": 0.5}
    assert bj.sgld.differences == ""
    got = bj.sghmc.to_reference({"step_size": 0.1, "alpha": 2.0, "beta": 3.0, "temperature": 0.5})
    assert got == pytest.approx({"form": "chen", "integrator": "explicit_euler", "step_size": 0.01, "friction": 0.2,
                                 "noise_estimate": 0.75, "temperature": 0.5, "refresh_every": 10})
    with pytest.raises(ValueError, match="claims no suite sampler"):  # explicit Euler: the suite's sgnht differs
        bj.sgnht.to_reference({"step_size": 0.1})
    leapfrog = bj.mclmc.to_reference({"step_size": 0.3, "L": 2.0, "integrator": "velocity_verlet"})
    assert leapfrog == {"step_size": 0.3, "L": 2.0, "integrator": "leapfrog"}
    for sampler, params in ((bj.mclmc, {"step_size": 0.3, "L": 2.0, "integrator": "omelyan"}),
                            (bj.mclmc, {"step_size": 0.3, "L": 2.0, "desired_energy_var_max_ratio": 10.0})):
        with pytest.raises(ValueError, match="suite's"):
            sampler.to_reference(params)
    with pytest.raises(ValueError, match="step_size"):
        bj.sgld.to_reference({"step_size": -1.0})


def test_posteriors_translations():
    ps = posteriors_adapters()
    assert ps.sgld.to_reference({"lr": 2.0, "num_data": 10.0}) == pytest.approx({"step_size": 0.2, "temperature": 1.0})
    assert ps.sglrw.to_reference({"lr": 2.0, "num_data": 10.0, "temperature": 0.05}) == pytest.approx(
        {"step_size": 0.2, "temperature": 0.5})
    expected = {"form": "chen", "step_size": 0.1**2 / (4 * 10), "friction": 0.1 * 3 / 4, "temperature": 1.0}
    assert ps.baoa.to_reference({"lr": 0.1, "alpha": 3.0, "sigma": 2.0, "num_data": 10.0}) == pytest.approx(
        {**expected, "integrator": "splitting"})
    assert ps.sghmc.to_reference({"lr": 0.1, "alpha": 3.0, "sigma": 2.0, "num_data": 10.0, "temperature": 0.2,
                                  "beta": 1.0}) == pytest.approx(
        {**expected, "temperature": 2.0, "integrator": "explicit_euler", "noise_estimate": 4.0})
    assert ps.sgnht.claims is None  # explicit Euler with the thermostat on the old momentum: no suite sgnht
    with pytest.raises(ValueError, match="beta"):
        ps.sgld.to_reference({"lr": 0.1, "beta": 1.0})


# --- gradient evaluations ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "params", "expected"), [
    ("sgld", dict(step_size=0.05), 1),
    ("sghmc", dict(step_size=0.1, num_integration_steps=4), 4),
    ("sgnht", dict(step_size=0.1), 1),
    ("mclmc", dict(step_size=0.3, L=2.0), 2),
    ("mclmc", dict(step_size=0.3, L=2.0, integrator="velocity_verlet"), 1),
    ("mclmc", dict(step_size=0.3, L=2.0, integrator="yoshida"), 3),
    ("mclmc", dict(step_size=0.3, L=2.0, integrator="omelyan"), 5),
])
def test_blackjax_gradient_counts_are_the_evaluations_made(name, params, expected):
    """Counted at run time (a host callback per oracle evaluation, so the L evaluations of SGHMC's
    ``lax.scan`` count L times), against ``Info.num_grad_evals``."""
    sampler = getattr(bj, name)
    target = targets.get("icg", **ICG)
    p = sampler.params(**params)
    calls = []
    state = sampler.start(np.ones(target.dim), p, GradientOracle.exact(target, lambda: calls.append("prime")))
    oracle = RuntimeCountingOracle(target, numpy_draws(np.random.default_rng(0), target.draw_spec),
                                   lambda: calls.append("step"))
    new, info = sampler.optimized_step(state, oracle, {"seed": np.array([1, 2])}, p)
    jax.effects_barrier()
    assert calls.count("step") == info.num_grad_evals == expected
    assert calls.count("prime") == (1 if name == "mclmc" else 0)
    if name == "mclmc":  # the cached log density and gradient are the oracle's at the new position, same draw
        value, gradient = GradientOracle(target, oracle.draw).value_and_grad(np.asarray(new.position))
        np.testing.assert_allclose(new.gradient, gradient, rtol=1e-12)
        np.testing.assert_allclose(new.logdensity, value, rtol=1e-12)


class RuntimeCountingOracle(GradientOracle):
    """An oracle whose counter runs at every executed evaluation, inside compiled loops too."""

    def _count(self) -> None:
        jax.debug.callback(self.on_evaluation)


# --- one-step laws -------------------------------------------------------------------------------------------------


def reference_law(name: str, reference_params: dict, state, oracle):
    """Mean and covariance of the position after one step of the suite's reference sampler ``name`` from
    ``state``: its reference step is affine in the normal draws, so both are exact."""
    sampler = samplers.get(name)
    params = sampler.params(**reference_params)
    spec = sampler.draw_spec(oracle.target.dim, params)
    assert set(spec) == {"noise"} and spec["noise"].law == "normal"
    dim = spec["noise"].shape[0]

    def position(noise):
        return sampler.reference_step(state, oracle, {"noise": noise}, params)[0].position

    mean = position(np.zeros(dim))
    jacobian = np.stack([position(e) - mean for e in np.eye(dim)], axis=1)
    z = np.random.default_rng(1).standard_normal(dim)
    np.testing.assert_allclose(position(z), mean + jacobian @ z, rtol=0, atol=1e-12)  # affine, so the law is exact
    return mean, jacobian @ jacobian.T


def law_statistics(positions, mean, covariance):
    """(z of each coordinate's mean, chi-square of each whitened coordinate's variance about the known
    mean, z of each whitened pair's correlation) of ``positions`` (M, d) against N(mean, covariance)."""
    m, d = positions.shape
    scale = np.linalg.cholesky(covariance)
    white = np.linalg.solve(scale, (positions - mean).T).T
    z_mean = (positions.mean(axis=0) - mean) / np.sqrt(np.diag(covariance) / m)
    chi2 = (white**2).sum(axis=0)
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    z_pairs = np.array([(white[:, i] * white[:, j]).sum() / math.sqrt(m) for i, j in pairs])
    return z_mean, chi2, z_pairs


def law_critical_values(m: int, d: int):
    """Two-sided Bonferroni critical values at family-wise ``ALPHA_LAW``: (z, chi-square low, high)."""
    tests = d + d + d * (d - 1) // 2
    a = ALPHA_LAW / tests
    return scipy.stats.norm.ppf(1 - a / 2), scipy.stats.chi2.ppf(a / 2, m), scipy.stats.chi2.ppf(1 - a / 2, m)


def assert_law(positions, mean, covariance):
    m, d = positions.shape
    z_crit, chi_low, chi_high = law_critical_values(m, d)
    z_mean, chi2, z_pairs = law_statistics(positions, mean, covariance)
    assert np.all(np.abs(z_mean) <= z_crit), f"mean: z = {z_mean}, critical {z_crit:.2f}"
    assert np.all((chi_low <= chi2) & (chi2 <= chi_high)), (
        f"variance: chi2/M = {chi2 / m}, accepted [{chi_low / m:.4f}, {chi_high / m:.4f}]")
    assert np.all(np.abs(z_pairs) <= z_crit), f"correlation: z = {z_pairs}, critical {z_crit:.2f}"


def assert_design_rejects_convention_errors(step_size, gradient, variance, m):
    """The tests of ``assert_law`` reject, with probability >= 1 - ALPHA_LAW, the law of the Welling & Teh
    reading (drift h/2, variance 2hT/2) and a temperature 10 % off (variance x 1.1)."""
    d = len(gradient)
    z_crit, chi_low, chi_high = law_critical_values(m, d)
    z_sure = scipy.stats.norm.ppf(1 - ALPHA_LAW)
    shift = np.max(np.abs(step_size / 2 * gradient) / np.sqrt(np.diag(variance) / m))
    assert shift >= z_crit + z_sure  # the drift h/2 instead of h moves some mean z by `shift`
    for ratio in (0.5, 1.1):  # the whitened variance is ratio * chi2_M: mean ratio * M, sd ratio * sqrt(2M)
        assert ratio * (m + z_sure * math.sqrt(2 * m)) < chi_low or ratio * (m - z_sure * math.sqrt(2 * m)) > chi_high


def gaussian_at(gradient):
    """The noise-free icg and the position where its gradient is ``gradient``."""
    target = targets.get("icg", dim=ICG["dim"], condition_number=ICG["condition_number"])
    return target, -target.covariance @ np.asarray(gradient)


GRADIENT = np.array([1.5, -1.0, 2.0, -1.2])


@pytest.mark.parametrize("params", [dict(step_size=0.1), dict(step_size=0.05, temperature=0.7)])
def test_blackjax_sgld_one_step_law_is_the_reference_law(params):
    target, x0 = gaussian_at(GRADIENT)
    oracle = GradientOracle.exact(target)
    mean, covariance = reference_law("sgld", bj.sgld.to_reference(params), samplers.get("sgld").init(x0, None),
                                     oracle)
    assert_design_rejects_convention_errors(bj.sgld.to_reference(params)["step_size"], GRADIENT, covariance,
                                            LAW_DRAWS)
    p = bj.sgld.params(**params)
    seeds = np.random.default_rng(2).integers(0, 2**31 - 1, (LAW_DRAWS, 2))
    step = jax.jit(jax.vmap(lambda seed: bj.sgld.optimized_step(bj.sgld.init(x0, p), oracle, {"seed": seed}, p)[0]))
    assert_law(np.asarray(step(seeds).position), mean, covariance)


def posteriors_positions(sampler, state, oracle, params, rows=4000, calls=10, seed=3):
    """Positions after one step from ``state`` (its position tiled ``rows`` times, every row an independent
    chain of posteriors' elementwise update), for ``calls`` seeds: (rows * calls, d)."""
    rng = np.random.default_rng(seed)
    tiled = state._replace(**{f: np.tile(getattr(state, f), (rows, 1)) for f in ("position", "momentum")
                              if f in state._fields})
    return np.concatenate([sampler.reference_step(tiled, oracle, numpy_draws(rng, sampler.draw_spec(0)), params)[0]
                           .position for _ in range(calls)])


@pytest.mark.parametrize("params", [dict(lr=1.0, num_data=10.0), dict(lr=0.5, num_data=10.0, temperature=0.07)])
def test_posteriors_sgld_one_step_law_is_the_reference_law(params):
    ps = posteriors_adapters()
    target, x0 = gaussian_at(GRADIENT)
    oracle = GradientOracle.exact(target)
    reference = ps.sgld.to_reference(params)
    mean, covariance = reference_law("sgld", reference, samplers.get("sgld").init(x0, None), oracle)
    assert_design_rejects_convention_errors(reference["step_size"], GRADIENT, covariance, LAW_DRAWS)
    positions = posteriors_positions(ps.sgld, ps.sgld.init(x0, None), oracle, ps.sgld.params(**params))
    assert positions.shape == (LAW_DRAWS, 4)
    assert_law(positions, mean, covariance)


def test_posteriors_baoa_one_step_law_and_its_float32_friction():
    """BAOA from (x, m) is the reference's splitting SGHMC from (x, v = lr/sigma^2 (m + lr g(x)/N)) (posteriors
    kicks first). At a per-step friction gamma lr = alpha lr / sigma^2 of 0.022 the laws agree. posteriors
    makes gamma = torch.tensor(alpha * prec) in float32, so exp(-gamma lr) and the noise scale are float32:
    at gamma lr = 1e-7 the position variance (lr/2)^2 sigma^-2 tau (1 - e^{-2 gamma lr}) comes out about 10.6 %
    small (measured ratio 0.85-0.95, the chi-square test rejects the reference law); at 1e-8 exp rounds to 1
    and the step injects no noise at all."""
    ps = posteriors_adapters()
    target, x0 = gaussian_at(GRADIENT)
    oracle = GradientOracle.exact(target)
    m0 = np.array([0.3, -0.2, 0.1, 0.5])
    reference_sampler = samplers.get("sghmc")
    for alpha in (0.5, 2.25e-6, 2.25e-7):  # gamma lr = 0.022, 1e-7, 1e-8
        params = ps.baoa.params(lr=0.1, alpha=alpha, sigma=1.5, num_data=2.0)
        reference = ps.baoa.to_reference(params)
        v0 = params.lr / params.sigma**2 * (m0 + params.lr * target.grad_logdensity(x0) / params.num_data)
        start = reference_sampler.init(x0, reference_sampler.params(**reference))._replace(momentum=v0)
        mean, covariance = reference_law("sghmc", reference, start, oracle)
        positions = posteriors_positions(ps.baoa, ps.MomentumState(x0, m0, 1), oracle, params)
        if alpha == 0.5:
            assert_law(positions, mean, covariance)
        elif alpha == 2.25e-6:
            _, chi2, _ = law_statistics(positions, mean, covariance)
            _, chi_low, _ = law_critical_values(*positions.shape)
            ratio = chi2 / len(positions)
            assert np.all(chi2 < chi_low) and np.all((0.85 < ratio) & (ratio < 0.95)), (
                f"posteriors' BAOA variance ratio {ratio} at gamma lr = 1e-7: update the validation report")
        else:
            assert np.all(positions == positions[0]), "posteriors' BAOA now injects noise at gamma lr = 1e-8"


def test_posteriors_num_data_changes_nothing_but_the_scale():
    """posteriors' SGLD with (lr, N) and (c lr, c N) at temperature 1/N is one chain (h = lr/N): equal
    draw for draw; and the caller's torch generator is left as it was."""
    torch = pytest.importorskip("torch")
    ps = posteriors_adapters()
    target = targets.get("icg", **ICG)
    rng = np.random.default_rng(4)
    draws = [numpy_draws(rng, {"s": ps.sgld.draw_spec(4)["seed"], **target.draw_spec}) for _ in range(20)]
    torch.manual_seed(123)
    before = torch.default_generator.get_state()
    ends = []
    for params in (dict(lr=0.2, num_data=1.0), dict(lr=200.0, num_data=1000.0)):
        p, state = ps.sgld.params(**params), ps.sgld.init(np.ones(4), None)
        for draw in draws:
            state, _ = ps.sgld.reference_step(state, GradientOracle(target, {"gradient_noise": draw["gradient_noise"]}),
                                              {"seed": draw["s"]}, p)
        ends.append(state.position)
    np.testing.assert_allclose(ends[0], ends[1], rtol=1e-12, atol=1e-12)
    assert not np.allclose(ends[0], np.ones(4))
    assert torch.equal(torch.default_generator.get_state(), before)


# --- bias at a small step ------------------------------------------------------------------------------------------

BIAS_STEP = 0.02  # the suite's h
BIAS_CHAINS, BIAS_STEPS = 200, 3000


def bias_target():
    return targets.get("icg", **ICG)


def first_order_bound(target, h):
    lam = float(np.max(np.linalg.eigvalsh(target.precision)))
    return (lam + ICG["noise_variance"]) / (2 - h * lam) * h


def exact_start(target, seed=5):
    return np.asarray(target.sample(jax.random.key(seed), BIAS_CHAINS))


def assert_relative_variance_error_within(r, bound):
    """t-tests across chains (rows of ``r``) that each coordinate's mean lies in [0, bound]."""
    c, d = r.shape
    se = r.std(axis=0, ddof=1) / math.sqrt(c)
    crit = scipy.stats.t.ppf(1 - ALPHA_BIAS / (2 * d), c - 1)
    mean = r.mean(axis=0)
    assert np.all(mean - bound <= crit * se) and np.all(mean >= -crit * se), (
        f"relative variance errors {mean} (se {se}) outside [0, {bound:.4f}] by more than {crit:.2f} se")


@pytest.mark.parametrize("library", ["blackjax", "posteriors"])
def test_sgld_adapters_reach_the_target(library):
    """blackjax's and posteriors' SGLD at the suite's h = 0.02, from exact draws, within the first-order bound."""
    target = bias_target()
    bound = first_order_bound(target, BIAS_STEP)
    assert bound == pytest.approx(0.0306, abs=1e-4)
    truth = np.diag(target.covariance)
    if library == "blackjax":
        sampler, params, backend = bj.sgld, {"step_size": BIAS_STEP}, "jax"
    else:
        ps = posteriors_adapters()
        sampler, params, backend = ps.sgld, ps.sgld.params(lr=BIAS_STEP * 100, num_data=100.0), "batched"
        assert ps.sgld.to_reference(params) == pytest.approx({"step_size": BIAS_STEP, "temperature": 1.0})
    result = running.run(sampler, target, params=params, num_chains=BIAS_CHAINS, num_steps=BIAS_STEPS,
                         initial_position=exact_start(target), backend=backend, seed=6)
    assert_relative_variance_error_within(result.moments.mean_sq / truth - 1, bound)
