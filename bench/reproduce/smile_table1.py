r"""Table 1 of the SMILE paper (section 3.2 and appendix C), whole:
the second-moment bias :math:`b^2 = (\mathbb E[\theta^2_{sample}] - \mathbb E[\theta^2])^2 / \mathrm{Var}(\theta^2)`
of SMILE-naive, SGLD, vanilla SGHMC and pSMILE-naive on three 10-d targets with injected gradient noise, and the
full-batch MCLMC baseline.

- Targets: the ICG (eigenvalues log-spaced from 1/100 to 100, a random rotation), Rosenbrock with Q = 0.1 and
  Neal's funnel (:math:`\theta_1 \sim N(0, 3^2)`), each started at its mean.
- Noise (eq. 24, :math:`\log p + \epsilon^\top\theta`): isotropic :math:`V = 256 I`, diagonal :math:`256\Lambda`,
  correlated :math:`R'^\top V_{diag} R'`, spatially varied :math:`V_{corr}\exp(-\theta_2/\sigma(\theta_2))`
  (``sgbench.targets.noise``). The baseline runs MCLMC on the exact gradient with
  :math:`L = \sqrt{\mathrm{tr}\,\Sigma}`.
- 10 chains per step size, one vmapped program per stage of a cell: first :math:`h = 10^i`, i = -6..0; then
  15 step sizes log-spaced from :math:`10^{i_{opt}-1}` to :math:`10^{i_{opt}+1}`; the table gives the best of
  the second stage among step sizes with no diverged chain.
- Score: b^2 averaged over dimensions (maximum over dimensions for the funnel), averaged over chains, with the
  bootstrap standard deviation of that average over chains (``sgbench.reference.metrics.b2``).

The scales: ``quick`` runs 20,000 steps per chain, ``paper`` the paper's 10^6. Every run lands in the results
store under its configuration hash (``sgbench.bench.sweeps``), so a rerun reuses the runs it has and an interrupted one
resumes; ``--jobs N`` shares the work between N processes through the store's claims, and ``--executor dask`` makes
each run a task on Dask distributed (``sgbench.bench.sweeps.dask_tasks``). The acceptance check is the
paper's claim that pSMILE-naive has the lowest bias under anisotropic noise, per target on average over the three
anisotropic noises.

Kept on interruption: every finished compiled call's runs, in the results store (suite ``smile-table1``); progress:
the sweep's, over chain-steps.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import (
    EXECUTOR_OPTIONS,
    PER_TASK_OPTION,
    SEED_OPTION,
    Option,
    Reproduction,
    executor_context,
    register,
    seed_of,
)
from sgbench.bench.reproduce.outcome import Check, Outcome, timed, verdict

TARGETS = {"icg": ("ICG", {"dim": 10, "condition_number": 1e4}),
           "rosenbrock": ("Rosenbrock", {"dim": 10, "Q": 0.1}),
           "funnel": ("Funnel", {"dim": 10, "scale": 3.0})}
MAX_OVER_DIMS = ("funnel",)  # appendix C: "maximum bias for Neal's Funnel"
NOISES = {"isotropic": "Isotropic", "diagonal": "Diagonal", "correlated": "Correlated", "spatial": "Spatially-varied"}
ANISOTROPIC = ("diagonal", "correlated", "spatial")
SAMPLERS = {"smile_naive": "SMILE-naive", "sgld": "SGLD", "sghmc": "SGHMC", "psmile_naive": "pSMILE-naive"}
BASELINE = "mclmc"
STEPS = {"quick": 20_000, "paper": 1_000_000}
NUM_CHAINS = 10
FIRST_STAGE = tuple(10.0 ** i for i in range(-6, 1))
SECOND_STAGE_SIZE = 15
FIGURE_TOP = 10.0  # b^2 beyond this is drawn at it: the figure shows the minima, not the blow-ups

# Table 1: (target, noise) -> the paper's b^2 and bootstrap sd, in the order of SAMPLERS.
PAPER = {
    ("icg", "isotropic"): [(0.003, 0.001), (0.033, 0.006), (0.095, 0.033), (0.006, 0.001)],
    ("icg", "diagonal"): [(0.245, 0.027), (0.184, 0.021), (0.186, 0.020), (0.038, 0.008)],
    ("icg", "correlated"): [(0.502, 0.194), (0.189, 0.029), (0.235, 0.067), (0.055, 0.007)],
    ("icg", "spatial"): [(0.157, 0.010), (0.328, 0.011), (0.331, 0.011), (0.093, 0.019)],
    ("rosenbrock", "isotropic"): [(0.002, 0.001), (0.005, 0.001), (0.004, 0.002), (0.004, 0.001)],
    ("rosenbrock", "diagonal"): [(0.302, 0.111), (0.085, 0.007), (0.160, 0.027), (0.046, 0.002)],
    ("rosenbrock", "correlated"): [(0.265, 0.042), (0.074, 0.007), (0.085, 0.014), (0.070, 0.005)],
    ("rosenbrock", "spatial"): [(0.048, 0.005), (0.079, 0.013), (0.095, 0.013), (0.052, 0.005)],
    ("funnel", "isotropic"): [(0.014, 0.005), (0.141, 0.019), (0.128, 0.019), (0.021, 0.005)],
    ("funnel", "diagonal"): [(0.283, 0.146), (0.063, 0.017), (0.077, 0.039), (0.042, 0.012)],
    ("funnel", "correlated"): [(0.453, 0.231), (0.147, 0.034), (0.138, 0.039), (0.004, 0.002)],
    ("funnel", "spatial"): [(0.023, 0.008), (0.241, 0.043), (0.218, 0.034), (0.012, 0.003)],
}
PAPER_BASELINE = {"icg": 0.0001, "rosenbrock": 0.0003, "funnel": 0.004}  # no sd given


def second_stage(best: float) -> tuple[float, ...]:
    """The paper's refinement: 15 step sizes log-spaced from ``best``/10 to 10 ``best``."""
    return tuple(float(h) for h in np.logspace(math.log10(best) - 1, math.log10(best) + 1, SECOND_STAGE_SIZE))


