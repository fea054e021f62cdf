r"""The PX-SGMCMC paper's ablation of the expansion (section 5.2.3, Table 4, Figures 2 and 3): SGHMC (c = d = 0)
against PX-SGHMC with the expansions (c, d) = (1, 0), (1, 1) and (2, 2), the ensembles' ERR, NLL and AMB on the
validation split, and the exploration measures of Figure 2, on the digits BNN of ``px-cold-posterior``.

The network, the protocol and the step-size choice are ``px_cold_posterior``'s (its functions, reused): the MLP
with two hidden layers of 16 on scikit-learn's digits (1482 parameters), minibatches of 128, chains from the He
initialisation on the cyclical schedule at T = 1, one sample per cycle (its last position); SGHMC in its practical
form with friction 100, PX-SGHMC with friction 100 on the base parameters and 1 on the expanded matrices (Table
11). Each expansion's peak step is picked from ``px_cold_posterior.STEP_GRID`` by the validation NLL of
``TUNING_CYCLES``-cycle runs (a step at which a chain diverges is not eligible), as ``px-cold-posterior`` picks
SGHMC's and PX-SGHMC's. The number of expanded matrices of a layer is :math:`e = c + d + 1` (the paper counts
:math:`\mathbf V`).

Per chain, from its cycle samples :math:`\theta_1..\theta_M` (the network's weights and biases
:math:`W = \mathbf P \mathbf V \mathbf Q`, :math:`b`, the base parametrisation, which is what a PX sampler's
trace keeps: ``sgbench.samplers.px``): the ensemble's ERR, NLL and AMB on the validation split (Table 4); the
distances :math:`d(\theta_m, \theta_{m+1})` and :math:`\bar d` between consecutive samples
(``sgbench.reference.metrics.consecutive_distances``; Figure 2 (i)); the largest and smallest singular values of
each layer's weight matrix at every sample, and their representatives, the largest over the layers and the
smallest (Figure 2 (ii), which plots convolution kernels' singular values (Sedghi et al. 2019); our layers are
dense, so they are the weight matrices' own); and each sample's own training and validation error, one point per
cycle (the trace of Figure 3, coarser). The claims (:func:`claims`) compare per-chain values (the exploration
measures averaged over the chain's samples) with Welch's t over the chains (``claims.RunsComparison``).

Kept on interruption: each finished run (a step-size trial; an expansion's run), in ``px_table4_runs.jsonl``
beside the results store. The runs are computed in two stages, the step-size trials, then each expansion's run at
its chosen step, each through ``sgbench.bench.reproduce.computed_units`` (here one after another, in ``--jobs N``
spawned processes or as tasks of ``--executor dask``), with progress over its runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce import px_cold_posterior as pxc
from sgbench.bench.reproduce._registry import (
    EXECUTOR_OPTIONS,
    JOBS_OPTION,
    SEED_OPTION,
    Option,
    Reproduction,
    executor_context,
    jobs_of,
    register,
    seed_of,
)
from sgbench.bench.reproduce.claims import Claim, RunsComparison, not_testable, ordering
from sgbench.bench.reproduce.outcome import Outcome, timed
from sgbench.bench.reproduce.sglrw_covariance import with_sd

EXPANSIONS = ((0, 0), (1, 0), (1, 1), (2, 2))  # Table 4's rows
SPLIT = "validation"  # Table 4's split
TRAIN_ERR, VALIDATION_ERR = "train ERR", "validation ERR"  # each cycle sample's own error (Figure 3)
DISTANCE, NORMALISED = "d", "d normalised"  # Figure 2 (i)
LARGEST, SMALLEST = "largest singular value", "smallest singular value"  # Figure 2 (ii)
EXPLORATION = (DISTANCE, NORMALISED, LARGEST, SMALLEST)
NAME = "px-table4"


def label(expansion: tuple) -> str:
    """The arm of ``expansion`` (c, d) as shown and recorded: ``"SGHMC (0, 0)"``, ``"PX-SGHMC (1, 0)"``, ..."""
    return f"{'SGHMC' if expansion == (0, 0) else 'PX-SGHMC'} ({expansion[0]}, {expansion[1]})"


def matrices(expansion: tuple) -> int:
    """The paper's number of expanded matrices of a layer, :math:`e = c + d + 1` (section 5.2.3)."""
    return expansion[0] + expansion[1] + 1


