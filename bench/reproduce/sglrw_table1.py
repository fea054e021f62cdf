r"""Table 1 of the SGLRW paper at a reduced scale: KL between the linear-regression posterior and the
Gaussian fit of the samples, for SGLD, SGLRW and Clipped-SGLD, by minibatch size B and base step size.

The SGLRW paper (section 5.2 and Table 1): Bayesian linear regression
(eq. 19-20) with N = 1000, d = 20 (the defaults of ``targets.get("linreg")``); minibatch gradients of
size B scaled by N/B (eq. 6; ``noise="minibatch"``); the decaying schedule
:math:`\delta_t = \delta(1 + t)^{-0.55}` (``schedule={"kind": "polynomial_decay"}``); the score is the
analytic :math:`KL(N(\mu, \Sigma)\,\|\,N(m, S))` from the true posterior to the Gaussian fit of the
particles' final positions (``sgbench.reference.metrics.kl_to_fit``). Here with fewer particles (default 500)
and the paper's 10,000 iterations; the table gives each KL with a bootstrap standard error, its excess
over the exact-sampling floor, and the expected KL of the moment recursion of SGLD and SGLRW
(:func:`predicted_moments`, :func:`expected_fit_kl`).

Reproduce (the quick scale: 6 minutes on 2 shared CPU cores; ``--scale paper`` for 2000 particles)::

    sgbench reproduce sglrw-table1

or, in Python, ``table = reproduce(); print(render(table))``.

Which samples, the reduced scale, the prediction and the differences from the paper:
docs/reproductions.md, section sgbench.bench.reproduce.sglrw_table1.

Kept on interruption: each finished (B, sampler), in ``sglrw_table1_runs.jsonl`` beside the results store;
progress over the chain-steps (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import jax
import numpy as np
import pandas as pd
import scipy.special
import threadpoolctl

from sgbench import samplers as sampler_registry, targets
from sgbench.base.arguments import integer_at_least
from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Option, Reproduction, register, seed_of
from sgbench.bench.running import run as running
from sgbench.reference.metrics import GaussianFit, exact_sampling_kl, kl_to_fit
from sgbench.samplers import NoLinearLawError
from sgbench.samplers.schedules import as_schedule

if TYPE_CHECKING:  # matplotlib loads when the figure is drawn
    from matplotlib.figure import Figure

SAMPLERS = ("sgld", "sglrw", "clipped_sgld")
LABELS = {"sgld": "SGLD", "sglrw": "SGLRW", "clipped_sgld": "Clipped SGLD"}
SCHEDULE = {"kind": "polynomial_decay"}  # delta_t = delta (1 + t)^-0.55: offset 1, exponent 0.55
PAPER_NUM_PARTICLES = 2000
PAPER_NUM_ITERATIONS = 10_000
QUICK_NUM_PARTICLES = 500
PARTICLES_OPTION = Option("--particles", "sglrw tables: parallel particles (default: Table 1 500 quick, 2000 paper; "
                                         "Table 2 1000 quick, 5000 paper; covariance 200 quick, 2000 paper)")

ITERATIONS_OPTION = Option("--iterations", "sglrw-table1, sglrw-covariance: iterations (default: the paper's 10000)")

# Table 1 of the SGLRW paper (section 5.2.1): KL between the posterior
# and the empirical Gaussian fit of the samples; (B, base step size) -> KL of SGLD, SGLRW, Clipped SGLD.
PAPER_TABLE1: dict[tuple[int, float], dict[str, float]] = {
    (b, delta): dict(zip(SAMPLERS, kls))
    for b, delta, *kls in [
        (8, 1e-3, 19.889, 6.060, 18.184),
        (8, 1e-4, 0.483, 0.202, 0.777),
        (16, 1e-3, 7.155, 2.317, 8.530),
        (16, 1e-4, 0.175, 0.070, 0.204),
        (32, 1e-3, 2.441, 0.729, 3.540),
        (32, 1e-4, 0.087, 0.064, 0.091),
        (64, 1e-3, 0.838, 0.165, 1.114),
        (64, 1e-4, 0.063, 0.055, 0.067),
        (128, 1e-3, 0.315, 0.074, 0.351),
        (128, 1e-4, 0.054, 0.054, 0.061),
        (256, 1e-3, 0.140, 0.065, 0.141),
        (256, 1e-4, 0.051, 0.056, 0.062),
        (512, 1e-3, 0.086, 0.065, 0.088),
        (512, 1e-4, 0.052, 0.054, 0.062),
        (1000, 1e-3, 0.058, 0.058, 0.060),
        (1000, 1e-4, 0.052, 0.054, 0.061),
    ]
}
# "The Monte Carlo reference KL is 0.055201" (Table 1 caption): the fit of 2000 exact posterior draws.
PAPER_MC_REFERENCE_KL = 0.055201

# Memory of one block of the JAX driver's draws and positions (bench.RunConfig.block_size).
_BLOCK_BYTES = 64 * 2**20
NUM_BOOTSTRAP = 200


def _block_size(num_chains: int, grid: int, batch_size: int, dim: int, num_iterations: int) -> int:
    """The largest power of two (16 to 1024) of steps whose minibatch indices, noise and positions
    for every chain and grid point fit in ``_BLOCK_BYTES``."""
    per_step = 8 * num_chains * grid * (batch_size + 2 * dim)
    size = 2 ** int(math.floor(math.log2(max(1, _BLOCK_BYTES // per_step))))
    return int(min(max(size, 16), 1024, 2 ** math.ceil(math.log2(num_iterations))))


def final_positions(sampler: str, target, step_sizes, num_particles: int, num_iterations: int, seed: int,
                    dtype: str, progress=None) -> list[np.ndarray]:
    r"""The particles' positions after ``num_iterations`` steps of the schedule :math:`\delta(1+t)^{-0.55}`, one
    (num_particles, dim) array per base step size; the step sizes run as one vmapped grid with common random
    numbers (``bench.run_grid`` with ``keep_samples``; ``progress`` is told the chain-steps done)."""
    batch_size = target.params.get("noise_batch_size") or 1
    block = _block_size(num_particles, len(step_sizes), batch_size, target.dim, num_iterations)
    results = running.run_grid(
        sampler, target, params_grid=[{"step_size": h, "schedule": SCHEDULE} for h in step_sizes],
        num_chains=num_particles, num_steps=1, num_burnin=num_iterations - 1, keep_samples=True,
        seed=seed, dtype=dtype, block_size=block, progress=progress)
    return [np.asarray(result.samples[:, -1, :]) for result in results]


def fit_kl(truth, particles: np.ndarray, rng: np.random.Generator, num_bootstrap: int = NUM_BOOTSTRAP):
    """``(kl, standard_error, num_nonfinite)``: KL(truth || Gaussian fit) of the finite rows of
    ``particles`` (n, d), and the bootstrap standard deviation of that KL over resampled particles
    (its sampling spread: for exact draws in d = 20 it matches the seed-to-seed spread, 0.024 at
    n = 500; NaN when fewer than half the resamples have a non-singular fit)."""
    particles = np.asarray(particles, dtype=np.float64)
    finite = np.all(np.isfinite(particles), axis=-1)
    x = particles[finite]
    if x.shape[0] < x.shape[1] + 1:
        return math.nan, math.nan, int((~finite).sum())
    kl = kl_to_fit(truth, x)
    boot = []
    for _ in range(num_bootstrap):
        try:
            boot.append(kl_to_fit(truth, x[rng.integers(0, x.shape[0], x.shape[0])]))
        except ValueError:  # a resample with fewer than d + 1 distinct particles (only when n is small)
            pass
    se = float(np.std(boot, ddof=1)) if len(boot) >= num_bootstrap // 2 else math.nan
    return kl, se, int((~finite).sum())


def predicted_moments(sampler: str, target, step_size: float,
                      num_iterations: int = PAPER_NUM_ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    r"""``(mean, covariance)`` of the particles after ``num_iterations`` steps of ``sampler`` from the posterior
    mean, by the recursion of the first two moments that the sampler's own law declares
    (``sgbench.samplers._linear_law``), on a linear-regression target with minibatch noise
    (``targets.get("linreg", noise="minibatch", ...)``).

    With :math:`g(x) = A(\mu - x)` the full gradient (:math:`A = \Sigma^{-1}`) and
    :math:`V(x) = \frac{N^2}{B} C(x)` the minibatch gradient's covariance (with replacement), a step that reads the
    gradient once, at the current position, has :math:`E[\Delta \mid x] = h_t g(x)`, so the mean stays at
    :math:`\mu` and :math:`S_{t+1} = M S_t M^\top + E[\operatorname{Var}(\Delta \mid x_t)]`,
    :math:`M = I - h_t A`: the law at step t (``LinearLaw.propagate``) with the noise covariance
    :math:`E[V(x_t)]`, where the law holds under such position-dependent noise (``position_dependent_noise``):

    - SGLD: :math:`\operatorname{Var}(\Delta \mid x) = h_t^2 V(x) + 2 h_t I` (exact);
    - SGLRW without its clip (:math:`\sqrt{h_t/2}\,|\hat g_i| \le 1`): off the diagonal
      :math:`h_t^2 V_{ij}(x)`, on it :math:`2h_t - h_t^2 g_i(x)^2` (the lattice fixes
      :math:`E[\Delta_i^2 \mid x] = 2h_t`: eq. 10 and Lemma 4.3 of the paper). Where the clip is
      active (small B, large step) this is an approximation.

    :math:`E[C(x)] = C(\mu) + \frac1N\sum_i P_i S P_i - \bar P S \bar P` with
    :math:`P_i = f_i f_i^\top/\sigma^2` (the per-datum gradients are affine in :math:`x`), and
    :math:`E[g g^\top] = A S A`.

    Raises:
        NoLinearLawError: the sampler declares no law, or none that holds under minibatch noise.
    """
    mu, sigma = np.asarray(target.truth.mean), np.asarray(target.truth.covariance)
    precision = np.linalg.inv(sigma)
    features, sigma2 = target.features, target.sigma2
    num_data, dim = features.shape
    batch = target.noise.batch_size
    p_bar = features.T @ features / (num_data * sigma2)
    v_mean = np.asarray(target.noise.covariance(mu))
    declared = sampler_registry.get(sampler)
    hyperparameters = {"step_size": step_size, "schedule": as_schedule(SCHEDULE)}
    first = declared.law(hyperparameters, precision, v_mean, step=0)  # checks the hyperparameters once
    if not first.position_dependent_noise or first.transition.shape != (dim, dim):
        raise NoLinearLawError(f"the law of {sampler!r} does not hold under minibatch noise (it must read the "
                               "gradient once, at the current position)")
    cov = np.zeros((dim, dim))
    # one BLAS thread: products this small only wait for a second thread (measured, d = 50, N = 1000: 0.49 against
    # 0.68 ms an iteration on 2 idle cores, 1.0 against 59 ms with the other core busy)
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        for t in range(num_iterations):
            q = np.sum((features @ cov) * features, axis=1)  # f_i^T S f_i (a matrix product: 25x einsum's speed)
            expected_c = (features.T * q) @ features / (num_data * sigma2**2) - p_bar @ cov @ p_bar
            v = v_mean + num_data**2 / batch * expected_c
            cov = declared.linear_law(hyperparameters, precision, v, t).propagate(cov)
    return mu.copy(), (cov + cov.T) / 2


def prediction(sampler: str, target, step_size: float,
               num_iterations: int = PAPER_NUM_ITERATIONS) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`predicted_moments`, or None where ``sampler`` declares no law that holds here (Clipped-SGLD)."""
    try:
        return predicted_moments(sampler, target, step_size, num_iterations)
    except NoLinearLawError:
        return None


