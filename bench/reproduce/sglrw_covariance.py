r"""Figure 3 (Figure 7, top) and Theorem 4.2 of the SGLRW paper (section 4.3):
the mean squared error of the posterior covariance against the base step size, by minibatch size, for SGLD, SGLRW
and Clipped-SGLD on 50-dimensional Bayesian linear regression, and the lemma behind the theorem's bound measured
on our steps.

**The figure.** ``targets.get("linreg", dim=50, noise="minibatch", noise_batch_size=B)`` (N = 1000, the paper's
data setting of section 5.2 in 50 dimensions); particles start at the posterior mean and run 10,000 iterations of
:math:`\delta_t = \delta(1+t)^{-0.55}`; the score is the covariance MSE
:math:`\frac1{d^2}\sum_{ij}(S_{ij} - \Sigma_{ij})^2` of the particles' final positions (``S`` their sample
covariance, :math:`\Sigma` the exact posterior's), with a bootstrap sd over particles. The paper gives no numbers
(a figure); each cell is compared with the *expected* MSE of the exact moment recursion
(``sglrw_table1.predicted_moments``: exact for SGLD, for SGLRW while its clip is inactive):
:math:`E[(S_{ij} - \Sigma_{ij})^2] = (C_{ij} - \Sigma_{ij})^2 + (C_{ij}^2 + C_{ii}C_{jj})/(n-1)` for ``n``
Gaussian draws of covariance ``C``.

**The lemma.** Theorem 4.2 bounds the MSE by :math:`C(\mathcal E_{drift} + \mathcal E_{disc} + \mathcal E_{cov})`
with :math:`\mathcal E_{cov} = \delta^2 \overline{E\|M_n\|_F^2}` (eq. 15), where
:math:`M_n = \delta^{-2}E_\varepsilon[\Delta^{mb}\Delta^{mb\top} - \Delta^{fb}\Delta^{fb\top}]` (eq. 16) is the
second-moment error of one minibatch step against the full-batch step with the same internal randomness. Lemma 4.3:
:math:`M^{SGLD} = \zeta\zeta^\top + g\zeta^\top + \zeta g^\top` (:math:`\zeta` the minibatch gradient's error) and
:math:`M^{SGLRW} = \mathrm{offdiag}(M^{SGLD})`, hence :math:`\mathcal E_{cov}^{SGLRW} \le \mathcal E_{cov}^{SGLD}`.
:func:`second_moment_error` measures :math:`M_n` by running the samplers' own ``optimized_step`` on many internal
draws at posterior states (the constant C of the bound is not known, so the bound itself cannot be evaluated; its
scheme-dependent term is what is checked).

Kept on interruption: each finished (B, sampler), in ``sglrw_covariance_runs.jsonl`` beside the results store;
progress over the chain-steps (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scipy.stats

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Reproduction, register, seed_of
from sgbench.bench.reproduce.outcome import Check, Outcome, timed, verdict
from sgbench.bench.reproduce.sglrw_table1 import (
    ITERATIONS_OPTION,
    LABELS,
    PARTICLES_OPTION,
    SAMPLERS,
    SCHEDULE,
    final_positions,
    prediction,
)

DIM = 50
NUM_ITERATIONS = 10_000
SCALES = {"quick": {"particles": 200, "batch_sizes": (8, 128)},
          "paper": {"particles": 2000, "batch_sizes": (8, 32, 128, 512)}}
STEP_SIZES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
NUM_BOOTSTRAP = 100
# Lemma 4.3, measured: posterior states per batch size, internal draws per state, and the family-wise false-failure
# rate of the agreement test over every entry of every state (Bonferroni).
LEMMA_STATES = 8
LEMMA_DRAWS = 2**16
LEMMA_ALPHA = 1e-3
LEMMA_SAMPLERS = ("sgld", "sglrw")  # the two steps whose second-moment errors Lemma 4.3 states
# The ordering of Figure 3 is tested at a family-wise false-failure rate of 1 % over its cells.
ORDERING_ALPHA = 1e-2


def covariance_mse(particles: np.ndarray, covariance: np.ndarray, rng: np.random.Generator,
                   num_bootstrap: int = NUM_BOOTSTRAP) -> tuple[float, float, int]:
    """``(mse, sd, diverged)``: the mean over entries of (S - ``covariance``)^2, S the sample covariance of the
    finite rows of ``particles`` (n, d); its bootstrap sd over resampled particles; the non-finite rows left out
    (``mse`` NaN when fewer than 2 rows are finite)."""
    x = np.asarray(particles, dtype=np.float64)
    finite = np.all(np.isfinite(x), axis=-1)
    x = x[finite]
    if len(x) < 2:
        return math.nan, math.nan, int((~finite).sum())

    def mse(rows):
        return float(np.mean((np.cov(rows, rowvar=False) - covariance) ** 2))

    boot = [mse(x[rng.integers(0, len(x), len(x))]) for _ in range(num_bootstrap)]
    return mse(x), float(np.std(boot, ddof=1)), int((~finite).sum())


def expected_covariance_mse(covariance: np.ndarray, truth: np.ndarray, num_draws: int) -> float:
    r"""E[mean_ij (S_ij - truth_ij)^2] for S the sample covariance of ``num_draws`` Gaussian draws of ``covariance``:
    :math:`(C_{ij} - \Sigma_{ij})^2 + (C_{ij}^2 + C_{ii}C_{jj})/(n - 1)` averaged over entries."""
    c = np.asarray(covariance, dtype=np.float64)
    spread = (c**2 + np.outer(np.diag(c), np.diag(c))) / (num_draws - 1)
    return float(np.mean((c - truth) ** 2 + spread))


def _increments(sampler_name: str, target, step_size: float, num_draws: int):
    """A compiled ``f(position, gradient_draw, key) -> (minibatch increments, full-batch increments)``, each
    (``num_draws``, d): one step of ``sampler_name`` at constant ``step_size`` per internal draw, the same draws for
    both."""
    import jax
    import jax.numpy as jnp

    from sgbench import samplers
    from sgbench.base.draws import jax_draws
    from sgbench.samplers._contract import GradientOracle

    sampler = samplers.get(sampler_name)
    params = sampler.params(step_size=step_size)
    exact = GradientOracle.exact(target)

    @jax.jit
    def increments(position, gradient_draw, key):
        x = jnp.asarray(position, dtype=jnp.float64)
        state = sampler.start(x, params, exact)
        draws = jax_draws(key, sampler.draw_spec(target.dim, params), (num_draws,), "float64")

        def one(oracle):
            return jax.vmap(lambda d: sampler.optimized_step(state, oracle, d, params)[0].position - x)(draws)

        return one(GradientOracle(target, gradient_draw)), one(exact)

    return increments


def second_moment_error(increments, target, position, gradient_draw, step_size: float, key,
                        lattice: bool = False) -> dict:
    r"""Eq. (16) measured on a sampler's ``optimized_step``: at ``position`` with the minibatch of ``gradient_draw``
    (a draw of ``target.draw_spec``), :math:`\hat M = \delta^{-2}\,\overline{\Delta^{mb}\Delta^{mb\top} -
    \Delta^{fb}\Delta^{fb\top}}` over the internal draws of ``increments`` (:func:`_increments` at ``step_size``),
    shared by the minibatch and the full-batch step.

    Args:
        increments: :func:`_increments` of the sampler at ``step_size``.
        target: its target. position, gradient_draw: the state and the minibatch. step_size: δ. key: a JAX key.
        lattice: the sampler is SGLRW (Lemma 4.3 keeps only the off-diagonal part).

    Returns:
        ``{"measured": (d, d), "standard_error": (d, d), "lemma": (d, d), "clipped": bool}``: the estimate, its
        Monte Carlo standard error per entry, Lemma 4.3's :math:`\zeta\zeta^\top + g\zeta^\top + \zeta g^\top`
        (off the diagonal only for SGLRW) with :math:`\zeta` the minibatch gradient minus the full one, and
        whether SGLRW's clip :math:`\sqrt{\delta/2}|\hat g_i| \le 1` binds (the lemma assumes it does not).
    """
    a, b = (np.asarray(v) for v in increments(position, gradient_draw, key))
    num_draws, h2 = a.shape[0], step_size**2
    measured = (a.T @ a - b.T @ b) / (num_draws * h2)
    second = ((a * a).T @ (a * a) - 2 * (a * b).T @ (a * b) + (b * b).T @ (b * b)) / (num_draws * h2 * h2)
    standard_error = np.sqrt(np.maximum(second - measured**2, 0.0) / (num_draws - 1))
    g, g_hat = np.asarray(target.grad_logdensity(position)), np.asarray(target.stochastic_grad(position, gradient_draw))
    zeta = g_hat - g
    lemma = np.outer(zeta, zeta) + np.outer(g, zeta) + np.outer(zeta, g)
    if lattice:
        lemma = lemma - np.diag(np.diag(lemma))
    clipped = bool(np.any(np.sqrt(step_size / 2) * np.abs(g_hat) > 1))
    return {"measured": measured, "standard_error": standard_error, "lemma": lemma, "clipped": clipped}


def lemma_agreement(errors: list[dict], alpha: float = LEMMA_ALPHA) -> dict:
    r"""Whether measured second-moment errors (:func:`second_moment_error`, one per state) agree with Lemma 4.3.

    Each entry with a Monte Carlo standard error gives :math:`z = (\hat M - M)/se`; the test fails when
    :math:`\max|z|` exceeds the Bonferroni threshold :math:`z^* = \Phi^{-1}(1 - \alpha/2K)` over the K entries
    tested (false-failure rate at most ``alpha`` for a correct step, by the central limit theorem over the draws).
    Entries without Monte Carlo error (SGLRW's diagonal: :math:`\Delta_i^2 = 2\delta` on every draw) must equal the
    lemma to rounding: :math:`|\hat M - M| \le 10^{-6}\max|M|`. States where the clip binds are left out.

    Returns:
        ``{"agrees", "max_z", "threshold", "entries", "max_exact_error", "states", "clipped_states"}``.
    """
    kept = [e for e in errors if not e["clipped"]]
    if not kept:
        return {"agrees": None, "max_z": math.nan, "threshold": math.nan, "entries": 0, "max_exact_error": math.nan,
                "states": 0, "clipped_states": len(errors)}
    upper = np.triu_indices_from(kept[0]["measured"])
    z, exact_error, scale = [], [], max(float(np.max(np.abs(e["lemma"]))) for e in kept)
    for e in kept:
        diff, se = (e["measured"] - e["lemma"])[upper], e["standard_error"][upper]
        random = se > 1e-9 * scale
        z.append(np.abs(diff[random]) / se[random])
        exact_error.append(np.abs(diff[~random]))
    z, exact_error = np.concatenate(z), np.concatenate(exact_error)
    threshold = float(scipy.stats.norm.isf(alpha / (2 * max(z.size, 1))))
    max_exact = float(np.max(exact_error, initial=0.0)) / scale
    agrees = bool(np.max(z, initial=0.0) <= threshold and max_exact <= 1e-6)
    return {"agrees": agrees, "max_z": float(np.max(z, initial=0.0)), "threshold": threshold, "entries": int(z.size),
            "max_exact_error": max_exact, "states": len(kept), "clipped_states": len(errors) - len(kept)}


def covariance_error_terms(errors: list[dict], step_size: float) -> np.ndarray:
    r"""Eq. (15)'s summand :math:`\delta^2\|M\|_F^2` at each state of ``errors``, from the measured :math:`\hat M`
    (each :math:`\|\hat M\|_F^2` less its Monte Carlo part :math:`\sum se^2`, so unbiased); their mean over the
    chain's states is :math:`\mathcal E_{cov}`."""
    return np.array([np.sum(e["measured"] ** 2) - np.sum(e["standard_error"] ** 2) for e in errors]) * step_size**2


def lemma_step_size(target, positions, gradient_draws) -> float:
    r"""The largest step size at which SGLRW's clip stays inactive with room to spare at the given states:
    :math:`\sqrt{\delta/2}\max|\hat g_i| = 1/2`."""
    largest = max(float(np.max(np.abs(np.asarray(target.stochastic_grad(x, d))))) for x, d in
                  zip(positions, gradient_draws))
    return 0.5 / largest**2


def clip_shares(target, step_sizes, seed: int, num_states: int = 64) -> list[float]:
    r"""Per step size, the share of coordinates on which SGLRW's clip :math:`\sqrt{\delta/2}|\hat g_i| \le 1` binds,
    over ``num_states`` exact posterior draws each with its own minibatch: where it is not small, the moment
    recursion (which ignores the clip) does not describe SGLRW."""
    import jax

    from sgbench.base.draws import jax_draws

    key = jax.random.key(seed)
    positions = target.sample(jax.random.fold_in(key, 0), num_states)
    draws = jax_draws(jax.random.fold_in(key, 1), target.draw_spec, (num_states,), "float64")
    grads = np.abs(np.asarray(jax.vmap(target.stochastic_grad)(positions, draws)))
    return [float(np.mean(np.sqrt(h / 2) * grads > 1)) for h in step_sizes]


def measure_lemma(target, seed: int, num_states: int | None = None, num_draws: int | None = None,
                  samplers=LEMMA_SAMPLERS) -> dict:
    """Lemma 4.3 on ``target`` (a linreg with minibatch noise): ``num_states`` (default ``LEMMA_STATES``) exact
    posterior draws, each with one minibatch, ``num_draws`` (default ``LEMMA_DRAWS``) internal draws each, at
    :func:`lemma_step_size`; per sampler its :func:`lemma_agreement` and :func:`covariance_error_terms` (at the
    same states and minibatches for every sampler, so they pair).

    Returns:
        ``{"step_size", "by_sampler": {name: {"agreement", "e_cov", "e_cov_terms", "errors"}}}``.
    """
    import jax

    from sgbench.base.draws import jax_draws

    num_states = LEMMA_STATES if num_states is None else num_states
    num_draws = LEMMA_DRAWS if num_draws is None else num_draws
    key = jax.random.key(seed)
    positions = np.asarray(target.sample(jax.random.fold_in(key, 0), num_states))
    gradient_draws = [jax.tree.map(lambda v, i=i: v[i], jax_draws(jax.random.fold_in(key, 1), target.draw_spec,
                                                                  (num_states,), "float64"))
                      for i in range(num_states)]
    step = lemma_step_size(target, positions, gradient_draws)
    out = {}
    for k, name in enumerate(samplers):
        increments = _increments(name, target, step, num_draws)
        errors = [second_moment_error(increments, target, x, d, step, jax.random.fold_in(key, 2 + k * num_states + i),
                                      lattice=name == "sglrw")
                  for i, (x, d) in enumerate(zip(positions, gradient_draws))]
        terms = covariance_error_terms(errors, step)
        out[name] = {"agreement": lemma_agreement(errors), "e_cov": float(terms.mean()), "e_cov_terms": terms,
                     "errors": errors}
    return {"step_size": step, "by_sampler": out}


def _last_step_size(step_size: float, num_iterations: int) -> float:
    """The schedule's step size at the last of ``num_iterations`` iterations from base ``step_size``."""
    from sgbench import samplers

    params = samplers.get("sglrw").params(step_size=step_size, schedule=SCHEDULE)
    return float(params.step_size_at(num_iterations - 1))


def sampler_rows(target, name: str, num_particles: int, step_sizes, num_iterations: int, seed: int,
                 progress=None) -> list[dict]:
    """One row per step size of ``name``'s particles on ``target`` (a linreg of this figure): see :func:`compute`.
    The bootstrap draws come from ``(seed, B, the sampler's place in SAMPLERS)``, so a row does not depend on
    which rows were computed before it."""
    truth = np.asarray(target.truth.covariance)
    floor = expected_covariance_mse(truth, truth, num_particles)
    batch = target.noise.batch_size
    rng = np.random.default_rng([seed, batch, SAMPLERS.index(name)])
    clips = (clip_shares(target, [_last_step_size(h, num_iterations) for h in step_sizes], seed) if name == "sglrw"
             else [math.nan] * len(step_sizes))  # the clip is SGLRW's alone
    finals = final_positions(name, target, step_sizes, num_particles, num_iterations, seed, "float64", progress)
    rows = []
    for h, final, clip in zip(step_sizes, finals, clips):
        mse, sd, diverged = covariance_mse(final, truth, rng)
        moments = prediction(name, target, h, num_iterations)
        predicted = math.nan if moments is None else expected_covariance_mse(moments[1], truth, num_particles)
        rows.append({"B": batch, "step size": h, "sampler": name, "mse": mse, "mse_sd": sd, "predicted": predicted,
                     "floor": floor, "diverged": diverged, "clip share": clip})
    return rows


def compute(num_particles: int, batch_sizes, step_sizes=STEP_SIZES, num_iterations: int = NUM_ITERATIONS,
            seed: int = 0, samplers=SAMPLERS, progress: bool = False, record=None) -> tuple[pd.DataFrame, dict]:
    r"""The figure's grid and the lemma per batch size. ``progress``: progress over the chain-steps on stderr
    (``sgbench.bench.reproduce._record.Units``). With ``record`` (a ``sgbench.bench.reproduce._record`` file) each
    finished (B, sampler) is kept there and reused by a rerun of the same settings; the lemma (seconds) is measured
    again.

    Returns:
        ``(frame, lemma)``: one row per (B, δ, sampler) with ``mse``, its bootstrap ``mse_sd``, ``predicted`` (the
        recursion's expected MSE at this number of particles; NaN for Clipped-SGLD), ``floor`` (that of as many
        exact draws), ``diverged`` particles and, for SGLRW, the ``clip share`` (:func:`clip_shares`) at the last
        iteration's step size :math:`\delta(1+T)^{-0.55}`; ``lemma`` maps B to :func:`measure_lemma`.
    """
    from sgbench import targets
    from sgbench.bench.reproduce._record import Units

    settings = {"particles": num_particles, "step_sizes": list(step_sizes), "iterations": num_iterations,
                "seed": seed}
    rows, lemma = [], {}
    unit_steps = len(step_sizes) * num_particles * num_iterations
    with Units("sglrw-covariance", record, len(batch_sizes) * len(samplers) * unit_steps, "chain-step",
               progress) as units:
        for b in batch_sizes:
            target = targets.get("linreg", dim=DIM, noise="minibatch", noise_batch_size=b)
            for name in samplers:
                rows += units.cached(settings, (b, name), sampler_rows, target, name, num_particles, step_sizes,
                                     num_iterations, seed, units.update, size=unit_steps)
            lemma[b] = measure_lemma(target, seed)
    return pd.DataFrame(rows), lemma


def ordering_check(frame: pd.DataFrame, alpha: float = ORDERING_ALPHA) -> Check:
    r"""Figure 3's claim: SGLRW's covariance MSE comparable to or below SGLD's at every (B, δ), and SGLD's error
    exploding where SGLRW's does not (at the largest step of the smallest B). Fails when SGLRW lies above SGLD by
    more than :math:`z^* = \Phi^{-1}(1 - \alpha/K)` combined bootstrap sds in any of the K cells (false-failure
    rate at most ``alpha`` when the two are equal), or when at the largest step of the smallest B SGLD is below
    SGLRW beyond that; passes when there SGLD lies above SGLRW beyond 2 combined sds, or diverged while SGLRW did
    not, or lies 10 times above SGLRW's upper 2-sd end (an explosion, whose bootstrap sd is as wild as the exploded
    particles); not resolved otherwise."""
    wide = frame.pivot_table(index=["B", "step size"], columns="sampler", values=["mse", "mse_sd", "diverged"])
    threshold = float(scipy.stats.norm.isf(alpha / len(wide)))
    gap = wide["mse"]["sglrw"] - wide["mse"]["sgld"]
    spread = np.hypot(wide["mse_sd"]["sglrw"], wide["mse_sd"]["sgld"])
    above = [f"B={b}, δ={h:g}" for (b, h), g, s in zip(wide.index, gap, spread) if g > threshold * s]
    corner = (min(wide.index.get_level_values("B")), max(wide.index.get_level_values("step size")))
    sgld, sglrw = wide["mse"]["sgld"][corner], wide["mse"]["sglrw"][corner]
    sglrw_upper = sglrw + 2 * wide["mse_sd"]["sglrw"][corner]
    exploded = (wide["diverged"]["sgld"][corner] > 0 == wide["diverged"]["sglrw"][corner]) or (
        sgld - sglrw > 2 * spread[corner]) or sgld > 10 * sglrw_upper
    detail = (f"at B={corner[0]}, δ={corner[1]:g}: SGLD {sgld:.3g}, SGLRW {sglrw:.3g} (± {spread[corner]:.2g}); "
              + (f"SGLRW above SGLD beyond {threshold:.2f} sds at {', '.join(above)}" if above else
                 f"SGLRW nowhere above SGLD beyond {threshold:.2f} combined sds ({len(wide)} cells)"))
    passed = False if above or sglrw - sgld > threshold * spread[corner] else True if exploded else None
    return Check("SGLRW's covariance MSE comparable to or below SGLD's everywhere, and SGLD's exploding at the "
                 "largest step of the smallest batch", passed, detail)


def lemma_check(lemma: dict) -> Check:
    r"""Lemma 4.3 measured on our steps, and Theorem 4.2's covariance term ordered: passes when every batch size's
    SGLD and SGLRW second-moment errors agree with the lemma (:func:`lemma_agreement`) and SGLRW's measured
    :math:`\mathcal E_{cov}` lies below SGLD's (the mean of the paired per-state differences above 0); fails on a
    disagreement or the reverse order beyond 2 standard errors; not resolved when every state clipped or the order
    is within the noise."""
    parts, verdicts = [], []
    for b, result in lemma.items():
        by = result["by_sampler"]
        agreements = [by[name]["agreement"]["agrees"] for name in by]
        paired = by["sgld"]["e_cov_terms"] - by["sglrw"]["e_cov_terms"]
        gap = float(paired.mean())
        se = float(paired.std(ddof=1) / math.sqrt(paired.size)) if paired.size > 1 else math.nan
        ordered = True if gap > 0 else False if -gap > 2 * se else None
        verdicts.append(False if False in agreements else None if None in agreements else ordered)
        parts.append(f"B={b} (δ={result['step_size']:.2g}): max |z| "
                     + ", ".join(f"{LABELS[n]} {by[n]['agreement']['max_z']:.2f}" for n in by)
                     + f" of {by['sgld']['agreement']['threshold']:.2f}; E_cov SGLD - SGLRW = {gap:.3g} ± {se:.2g}")
    passed = False if False in verdicts else None if None in verdicts else True
    return Check("Lemma 4.3 holds for our SGLD and SGLRW steps (M_SGLRW = offdiag(M_SGLD)), so Theorem 4.2's "
                 "covariance term is smaller for SGLRW", passed, "; ".join(parts))


def figure(frame: pd.DataFrame) -> bytes:
    """PNG: covariance MSE against the base step size, one panel per B: ours (points with 2 sd bars), the
    recursion's expectation (lines) and the exact-sampling floor."""
    batches = sorted(frame["B"].unique())
    fig, axes = subplots(1, len(batches), figsize=(3.6 * len(batches), 3.2), squeeze=False, sharey=True)
    for ax, b in zip(axes[0], batches):
        rows = frame[frame["B"] == b]
        for k, name in enumerate(dict.fromkeys(rows["sampler"])):
            mine = rows[rows["sampler"] == name]
            ax.errorbar(mine["step size"], mine["mse"], yerr=2 * mine["mse_sd"], fmt="o", color=f"C{k}", ms=4,
                        label=LABELS[name])
            if mine["predicted"].notna().any():
                ax.plot(mine["step size"], mine["predicted"], "-", color=f"C{k}", lw=1, alpha=0.7,
                        label=f"{LABELS[name]} (recursion)")
        ax.axhline(rows["floor"].iloc[0], color="k", lw=0.8, ls=":", label="exact draws")
        ax.set(xscale="log", yscale="log", xlabel="base step size δ", title=f"B = {b}")
    axes[0][0].set_ylabel("covariance MSE")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return png_bytes(fig, dpi=90, tight=True)


def _verdict_with_reason(mse: float, sd: float, predicted: float, clip: float) -> str:
    """The cell's verdict against the recursion, with the reason where it differs because SGLRW's clip binds."""
    if not math.isfinite(predicted):
        return "no prediction"
    said = verdict(mse, sd, predicted)
    if said == "differs" and math.isfinite(clip) and clip > 0.05:
        return f"differs: the clip binds on {clip:.0%} of coordinates at the last step (the recursion ignores it)"
    return said


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce sglrw-covariance``: :func:`compute` at ``scale`` (``--particles``, ``--iterations`` and
    ``--seed`` override it); exits 1 when :func:`ordering_check` or :func:`lemma_check` fails. ``db`` is not used: the
    covariance MSE needs the particles' final positions."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.running.config import MAX_CHAINS, MAX_TOTAL_STEPS

    particles = integer_at_least("--particles", options.get("particles", SCALES[scale]["particles"]), DIM + 2,
                                 MAX_CHAINS)
    iterations = integer_at_least("--iterations", options.get("iterations", NUM_ITERATIONS), 1, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    batch_sizes = SCALES[scale]["batch_sizes"]
    from sgbench.bench.reproduce._record import record_path

    record = record_path(db, "sglrw-covariance")
    (frame, lemma), seconds = timed(compute, particles, batch_sizes, num_iterations=iterations, seed=seed,
                                    progress=progress, record=record)
    shown = pd.DataFrame({
        "B": frame["B"], "δ": [f"{h:g}" for h in frame["step size"]], "sampler": [LABELS[s] for s in frame["sampler"]],
        "covariance MSE (ours)": [f"{v:.3g} ± {sd:.2g}" for v, sd in zip(frame["mse"], frame["mse_sd"])],
        "expected (recursion)": [f"{v:.3g}" if math.isfinite(v) else "" for v in frame["predicted"]],
        "verdict": [_verdict_with_reason(*row) for row in zip(frame["mse"], frame["mse_sd"], frame["predicted"],
                                                              frame["clip share"])],
        "diverged": frame["diverged"]})
    lemma_rows = pd.DataFrame([
        {"B": b, "δ": f"{r['step_size']:.2g}", "sampler": LABELS[name], "states": s["agreement"]["states"],
         "clipped states": s["agreement"]["clipped_states"], "max |z|": round(s["agreement"]["max_z"], 2),
         "threshold": round(s["agreement"]["threshold"], 2), "E_cov": f"{s['e_cov']:.3g}"}
        for b, r in lemma.items() for name, s in r["by_sampler"].items()])
    return Outcome(
        name="sglrw-covariance", title="SGLRW paper, Figure 3 and Theorem 4.2: covariance MSE by step size",
        table=shown, checks=(ordering_check(frame), lemma_check(lemma)),
        intro=(f"Bayesian linear regression, d = {DIM}, N = 1000; {particles} particles x {iterations:,} "
               f"iterations of δ(1+t)^-0.55 from the posterior mean, B in {list(batch_sizes)}, seed {seed}; "
               f"{seconds:.0f} s; finished (B, sampler) runs are kept in {record}. The verdict compares ours with "
               "the exact moment recursion's expectation (SGLD exact; SGLRW ignoring its clip, which binds at "
               "large steps and small B)."),
        sections=(("Covariance MSE against the base step size", figure(frame)),
                  ("Lemma 4.3 measured on our steps", lemma_rows),
                  ("Differences from the paper",
                   "The paper's Figure 3 shows curves without numbers, the step sizes or the particle number; ours "
                   f"are δ in {list(STEP_SIZES)} and the particle number of its Table 1. Its bottom panel of "
                   "Figure 7 (logistic regression) is not reproduced here. Theorem 4.2's constant C is not given, "
                   "so its bound is checked through its scheme-dependent term E_cov (eq. 15), measured with "
                   f"{LEMMA_DRAWS} internal draws at {LEMMA_STATES} posterior states per B.")),
    )


REPRODUCTION = register(Reproduction(
    name="sglrw-covariance",
    summary="SGLRW Figure 3 and Theorem 4.2: covariance MSE of SGLD, SGLRW and Clipped-SGLD by step size and "
            "minibatch size, and Lemma 4.3 measured on the steps",
    source="SGLRW paper, section 4.3 and appendix A.1-A.3",
    scales={"quick": "200 particles x 10,000 iterations, B in {8, 128}, 5 step sizes",
            "paper": "2000 particles x 10,000 iterations, B in {8, 32, 128, 512}, 5 step sizes"},
    run=run,
    keeps="record",
    options=(PARTICLES_OPTION, ITERATIONS_OPTION, SEED_OPTION),
))