# label -> (registered sampler, its further params): c = d = 0 is SGHMC itself, as in px-cold-posterior.
ARMS = {label(e): ("sghmc", None) if e == (0, 0) else ("px_sghmc", {"expansion": e}) for e in EXPANSIONS}


def exploration(target, samples) -> dict:
    """Figure 2's and Figure 3's measures of one chain's cycle samples ``samples`` (cycles, dim), flat weights and
    biases of ``target`` (a BNN: its ``unflatten``).

    Returns:
        ``{"d": [M - 1 distances], "d normalised": [...], "largest singular value": [per sample, per layer],
        "smallest singular value": [...], "train ERR": [per sample], "validation ERR": [per sample]}``, plain
        floats (the record keeps them).
    """
    from sgbench.reference.metrics import consecutive_distances

    samples = np.asarray(samples, dtype=np.float64)
    singular = [np.linalg.svd(weights, compute_uv=False) for weights, _ in target.unflatten(samples)]
    return {DISTANCE: consecutive_distances(samples).tolist(),
            NORMALISED: consecutive_distances(samples, normalise=True).tolist(),
            LARGEST: np.stack([s.max(axis=-1) for s in singular], axis=-1).tolist(),
            SMALLEST: np.stack([s.min(axis=-1) for s in singular], axis=-1).tolist(),
            **{f"{split} ERR": [pxc.ensemble_scores(target, samples[m:m + 1], split)["ERR"]
                                for m in range(len(samples))] for split in ("train", SPLIT)}}