def expected_fit_kl(truth, mean, covariance, num_draws: int | None = None) -> float:
    r"""E[KL(truth || Gaussian fit of ``num_draws`` independent draws of N(mean, covariance))]; the
    KL to N(mean, covariance) itself when ``num_draws`` is None. With n draws in d dimensions the
    fit's covariance is Wishart and its mean independent, so with :math:`c = \frac{n-1}{n-d-2}` and
    :math:`\ell` of ``sgbench.reference.metrics.exact_sampling_kl``:
    :math:`\tfrac12[c\,\mathrm{tr}(S^{-1}\Sigma) + c\,(d/n + (m-\mu)^\top S^{-1}(m-\mu)) - d
    + \log\det S - \log\det\Sigma + \ell]`. Equal to ``exact_sampling_kl(d, n)`` when
    N(mean, covariance) is the truth."""
    fit = GaussianFit(np.asarray(mean, dtype=np.float64), np.asarray(covariance, dtype=np.float64))
    limit = float(kl_to_fit(truth, fit))
    if num_draws is None:
        return limit
    d = fit.dim
    n = integer_at_least("num_draws", num_draws, d + 3)
    c = (n - 1) / (n - d - 2)
    i = np.arange(1, d + 1)
    ell = float(np.sum(scipy.special.digamma((n - i) / 2) + np.log(2.0) - np.log(n - 1.0)))
    ref = GaussianFit.of_truth(truth)
    solve = np.linalg.solve(fit.covariance, np.column_stack([ref.covariance, ref.mean - fit.mean]))
    trace, quad = np.trace(solve[:, :-1]), float((ref.mean - fit.mean) @ solve[:, -1])
    logdet = np.linalg.slogdet(fit.covariance)[1] - np.linalg.slogdet(ref.covariance)[1]
    return float(0.5 * (c * trace + c * (d / n + quad) - d + logdet + ell))