def _metric(target: str) -> str:
    return f"b2_{'max' if target in MAX_OVER_DIMS else 'mean'}_chain_average"


def _cells(targets, noises, samplers) -> list[tuple[str, str, str]]:
    """(target, noise, sampler) of the table, and (target, "none", "mclmc") of each target's baseline."""
    cells = [(t, n, s) for t in targets for n in noises for s in samplers]
    return cells + [(t, "none", BASELINE) for t in targets]


def _entry(cell, step_sizes, steps: int, seed: int):
    """The sweep entry of one stage of ``cell``: its step sizes in one vmapped program, 10 float32 chains."""
    from sgbench import samplers as sampler_registry, targets as target_registry
    from sgbench.bench.running.config import RunConfig
    from sgbench.bench.running.jax_driver import cached_block_size
    from sgbench.bench.sweeps.run_suites import Entry, step_size_grid

    target, noise, sampler = cell
    params = {**TARGETS[target][1], "noise": noise}
    built_target, built_sampler = target_registry.get(target, **params), sampler_registry.get(sampler)
    extra = {}
    if sampler == BASELINE:  # the decoherence length of MCLMC's usual tuning, sqrt(tr Sigma), from the truth
        truth = built_target.truth
        extra["L"] = float(math.sqrt(np.sum(truth.second_moment - truth.mean ** 2)))
    grid = step_size_grid(step_sizes, **extra)
    # Blocks that fit the caches at the second stage's 15 x 10 chains, in both stages: the step sizes the stages
    # share then have one configuration, computed once (at 10^6 steps: 400 steps for SGLD, 625 for SMILE-naive).
    built_params = built_sampler.params_for(built_target, **grid[0])
    cached = cached_block_size(built_sampler, built_target, [built_params], NUM_CHAINS * SECOND_STAGE_SIZE, most=1000)
    block = max(d for d in range(1, min(steps, cached) + 1) if steps % d == 0)  # no remainder block to compile
    config = RunConfig(num_chains=NUM_CHAINS, num_steps=steps, seed=seed, dtype="float32", block_size=block)
    return Entry(sampler, target, params, grid, config)