def compute(chains: int, cycle_length: int, cycles: int, seed: int = 0, grid=None, record=None, jobs: int = 1,
            client=None, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Tune each expansion's peak step (``px_cold_posterior.tune_step_sizes``), then run it at T = 1 on the cyclical
    schedule (``px_cold_posterior.digits_chains``) with :func:`exploration` per chain, each stage's runs through
    ``computed_units.computed``.

    Args:
        chains: chains per run.
        cycle_length: steps per cycle (one sample each).
        cycles: cycles per chain.
        seed: the runs' seed.
        grid: the step sizes tried (default ``px_cold_posterior.STEP_GRID``).
        record: a ``sgbench.bench.reproduce._record`` file keeping every finished run, reused by a rerun of the
            same settings (None: nothing kept).
        jobs: runs computed at once in spawned processes.
        client: a ``distributed.Client``: each run a Dask task instead.
        progress: progress over each stage's runs on stderr (``_record.Units``).

    Returns:
        ``(frame, trace, tuning, steps)``: ``frame`` one row per (sampler, chain) with T, schedule, split and ERR,
        NLL, AMB (NaN: a failed run), in ``px_cold_posterior.summary``'s layout; ``trace`` one row per (sampler,
        chain, cycle) with the measures of :func:`trace_rows` (none for a failed run); the tuning table and the
        chosen step per arm.
    """
    from sgbench.bench.reproduce.computed_units import Unit, computed

    tuning = pxc.tune_step_sizes(chains, cycle_length, seed, grid, arms=ARMS, name=NAME, record=record, jobs=jobs,
                                 client=client, progress=progress)
    steps = pxc.best_steps(tuning)
    settings = {"part": "runs", "chains": chains, "cycle_length": cycle_length, "cycles": cycles, "seed": seed,
                "splits": [SPLIT]}
    units = [Unit((arm,), {**settings, "step_size": steps[arm]},
                  (sampler, steps[arm], 1.0, chains, cycle_length, cycles, seed, (SPLIT,), pxc.CYCLICAL, params,
                   exploration))
             for arm, (sampler, params) in ARMS.items() if steps[arm] is not None]  # None: every step diverged
    results = dict(zip([unit.key[0] for unit in units],
                       computed(f"{NAME} (runs)", record, units, pxc.digits_chains, "run", jobs, client, progress)))
    rows, trace = [], []
    for arm in ARMS:
        for chain, score in enumerate(results.get(arm) or [{SPLIT: dict.fromkeys(pxc.SCORES, math.nan)}] * chains):
            rows.append({"T": 1.0, "schedule": pxc.CYCLICAL, "sampler": arm, "chain": chain, "split": SPLIT,
                         **score[SPLIT]})
            trace += trace_rows(arm, chain, score.get("measures"))
    return pd.DataFrame(rows), pd.DataFrame(trace), tuning, steps


def trace_rows(arm: str, chain: int, measures: dict | None) -> list[dict]:
    """One chain's :func:`exploration` as rows, one per cycle sample m = 1..M: the distance from sample m - 1 to m
    (NaN at m = 1), the largest and smallest singular value over the layers (Figure 2's representatives) and per
    layer (``"largest singular value, layer 1"``, ...), and the sample's own errors; none for a failed run."""
    if measures is None:
        return []
    out = []
    for m, (largest, smallest) in enumerate(zip(measures[LARGEST], measures[SMALLEST])):
        row = {"sampler": arm, "chain": chain, "cycle": m + 1, LARGEST: max(largest), SMALLEST: min(smallest),
               TRAIN_ERR: measures[TRAIN_ERR][m], VALIDATION_ERR: measures[VALIDATION_ERR][m]}
        for key in (DISTANCE, NORMALISED):
            row[key] = measures[key][m - 1] if m else math.nan
        for layer, (high, low) in enumerate(zip(largest, smallest), 1):
            row[f"{LARGEST}, layer {layer}"], row[f"{SMALLEST}, layer {layer}"] = high, low
        out.append(row)
    return out


def per_chain(trace: pd.DataFrame) -> pd.DataFrame:
    """Each chain's measures averaged over its cycle samples (its M - 1 distances), one row per (sampler, chain)."""
    measures = [c for c in trace.columns if c not in ("sampler", "chain", "cycle")]
    return trace.groupby(["sampler", "chain"], sort=False)[measures].mean().reset_index()


def _consecutive(chains: pd.DataFrame, measure: str, decreasing: bool = False) -> list[RunsComparison]:
    """``measure``'s per-chain values of each pair of consecutive expansions that both ran, as the settings of
    "``measure`` increases (``decreasing``: decreases) as e grows": the smaller e's chains are the claimed lower
    (``decreasing``: higher) side."""
    out = []
    for small, large in zip(EXPANSIONS, EXPANSIONS[1:]):
        values = [chains.loc[chains["sampler"] == label(e), measure].to_numpy(dtype=np.float64) for e in (small, large)]
        if all(v.size for v in values):
            setting = f"{measure}, e = {matrices(small)} → {matrices(large)}"
            out.append(RunsComparison.of(setting, *(values[::-1] if decreasing else values)))
    return out


def claims(frame: pd.DataFrame, trace: pd.DataFrame) -> tuple[Claim, ...]:
    """The claims of section 5.2.3 about Table 4 and Figures 2 and 3, each at every expansion it is stated for that
    ran, the chains as runs (Welch's t, 5 % per claim; ``claims.ordering``):

    - Table 4: EP's AMB above SGHMC's (c = d = 0) at every expansion; ERR and NLL below SGHMC's at (1, 0) and (2, 2)
      (``px-cold-posterior`` tests that sentence at (1, 1) on the same runs);
    - Figure 2 (i): both distances increase from each expansion to the next larger e;
    - Figure 2 (ii): the largest singular value rises and the smallest falls from each expansion to the next;
    - Figure 3's faster convergence is not testable (reason given).

    A run that failed counts against its expansion in Table 4's scores (``px_cold_posterior.comparison``); the
    exploration settings of an expansion that failed are left out (its measures do not exist).

    Args:
        frame: :func:`compute`'s scores.
        trace: :func:`compute`'s per-cycle measures.

    Returns:
        the claims with their verdicts.
    """
    chains = per_chain(trace) if len(trace) else pd.DataFrame(columns=["sampler", "chain", *EXPLORATION])
    base = (1.0, pxc.CYCLICAL, label((0, 0)), SPLIT)

    def against_sghmc(score, expansions):
        return [pxc.comparison(frame, f"{score}, (c, d) = ({e[0]}, {e[1]})", score,
                               (1.0, pxc.CYCLICAL, label(e), SPLIT), base) for e in expansions]

    table4 = {f"({e[0]}, {e[1]})": e for e in EXPANSIONS}
    absent = sorted({label(e) for e in EXPANSIONS} - set(chains["sampler"]))
    missing = f"; no measures of {', '.join(absent)} (every step diverged, or its run did)" if absent else ""
    test = f"{pxc.WELCH}; a failed run counts against the expansion that ran it"
    return (
        ordering(
            "Table 4 additionally presents the validation metrics for each setup and clearly demonstrates that the "
            "proposed EP indeed achieves better functional diversity, as indicated by the increased AMB",
            "section 5.2.3, last paragraph, second sentence", against_sghmc("AMB", EXPANSIONS[1:]), "SP (c = d = 0)",
            "EP", paper=pxc.paper_values(pxc.PAPER_TABLE4, table4, ("AMB",)),
            reason="EP at every expansion of Table 4 against SGHMC (c = d = 0), T = 1, the cyclical schedule, "
                   "validation split; px-cold-posterior tests the same sentence at (1, 1) alone; " + test),
        ordering(
            "To sum up, PX-SGMCMC effectively enhances both the exploration and exploitation of a single SGHMC "
            "chain, resulting in improved BMA measured by ERR and NLL", "section 5.2.3, last paragraph, third sentence",
            [*against_sghmc("ERR", ((1, 0), (2, 2))), *against_sghmc("NLL", ((1, 0), (2, 2)))], "EP",
            "SP (c = d = 0)", paper=pxc.paper_values(pxc.PAPER_TABLE4, table4, ("ERR", "NLL")),
            reason="the BMA's ERR and NLL at the expansions (1, 0) and (2, 2) of Table 4; at (1, 1) this sentence "
                   "is px-cold-posterior's claim, on the same runs (the same seed, settings and step search); "
                   "T = 1, the cyclical schedule, validation split; \"exploration and exploitation\" are the claims "
                   f"below and not otherwise measured; {test}"),
        ordering(
            "Both unnormalized and normalized distances between consecutive samples increase as the number of "
            "expanded matrices e = c + d + 1 grows", "section 5.2.3, the paragraph on Figure 2, (i), third sentence",
            [*_consecutive(chains, DISTANCE), *_consecutive(chains, NORMALISED)], "smaller e", "larger e",
            paper="Figure 2 (no numbers in the text)",
            reason=f"d and d normalised by the earlier sample's norm, each chain's mean over its consecutive cycle "
                   f"samples, the network's weights and biases (W = P V Q); each expansion against the next larger "
                   f"e of Table 4 (e = 1, 2, 3, 5){missing}; {pxc.WELCH}"),
        ordering(
            "as the number of expanded matrices increases, the largest singular value rises",
            "section 5.2.3, the paragraph on Figure 2, (ii), third sentence", _consecutive(chains, LARGEST),
            "smaller e", "larger e", paper="Figure 2 (no numbers in the text)",
            reason=f"the largest singular value over the layers' weight matrices (Figure 2's representative; our "
                   f"layers are dense, so no convolution operator), each chain's mean over its cycle samples; each "
                   f"expansion against the next larger e{missing}; {pxc.WELCH}"),
        ordering(
            "as the number of expanded matrices increases, ... the smallest singular value decreases",
            "section 5.2.3, the paragraph on Figure 2, (ii), third sentence", _consecutive(chains, SMALLEST, True),
            "larger e", "smaller e", paper="Figure 2 (no numbers in the text)",
            reason=f"the smallest singular value over the layers' weight matrices (Figure 2's representative), "
                   f"each chain's mean over its cycle samples; each expansion against the next larger "
                   f"e{missing}; {pxc.WELCH}"),
        not_testable(
            "Fig. 3 presents trace plots of training and validation errors, showing that both tend to converge more "
            "rapidly as the number of expanded matrices increases",
            "section 5.2.3, \"EP converges faster than SP\", last sentence",
            "the paper gives no measure of the speed of convergence (no threshold, rate or time to a level) and "
            "Figure 3 has no numbers; our trace has one point per cycle (each cycle sample's own training and "
            "validation error, in the figure), so a lower error at the same cycle could be a faster descent or a "
            "lower level (Table 4's ERR is also lower with more matrices), which the paper's words do not tell "
            "apart"),
    )


def exploration_table(trace: pd.DataFrame) -> pd.DataFrame:
    """Per expansion that ran: e and the mean ± sd over chains of each chain's mean d, d normalised, largest and
    smallest singular value (over the layers) and its samples' own training and validation errors."""
    chains = per_chain(trace)
    rows = []
    for e in EXPANSIONS:
        ours = chains[chains["sampler"] == label(e)]
        if len(ours):
            rows.append({"(c, d)": f"({e[0]}, {e[1]})", "e": matrices(e),
                         **{m: with_sd(ours[m].mean(), ours[m].std(ddof=1))
                            for m in (*EXPLORATION, TRAIN_ERR, VALIDATION_ERR)}})
    return pd.DataFrame(rows)


def layer_table(trace: pd.DataFrame, target_layers) -> pd.DataFrame:
    """Per expansion and layer (``target_layers``: (n_in, n_out) each): the largest and smallest singular value of
    the layer's weight matrix, mean ± sd over chains of each chain's mean over its samples."""
    chains = per_chain(trace)
    rows = []
    for e in EXPANSIONS:
        ours = chains[chains["sampler"] == label(e)]
        for layer, (n_in, n_out) in enumerate(target_layers, 1):
            if len(ours):
                rows.append({"(c, d)": f"({e[0]}, {e[1]})", "layer": f"{layer} ({n_in} x {n_out})",
                             **{m: with_sd(ours[f"{m}, layer {layer}"].mean(), ours[f"{m}, layer {layer}"].std(ddof=1))
                                for m in (LARGEST, SMALLEST)}})
    return pd.DataFrame(rows)


def figure(trace: pd.DataFrame, measures, titles) -> bytes:
    """PNG: each of ``measures`` against the cycle index, one line per expansion (mean over chains)."""
    fig, axes = subplots(1, len(measures), figsize=(3 * len(measures), 2.8))
    for ax, measure, title in zip(np.atleast_1d(axes), measures, titles):
        for k, e in enumerate(EXPANSIONS):
            rows = trace[trace["sampler"] == label(e)].groupby("cycle")[measure].mean().dropna()
            ax.plot(rows.index, rows.to_numpy(), "o-", color=f"C{k}", ms=3, label=f"(c, d) = {e}, e = {matrices(e)}")
        ax.set(xlabel="cycle m", title=title)
    np.atleast_1d(axes)[-1].legend(fontsize=6)
    fig.tight_layout()
    return png_bytes(fig, dpi=90, tight=True)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce px-table4``: :func:`compute` at ``scale`` (``px_cold_posterior.SCALES``; ``--chains``,
    ``--cycles`` and ``--seed`` override it; ``--jobs`` and the executor options say where the runs are computed),
    every finished run kept in ``px_table4_runs.jsonl`` beside the results store ``db``, and the paper's claims
    (:func:`claims`)."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.reproduce._record import record_path

    setting = pxc.SCALES[scale]
    chains = integer_at_least("--chains", options.get("chains", setting["chains"]), 2, 1000)
    cycles = integer_at_least("--cycles", options.get("cycles", setting["cycles"]), 2, 10_000)
    seed = seed_of(options)
    jobs = jobs_of(options)
    record = record_path(db, NAME)
    with executor_context(options, jobs) as client:
        (frame, trace, tuning, steps), seconds = timed(compute, chains, setting["cycle_length"], cycles, seed,
                                                       record=record, jobs=jobs, client=client, progress=progress)
    table = pxc.beside_table4(pxc.summary(frame), rows=[(label(e), label(e).split()[0], e) for e in EXPANSIONS])
    table.insert(2, "peak step", [f"{steps[label(e)]:g}" if steps[label(e)] else "all diverged" for e in EXPANSIONS])
    sections = []
    if len(trace):
        layers = pxc.digits_bnn().layer_shapes
        sections += [
            ("Exploration (Figure 2): per-chain means over the cycle samples, mean ± sd over chains",
             exploration_table(trace)),
            ("Singular values of each layer's weight matrix (per-chain means over the samples, mean ± sd over chains)",
             layer_table(trace, layers)),
            ("Figure 2: distances between consecutive samples and the extreme singular values against the cycle",
             figure(trace, EXPLORATION, ("d(θ_m, θ_m+1)", "d normalised", "largest σ (over layers)",
                                         "smallest σ (over layers)"))),
            ("Figure 3 (coarser): each cycle sample's own training and validation error against the cycle",
             figure(trace, (TRAIN_ERR, VALIDATION_ERR), ("training error", "validation error")))]
    sections += [
        ("Step-size search (validation NLL at T = 1; empty: a chain diverged)", tuning),
        ("Differences from the paper",
         "A 1482-parameter MLP on digits instead of ResNets on CIFAR-10 (no GPU, no download): the paper's values "
         "are beside ours for their direction only, and the claims are its orderings. No normalisation layers, so "
         "the normalised distance removes no scale invariance here; it is computed as the paper defines it. The "
         "singular values are those of the dense layers' weight matrices, not of convolution operators (Sedghi et "
         "al. 2019). Each expansion's step is searched on the same grid at this scale's cycle length; the prior is "
         "the target's N(0, I) for every parameter, the expanded ones included (the paper tuned it per method). "
         "The trace of Figure 3 is one point per cycle, not per step.")]
    return Outcome(
        name=NAME,
        title="PX-SGMCMC paper, section 5.2.3: the expansion ablation (Table 4) with Figure 2's exploration measures",
        table=table, claims=claims(frame, trace),
        intro=(f"Digits MLP (2 x 16 hidden, 1482 parameters), minibatches of {pxc.BATCH_SIZE}; {chains} chains per "
               f"expansion (c, d) in {', '.join(map(str, EXPANSIONS))} from the He initialisation at T = 1, "
               f"{cycles} cycles of {setting['cycle_length']} steps on the cyclical schedule, one sample per cycle; "
               f"peak step sizes chosen per expansion by validation NLL ({pxc.TUNING_CYCLES} cycles); seed {seed}; "
               f"{seconds:.0f} s. Finished runs are kept in {record}."),
        sections=tuple(sections),
    )


REPRODUCTION = register(Reproduction(
    name=NAME,
    summary="PX-SGMCMC Table 4 and Figure 2: SGHMC and PX-SGHMC with (c, d) = (1, 0), (1, 1), (2, 2) on a digits "
            "BNN (validation ERR, NLL, AMB; distances between consecutive samples; extreme singular values)",
    source="PX-SGMCMC paper, section 5.2.3, Table 4, Figures 2 and 3",
    scales={"quick": "4 chains x 10 cycles of 500 steps per expansion, after a step-size search (px-cold-posterior's "
                     "quick scale)",
            "paper": "4 chains x 100 cycles of 5000 steps per expansion, the paper's cycle budget"},
    run=run,
    options=(Option("--chains", "chains per sampler (default: the scale's)"),
             Option("--cycles", "px-table4: cycles per chain, one sample each, at least 2 (default: the scale's)"),
             SEED_OPTION, JOBS_OPTION, *EXECUTOR_OPTIONS),
))