def _unit_fits(name: str, target, step_sizes, num_particles: int, num_iterations: int, seed: int, dtype: str,
               progress) -> list[list]:
    """One unit of the table: ``[kl, standard_error, num_nonfinite]`` of :func:`fit_kl` per base step size, for
    sampler ``name`` on ``target`` (its B); the bootstrap draws come from a stream of its own (seed, B, sampler),
    so a unit's result does not depend on which units ran before it."""
    particles = final_positions(name, target, step_sizes, num_particles, num_iterations, seed, dtype, progress)
    rng = np.random.default_rng([seed, target.params["noise_batch_size"], *name.encode()])
    return [list(fit_kl(target.truth, final, rng)) for final in particles]


def reproduce(num_particles: int = 500, num_iterations: int = PAPER_NUM_ITERATIONS,
              batch_sizes=(8, 32, 128), step_sizes=(1e-3, 1e-4), samplers=SAMPLERS, seed: int = 0,
              dtype: str = "float64", progress: bool = False, target_params: dict | None = None,
              predict: bool = True, record=None) -> pd.DataFrame:
    r"""Run the grid and return the table: one row per (B, step size), indexed by ``batch_size`` and
    ``step_size``; for each sampler ``s`` the columns

    - ``s``: our KL(posterior || Gaussian fit of the particles' final positions), ``s_se`` its
      bootstrap standard error (:func:`fit_kl`);
    - ``s_paper``: Table 1's value (NaN where the paper has no such cell);
    - ``s_excess`` and ``s_paper_excess``: the KL minus the expected KL of the fit of as many exact
      draws (``num_particles`` for ours, 2000 for the paper's), comparable across particle numbers;
    - ``s_predicted`` and ``s_predicted_limit`` (with ``predict``, for the samplers whose law gives a
      prediction, :func:`prediction`: SGLD and SGLRW): the expected KL of
      the fit of ``num_particles``, and of infinitely many, Gaussian draws with the moments of
      :func:`predicted_moments` (exact for SGLD up to the particles' non-Gaussianity; SGLRW ignoring
      its clip);
    - ``s_diverged``: particles with a non-finite final position, left out of the fit.

    ``num_particles`` chains (>= 23 in d = 20) each run ``num_iterations`` steps of the schedule
    :math:`\delta(1+t)^{-0.55}`. ``target_params`` override the linreg defaults (the paper's
    setting). ``progress``: progress over the chain-steps on stderr (``sgbench.bench.reproduce._record.Units``).
    ``record``: a ``sgbench.bench.reproduce._record`` file keeping each finished (B, sampler), reused by a rerun of the
    same settings (None: nothing kept).

    ``table.attrs`` holds the setting, ``mc_reference_kl`` and ``mc_reference_se`` (the KL of the fit
    of ``num_particles`` exact posterior draws from ``seed``, the paper's "Monte Carlo reference"),
    ``expected_exact_kl`` (its expectation), the paper's references, ``seconds`` (wall time) and
    ``acceptance`` (:func:`acceptance`).
    """
    from sgbench.bench.reproduce._record import Units

    start = time.perf_counter()
    integer_at_least("num_particles", num_particles, 23)  # the expected exact-sampling KL in d = 20 needs n > d + 2
    integer_at_least("num_iterations", num_iterations, 1)
    batch_sizes, step_sizes, samplers = tuple(batch_sizes), tuple(step_sizes), tuple(samplers)
    unit_steps = len(step_sizes) * num_particles * num_iterations
    settings = {"particles": num_particles, "iterations": num_iterations, "step_sizes": list(step_sizes),
                "seed": seed, "dtype": dtype, "target_params": dict(target_params or {})}
    rows = {(b, h): {} for b in batch_sizes for h in step_sizes}
    target = None
    with Units("sglrw-table1", record, len(batch_sizes) * len(samplers) * unit_steps, "chain-step",
               progress) as units:
        for b in batch_sizes:
            target = targets.get("linreg", **{**(target_params or {}), "noise": "minibatch", "noise_batch_size": b})
            for name in samplers:
                fits = units.cached(settings, (b, name), _unit_fits, name, target, step_sizes, num_particles,
                                    num_iterations, seed, dtype, units.update, size=unit_steps)
                for h, (kl, se, diverged) in zip(step_sizes, fits):
                    rows[b, h].update({name: kl, f"{name}_se": se, f"{name}_diverged": diverged})
                    moments = prediction(name, target, h, num_iterations) if predict else None
                    if moments is not None:
                        rows[b, h][f"{name}_predicted"] = expected_fit_kl(target.truth, *moments, num_particles)
                        rows[b, h][f"{name}_predicted_limit"] = expected_fit_kl(target.truth, *moments)
    floor = exact_sampling_kl(target.dim, num_particles)
    paper_floor = exact_sampling_kl(target.dim, PAPER_NUM_PARTICLES)
    mc_kl, mc_se, _ = fit_kl(target.truth, np.asarray(target.sample(jax.random.key(seed), num_particles)),
                             np.random.default_rng([seed, 0]))
    table = pd.DataFrame([rows[key] for key in rows],
                         index=pd.MultiIndex.from_tuples(list(rows), names=["batch_size", "step_size"]))
    columns = []
    for name in samplers:
        table[f"{name}_paper"] = [PAPER_TABLE1.get(key, {}).get(name, math.nan) for key in table.index]
        table[f"{name}_excess"] = table[name] - floor
        table[f"{name}_paper_excess"] = table[f"{name}_paper"] - paper_floor
        suffixes = ("", "_se", "_predicted", "_paper", "_excess", "_predicted_limit", "_paper_excess", "_diverged")
        columns += [name + suffix for suffix in suffixes if name + suffix in table.columns]
    table = table[columns]
    table.attrs.update(
        num_particles=num_particles, num_iterations=num_iterations, seed=seed, dtype=dtype,
        samplers=list(samplers), target=target.name, target_params=dict(target.params),
        schedule=dict(SCHEDULE), samples="final positions of the particles",
        mc_reference_kl=mc_kl, mc_reference_se=mc_se, expected_exact_kl=floor,
        paper_mc_reference_kl=PAPER_MC_REFERENCE_KL, paper_expected_exact_kl=paper_floor,
        paper_num_particles=PAPER_NUM_PARTICLES, paper_num_iterations=PAPER_NUM_ITERATIONS,
    )
    table.attrs["acceptance"] = acceptance(table)
    table.attrs["seconds"] = time.perf_counter() - start
    return table