def _sweep_in_worker(entries, db, progress: bool) -> None:
    """Run ``entries`` into the store at ``db`` (a worker process of ``--jobs``)."""
    from sgbench.bench.running.compilation_cache import enable_compilation_cache
    from sgbench.bench.sweeps.store import ResultsStore
    from sgbench.bench.sweeps.sweep import run_suite

    enable_compilation_cache()
    with ResultsStore(db) as store:
        run_suite(entries, store, suite_name="smile-table1", progress=progress)


def _sweep(entries, db, progress: bool, jobs: int, client=None, per_task: str = "point") -> None:
    """Every run of ``entries`` into the store: in this process, as Dask tasks of ``client``, or in ``jobs``
    spawned processes that each go through all entries from a different starting point, the store's claims giving
    each run to one of them."""
    if client is not None:
        from sgbench.bench.sweeps.store import ResultsStore
        from sgbench.bench.sweeps.sweep import run_suite

        with ResultsStore(db) as store:
            run_suite(entries, store, suite_name="smile-table1", progress=progress, client=client, per_task=per_task)
        return
    if jobs == 1 or len(entries) < 2:
        _sweep_in_worker(entries, db, progress)
        return
    shift = max(1, len(entries) // jobs)
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_sweep_in_worker, entries[k * shift:] + entries[:k * shift], db, progress and k == 0)
                   for k in range(jobs)]
        for future in futures:
            future.result()


def _stored_rows(entries, db) -> list[pd.DataFrame]:
    """Per entry, its runs in the store (one row per step size, in the entry's order; of a run stored by several
    code versions, the newest)."""
    from sgbench.bench.sweeps.store import ResultsStore
    from sgbench.bench.sweeps.sweep import points

    with ResultsStore(db) as store:
        frame = store.newest_runs().set_index(["config_hash", "seed"])
    return [frame.loc[[(p.config_hash, p.seed) for p in points(entry)]].reset_index() for entry in entries]


def _best(rows: pd.DataFrame, metric: str):
    """The row with the lowest ``metric`` among step sizes with no diverged chain (None if every one diverged)."""
    healthy = rows[(rows["num_diverged_chains"] == 0) & np.isfinite(rows[metric].astype(float))]
    return None if healthy.empty else healthy.loc[healthy[metric].astype(float).idxmin()]