def acceptance(table: pd.DataFrame, z: float = 2.0) -> dict:
    """The issue's acceptance check: SGLRW's KL below SGLD's at the larger step size, for every B.

    ``{"step_size", "by_batch_size": {B: {"sgld", "sglrw", "difference", "standard_error",
    "below", "decisive", "predicted_difference"}}, "passed", "decisive", "statement"}``: ``difference``
    is SGLD's KL minus SGLRW's, ``predicted_difference`` the same of the ``_predicted`` columns (the
    expected KLs at this number of particles; NaN without them); ``below`` is SGLRW's KL < SGLD's;
    ``decisive`` that the difference exceeds ``z`` standard errors (the runs are independent, so the
    errors add in quadrature; without ``_se`` columns nothing is decisive). ``passed`` (every B below)
    is False when a KL is not finite, None when the table lacks SGLD or SGLRW; ``decisive`` says
    whether every B's verdict, either way, is beyond sampling noise."""
    step = max(table.index.get_level_values("step_size"))
    statement = f"SGLRW's KL below SGLD's at the larger step size {step:g}, for every B"
    if not {"sgld", "sglrw"} <= set(table.columns):
        return {"step_size": float(step), "by_batch_size": {}, "passed": None, "decisive": None,
                "statement": statement + " (not checked: needs both samplers)"}
    by_b = {}
    for b, row in table.xs(step, level="step_size").iterrows():
        difference = float(row["sgld"] - row["sglrw"])
        se = float(math.hypot(row.get("sgld_se", math.nan), row.get("sglrw_se", math.nan)))
        predicted = float(row.get("sgld_predicted", math.nan) - row.get("sglrw_predicted", math.nan))
        by_b[int(b)] = {"sgld": float(row["sgld"]), "sglrw": float(row["sglrw"]), "difference": difference,
                        "standard_error": se, "below": bool(np.isfinite(difference) and difference > 0),
                        "decisive": bool(np.isfinite(se) and abs(difference) > z * se),
                        "predicted_difference": predicted}
    return {"step_size": float(step), "by_batch_size": by_b,
            "passed": bool(by_b) and all(v["below"] for v in by_b.values()),
            "decisive": bool(by_b) and all(v["decisive"] for v in by_b.values()), "statement": statement}


def _verdict(check: dict) -> str:
    if check["passed"] is None:
        return "not checked"
    return {True: "PASSED", False: "FAILED", None: "NOT RESOLVED"}[_three_way(check)]


def _cell(value) -> str:
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def _markdown(frame: pd.DataFrame) -> str:
    header = list(frame.columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _with_se(values, errors) -> list[str]:
    return [_cell(v) if not np.isfinite(e) else f"{v:.3f} ± {e:.3f}" for v, e in zip(values, errors)]


def _display(table: pd.DataFrame, excess: bool) -> pd.DataFrame:
    samplers = table.attrs.get("samplers", [s for s in SAMPLERS if s in table.columns])
    out = pd.DataFrame({"B": table.index.get_level_values("batch_size"),
                        "δ": [f"{h:.0e}" for h in table.index.get_level_values("step_size")]})
    for name in samplers:
        label = LABELS.get(name, name)
        se = table[f"{name}_se"] if f"{name}_se" in table.columns else np.full(len(table), math.nan)
        ours, predicted, paper = (f"{name}_excess", f"{name}_predicted_limit", f"{name}_paper_excess") if excess \
            else (name, f"{name}_predicted", f"{name}_paper")
        out[f"{label} (ours)"] = _with_se(table[ours], se)
        if predicted in table.columns:
            out[f"{label} (predicted)"] = table[predicted].to_numpy()
        out[f"{label} (paper)"] = table[paper].to_numpy()
    if not excess and sum(int(table[f"{name}_diverged"].sum()) for name in samplers):
        out["diverged particles"] = [", ".join(f"{LABELS.get(s, s)} {int(row[f'{s}_diverged'])}" for s in samplers
                                               if row[f"{s}_diverged"]) for _, row in table.iterrows()]
    return out


def render(table: pd.DataFrame, fmt: str = "markdown", excess: bool = True) -> str:
    """The table as a string, ours (± bootstrap standard error) beside the moment recursion's
    prediction (SGLD, SGLRW) and the paper's: ``fmt`` "markdown" or "html"; with ``excess`` a second
    table of the KL in excess of the expected exact-sampling floor (the prediction there is for
    infinitely many particles). Ends with the floor, the acceptance check and the setting."""
    if fmt not in ("markdown", "html"):
        raise ValueError(f"fmt must be 'markdown' or 'html', got {fmt!r}")
    attrs = table.attrs
    n, paper_n = attrs.get("num_particles"), attrs.get("paper_num_particles", PAPER_NUM_PARTICLES)
    check = attrs.get("acceptance") or acceptance(table)
    per_b = ", ".join(f"B={b}: {'below' if v['below'] else 'NOT below'}, SGLD - SGLRW = {v['difference']:.3f} ± "
                      f"{v['standard_error']:.3f}" + ("" if math.isnan(v.get("predicted_difference", math.nan)) else
                                                      f" (predicted {v['predicted_difference']:.3f})")
                      for b, v in check["by_batch_size"].items())
    notes = [
        f"Monte Carlo reference KL (fit of {n} exact posterior draws): {attrs.get('mc_reference_kl', math.nan):.4f} "
        f"± {attrs.get('mc_reference_se', math.nan):.4f} (expected {attrs.get('expected_exact_kl', math.nan):.4f}); "
        f"paper ({paper_n} draws): {attrs.get('paper_mc_reference_kl', PAPER_MC_REFERENCE_KL):.6f} "
        f"(expected {attrs.get('paper_expected_exact_kl', math.nan):.4f}).",
        f"Acceptance, {check['statement']}: {_verdict(check)}"
        + ("" if check["passed"] is None else
           f" ({per_b}; {'every' if check['decisive'] else 'not every'} verdict beyond 2 standard errors)") + ".",
        f"Setting: {n} particles x {attrs.get('num_iterations')} iterations (paper: {paper_n} x "
        f"{attrs.get('paper_num_iterations', PAPER_NUM_ITERATIONS)}), schedule δ(1+t)^-0.55, fit of the "
        f"final positions, seed {attrs.get('seed')}, {attrs.get('dtype')}, target linreg "
        f"{attrs.get('target_params')} (B varies); {attrs.get('seconds', math.nan):.0f} s.",
    ]
    titles = ["KL(posterior || Gaussian fit of the particles)"]
    frames = [_display(table, excess=False)]
    if excess:
        titles.append(f"Excess KL over the expected exact-sampling floor ({n} draws ours, {paper_n} the paper's); "
                      "predicted: the KL of infinitely many particles")
        frames.append(_display(table, excess=True))
    if fmt == "html":
        body = "".join(f"<h4>{t}</h4>\n" + f.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="")
                       for t, f in zip(titles, frames))
        return body + "".join(f"<p>{note}</p>\n" for note in notes)
    body = "\n\n".join(f"**{t}**\n\n" + _markdown(f) for t, f in zip(titles, frames))
    return body + "\n\n" + "\n".join(f"- {note}" for note in notes) + "\n"