def compute(steps: int, seed: int = 0, db="reports/results.sqlite", jobs: int = 1, progress: bool = True,
            targets=tuple(TARGETS), noises=tuple(NOISES), samplers=tuple(SAMPLERS), client=None,
            per_task: str = "point") -> pd.DataFrame:
    """Both stages of the step-size search of every cell, into the store at ``db``.

    Args:
        steps: steps per chain (quick: 20,000; the paper: 10^6).
        seed: the runs' seed.
        db: the results store's path.
        jobs: processes sharing the runs.
        progress: a progress bar of chain-steps.
        targets: a subset of ``TARGETS``.
        noises: a subset of ``NOISES``.
        samplers: a subset of ``SAMPLERS``.
        client: a ``distributed.Client``: each run a Dask task (``sgbench.bench.sweeps.dask_tasks``), instead of
            ``jobs``.
        per_task: with ``client``, "point" (a task per step size) or "entry" (a task per stage of a cell).

    Returns:
        one row per cell (target, noise, sampler; the baselines with noise "none"): the best step size ``h``,
        ``b2`` and ``b2_sd`` there, the paper's ``paper`` and ``paper_sd``, ``std_error`` (ξ(σ) there), and
        ``grid`` (every step size of both stages with its b^2 and diverged chains) for the figure.
    """
    cells = _cells(targets, noises, samplers)
    first = [_entry(cell, FIRST_STAGE, steps, seed) for cell in cells]
    _sweep(first, db, progress, jobs, client, per_task)
    first_rows = _stored_rows(first, db)
    best_first = [_best(rows, _metric(cell[0])) for cell, rows in zip(cells, first_rows)]
    refined = [(i, _entry(cell, second_stage(float(best["param_step_size"])), steps, seed))
               for i, (cell, best) in enumerate(zip(cells, best_first)) if best is not None]
    _sweep([entry for _, entry in refined], db, progress, jobs, client, per_task)
    second_rows = dict(zip([i for i, _ in refined], _stored_rows([entry for _, entry in refined], db)))
    table = []
    for i, (target, noise, sampler) in enumerate(cells):
        metric = _metric(target)
        grid = pd.concat([first_rows[i], second_rows.get(i, first_rows[i].iloc[:0])])
        best = _best(second_rows[i], metric) if i in second_rows else None
        paper = (PAPER_BASELINE[target], math.nan) if sampler == BASELINE else \
            PAPER[target, noise][list(SAMPLERS).index(sampler)]
        table.append({
            "target": target, "noise": noise, "sampler": sampler,
            "h": math.nan if best is None else float(best["param_step_size"]),
            "b2": math.nan if best is None else float(best[metric]),
            "b2_sd": math.nan if best is None else float(best[f"{metric}_bootstrap_std"]),
            "paper": paper[0], "paper_sd": paper[1],
            "std_error": math.nan if best is None else float(best["std_relative_error"]),
            "grid": [(float(r["param_step_size"]), float(r[metric]), int(r["num_diverged_chains"]))
                     for _, r in grid.sort_values("param_step_size").iterrows()],
        })
    return pd.DataFrame(table)


def _pm(value: float, sd: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:.3g}" if not math.isfinite(sd) else f"{value:.3g} ± {sd:.2g}"


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as printed: ours (± bootstrap sd) beside the paper's, the best step size, the relative error of
    the chains' standard deviations there (ξ(σ) = ‖s - σ‖/‖σ‖: near 1 where the chains barely left their start)
    and the verdict."""
    return pd.DataFrame({
        "target": [TARGETS[t][0] for t in frame["target"]],
        "noise": [NOISES.get(n, "none (baseline)") for n in frame["noise"]],
        "sampler": [SAMPLERS.get(s, "MCLMC, full batch") for s in frame["sampler"]],
        "best h": [f"{h:.3g}" if math.isfinite(h) else "all diverged" for h in frame["h"]],
        "b² ours": [_pm(v, s) for v, s in zip(frame["b2"], frame["b2_sd"])],
        "b² paper": [_pm(v, s) for v, s in zip(frame["paper"], frame["paper_sd"])],
        "ξ(σ)": [f"{v:.2f}" if math.isfinite(v) else "-" for v in frame["std_error"]],
        "verdict": [verdict(*values) for values in zip(frame["b2"], frame["b2_sd"], frame["paper"],
                                                       frame["paper_sd"])],
    })


def _anisotropic_average(rows: pd.DataFrame) -> tuple[float, float]:
    """The mean b^2 of one sampler over the three anisotropic noises and its sd (the cells' bootstrap sds
    combined); inf when a cell is missing or every run of its best search diverged."""
    values, sds = rows["b2"].to_numpy(dtype=float), rows["b2_sd"].to_numpy(dtype=float)
    if len(values) != len(ANISOTROPIC) or not np.all(np.isfinite(values)):
        return math.inf, math.nan
    return float(values.mean()), float(math.sqrt(np.sum(np.nan_to_num(sds) ** 2)) / len(values))


def checks(frame: pd.DataFrame, z: float = 2.0) -> tuple[Check, ...]:
    """Per target: pSMILE-naive's b^2, averaged over the three anisotropic noises, below each other sampler's
    (the paper: "pSMILE-naive ... significantly reduces the bias in all three anisotropic settings ... and
    consistently outperforms both SGLD and SGHMC"; its own numbers satisfy this on every target). Failed when
    another sampler's average is below pSMILE-naive's by more than ``z`` combined sds, not resolved when it is
    below by less; a sampler whose best runs all diverged counts as worse. A target without pSMILE-naive and
    another sampler under every anisotropic noise is not checked."""
    out = []
    rows = frame[frame["noise"].isin(ANISOTROPIC)]
    for target in dict.fromkeys(rows["target"]):
        here = rows[rows["target"] == target]
        stats = {s: _anisotropic_average(here[here["sampler"] == s]) for s in dict.fromkeys(here["sampler"])}
        if "psmile_naive" not in stats or len(stats) < 2:
            continue
        ours, ours_sd = stats.pop("psmile_naive")
        lower = {s: v for s, v in stats.items() if not ours < v[0]}
        beyond = [s for s, (m, sd) in lower.items()
                  if ours - m > z * math.hypot(np.nan_to_num(ours_sd), np.nan_to_num(sd))]
        detail = f"pSMILE-naive {ours:.3g} ± {ours_sd:.2g}; " + ", ".join(
            f"{SAMPLERS[s]} {m:.3g} ± {sd:.2g}" for s, (m, sd) in stats.items())
        out.append(Check(f"{TARGETS[target][0]}: pSMILE-naive has the lowest b² averaged over the anisotropic "
                         "noises", True if not lower else False if beyond else None, detail))
    return tuple(out)


def figure(frame: pd.DataFrame) -> bytes:
    """PNG: per (target, noise), b^2 against the step size over both stages for each sampler (cut at
    ``FIGURE_TOP``; crosses there: a step size where a chain diverged), and the paper's value as a dashed line in
    the sampler's colour."""
    panels = [key for key in dict.fromkeys(zip(frame["target"], frame["noise"])) if key[1] != "none"]
    columns = min(4, len(panels)) or 1
    rows = max(1, math.ceil(len(panels) / columns))
    fig, axes = subplots(rows, columns, figsize=(3.4 * columns, 2.8 * rows), squeeze=False)
    colours = {s: f"C{k}" for k, s in enumerate(SAMPLERS)}
    for ax, (target, noise) in zip(axes.flat, panels):
        for _, row in frame[(frame["target"] == target) & (frame["noise"] == noise)].iterrows():
            h, b2, diverged = (np.array(v, dtype=float) for v in zip(*row["grid"])) if row["grid"] else ([],) * 3
            ok = np.asarray(diverged) == 0
            colour = colours[row["sampler"]]
            ax.plot(np.asarray(h)[ok], np.minimum(np.asarray(b2)[ok], FIGURE_TOP), ".-", color=colour,
                    label=SAMPLERS[row["sampler"]], lw=0.8)
            ax.plot(np.asarray(h)[~ok], np.full((~ok).sum(), FIGURE_TOP), "x", color=colour)
            ax.axhline(row["paper"], color=colour, ls="--", lw=0.8)
        ax.set(xscale="log", yscale="log", title=f"{TARGETS[target][0]}, {NOISES[noise].lower()}",
               xlabel="step size h", ylim=(1e-4, 1.5 * FIGURE_TOP))
        ax.set_ylabel("b² (dashed: paper)")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    return png_bytes(fig, dpi=90)


def _choices(options: dict, key: str, allowed) -> tuple:
    from sgbench.base.arguments import one_of

    chosen = tuple(options.get(key) or allowed)
    for value in chosen:
        one_of(f"--{key}", value, tuple(allowed))
    return chosen


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce smile-table1``: :func:`compute` at ``scale`` (or ``--steps``), then the table, the
    checks and the figure."""
    from sgbench.base.arguments import integer_at_least, one_of
    from sgbench.bench.running.config import MAX_TOTAL_STEPS
    from sgbench.bench.sweeps.dask_tasks import PER_TASK

    steps = integer_at_least("--steps", options.get("steps", STEPS[scale]), 1, MAX_TOTAL_STEPS)
    seed = seed_of(options)
    jobs = integer_at_least("--jobs", options.get("jobs", 1), 1, 64)
    chosen = {key: _choices(options, key, allowed) for key, allowed in
              (("target", TARGETS), ("noise", NOISES), ("sampler", SAMPLERS))}
    executor = options.get("executor", "local")
    per_task = one_of("--per-task", options.get("per_task", "point"), PER_TASK)
    if per_task != "point" and executor != "dask":
        raise ValueError("--per-task needs --executor dask")
    with executor_context(options, jobs) as client:
        frame, seconds = timed(compute, steps, seed=seed, db=db, jobs=jobs, progress=progress, client=client,
                               per_task=per_task,
                               targets=chosen["target"], noises=chosen["noise"], samplers=chosen["sampler"])
    where = "Dask tasks" if executor == "dask" else f"{jobs} process{'es' if jobs > 1 else ''}"
    intro = (f"{NUM_CHAINS} float32 chains x {steps:,} steps per step size (paper: 10 x 10^6), started at the "
             f"target's mean, seed {seed}; two-stage step-size search ({len(FIRST_STAGE)} then 15 step sizes, one "
             f"vmapped program each); b² averaged over dimensions (funnel: maximum), averaged over chains, ± "
             f"bootstrap sd. {seconds:.0f} s in this invocation with {where} "
             f"(runs already in {db} are reused). Verdict: within 2 combined sd of the paper's value, or differs.")
    differences = ("Vanilla SGHMC in Chen et al.'s form with friction 0.01 (the paper does not give its friction); "
                   "the baseline's L = sqrt(tr Σ) from the analytic moments (the paper: the optimal η); float32 "
                   "chains with float64 streaming moments.")
    return Outcome(name="smile-table1", title="SMILE paper, Table 1: second-moment bias b² under injected noise",
                   table=shown(frame), checks=checks(frame), intro=intro,
                   sections=(("b² against the step size, both stages of the search", figure(frame)),
                             ("Differences from the paper", differences)),
                   text_notes=(f"Differences from the paper: {differences}",))


REPRODUCTION = register(Reproduction(
    name="smile-table1",
    summary="SMILE Table 1: b² of SMILE-naive, SGLD, SGHMC, pSMILE-naive on ICG, Rosenbrock, funnel under "
            "four injected noises, and the full-batch MCLMC baseline",
    source="SMILE paper, section 3.2 and appendix C",
    scales={"quick": f"10 chains x {STEPS['quick']:,} steps per step size, both search stages (about 10 minutes "
                     "on 2 cores, most of it compilation)",
            "paper": "10 chains x 10^6 steps per step size, the paper's scale (15.5 minutes on 2 cores with --jobs 2)"},
    run=run,
    keeps="store",
    options=(Option("--steps", "smile-table1: steps per chain (default: 20,000 quick, 10^6 paper)"),
             SEED_OPTION,
             Option("--jobs", "processes sharing the runs through the results store (default: 1)"),
             *EXECUTOR_OPTIONS, PER_TASK_OPTION,
             Option("--target", "smile-table1: only these targets (repeatable; icg, rosenbrock, funnel)", str, True),
             Option("--noise", "smile-table1: only these noises (repeatable; isotropic, diagonal, correlated, "
                               "spatial)", str, True),
             Option("--sampler", "only these samplers (repeatable)", str, True)),
))