def plot(table: pd.DataFrame, path=None) -> Figure:
    """KL against B (log-log), one panel per step size: ours (solid) and the paper's (dashed) for each
    sampler, and the exact-sampling floors, drawn without pyplot (:mod:`sgbench.base.figures`).

    Args:
        table: the table of :func:`reproduce`.
        path: where to save the figure as an image (120 dpi, cropped to its content); None: not saved.

    Returns:
        The ``matplotlib.figure.Figure``; pyplot does not hold it (``plt.show()`` does not show it): Jupyter's
        inline backend displays it as a cell's value, and ``fig.savefig`` writes it anywhere.
    """
    steps = sorted(set(table.index.get_level_values("step_size")), reverse=True)
    samplers = table.attrs.get("samplers", [s for s in SAMPLERS if s in table.columns])
    fig, axes = subplots(1, len(steps), figsize=(5 * len(steps), 4), squeeze=False, sharey=True)
    for ax, step in zip(axes[0], steps):
        rows = table.xs(step, level="step_size").sort_index()
        b = rows.index.to_numpy()
        for k, name in enumerate(samplers):
            colour = f"C{k}"
            ax.plot(b, rows[name], "o-", color=colour, label=f"{LABELS.get(name, name)} (ours)")
            ax.plot(b, rows[f"{name}_paper"], "s--", color=colour, alpha=0.6, label=f"{LABELS.get(name, name)} (paper)")
        if "expected_exact_kl" in table.attrs:
            ax.axhline(table.attrs["expected_exact_kl"], color="k", lw=0.8,
                       label=f"exact draws, n={table.attrs['num_particles']}")
            ax.axhline(table.attrs["paper_expected_exact_kl"], color="k", lw=0.8, ls=":",
                       label=f"exact draws, n={table.attrs['paper_num_particles']}")
        ax.set(xscale="log", yscale="log", xlabel="minibatch size B", title=f"base step size δ = {step:g}")
        ax.set_xticks(b, [str(v) for v in b])
    axes[0][0].set_ylabel("KL(posterior || Gaussian fit)")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def run(scale: str, options: dict, db, out, progress: bool):
    """``sgbench reproduce sglrw-table1``: :func:`reproduce` with the scale's particles (quick 500, paper 2000) or
    ``--particles``, ``--iterations`` and ``--seed``; the acceptance check (:func:`acceptance`) decides the exit
    status. Each finished (B, sampler) is kept in the record ``sglrw_table1_runs.jsonl`` beside ``db``, so an
    interrupted run resumes."""
    from markupsafe import Markup

    from sgbench.bench.reproduce.outcome import Check, Outcome, verdict
    from sgbench.bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS

    particles = options.get("particles", PAPER_NUM_PARTICLES if scale == "paper" else QUICK_NUM_PARTICLES)
    integer_at_least("--particles", particles, 23, MAX_CHAINS)  # the exact-sampling KL in d = 20 needs n > 22
    iterations = integer_at_least("--iterations", options.get("iterations", PAPER_NUM_ITERATIONS), 1, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    from sgbench.bench.reproduce._record import record_path

    table = reproduce(num_particles=particles, num_iterations=iterations, seed=seed, progress=progress,
                      record=record_path(db, "sglrw-table1"))
    check = table.attrs["acceptance"]
    per_b = "; ".join(f"B={b}: SGLD - SGLRW = {v['difference']:.3f} ± {v['standard_error']:.3f}"
                      for b, v in check["by_batch_size"].items())
    frame = _display(table, excess=True)
    for name in table.attrs["samplers"]:  # the excess over the exact-sampling floor compares across particle numbers
        frame[f"{LABELS.get(name, name)} verdict"] = [
            verdict(*values) for values in zip(table[f"{name}_excess"], table[f"{name}_se"],
                                               table[f"{name}_paper_excess"])]
    return Outcome(name="sglrw-table1", title="SGLRW paper, Table 1, at reduced scale", table=frame,
                   checks=(Check(check["statement"], _three_way(check), per_b),),
                   intro=f"{particles} particles x {iterations} iterations (paper: {PAPER_NUM_PARTICLES} x "
                         f"{PAPER_NUM_ITERATIONS}), seed {seed}; {table.attrs['seconds']:.0f} s.",
                   sections=(("The table with its notes", Markup(render(table, fmt="html"))),
                             ("KL against minibatch size", png_bytes(plot(table), dpi=100, tight=True))),
                   text_notes=(render(table),))


def _three_way(check: dict) -> bool | None:
    """:func:`acceptance` as a ``Check``'s ``passed``: True (SGLRW below at every B), False (above at some B beyond
    the noise, or SGLRW's fit not finite), None (above only within the noise, or not checked)."""
    if check["passed"]:
        return True
    by_b = check["by_batch_size"].values()
    if any(not math.isfinite(v["sglrw"]) or (not v["below"] and v["decisive"]) for v in by_b):
        return False
    return None


REPRODUCTION = register(Reproduction(
    name="sglrw-table1",
    summary="SGLRW Table 1: KL of SGLD, SGLRW and Clipped-SGLD by minibatch size and step size, Bayesian linear "
            "regression",
    source="SGLRW paper, section 5.2",
    scales={"quick": f"{QUICK_NUM_PARTICLES} particles x 10,000 iterations (about 6 minutes on 2 cores)",
            "paper": f"{PAPER_NUM_PARTICLES} particles x 10,000 iterations"},
    run=run,
    keeps="record",
    options=(PARTICLES_OPTION,
             ITERATIONS_OPTION,
             SEED_OPTION),
))
