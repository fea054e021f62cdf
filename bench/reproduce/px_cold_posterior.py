r"""The PX-SGMCMC paper's cold-posterior and ensemble-ambiguity experiment
(appendix B.4 and Figure 7, with the AMB of Tables 4 and 10) at a scale this machine can run: SGHMC against
PX-SGHMC (c = d = 1) on a classification BNN, at posterior temperatures T = 1, 0.1 and 0.01.

The paper's runs are ResNets on CIFAR-10 for days of GPU time. Here the network is ``targets.get("bnn",
task="classification")``, an MLP with two hidden layers of 16 on scikit-learn's digits (1482 parameters, 70/10/20
split), with minibatches of 128. The protocol is the paper's (appendix D, "Running from scratch"): chains start
at the network's He initialisation and run the cyclical step schedule; each cycle's last position is one sample,
and the ensemble of one chain's samples is scored on the test split. The scores are the classification error
(ERR), the NLL of the averaged predictive, and the ensemble ambiguity (AMB, eq. 41:
``sgbench.reference.metrics.ensemble_ambiguity``, higher = more diverse functions), each as mean ± sd over the chains
("trials"). The frictions are the paper's Table 11: 100 on the base parameters, and 1 on PX's expanded matrices.
Each sampler's peak step size is picked from ``STEP_GRID`` by the validation NLL at T = 1, as Table 11's search
did; a step size at which any chain diverges is not eligible.

Kept on interruption: each finished run (step-size trial; temperature and sampler), in
``px_cold_posterior_runs.jsonl`` beside the results store; progress over the runs
(``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import SEED_OPTION, Option, Reproduction, register, seed_of
from sgbench.bench.reproduce.outcome import NO_PAPER_VALUE, Check, Outcome, timed

TEMPERATURES = (1.0, 0.1, 0.01)
STEP_GRID = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2)  # friction 100 x step < 2: SGHMC's range
SAMPLERS = {"sghmc": "SGHMC", "px_sghmc": "PX-SGHMC"}
SAMPLER_PARAMS = {"sghmc": {"form": "practical", "friction": 100.0}, "px_sghmc": {}}  # px_sghmc: 100 and 1
BATCH_SIZE = 128
TUNING_CYCLES = 10
SCALES = {"quick": {"chains": 4, "cycle_length": 500, "cycles": 10},
          "paper": {"chains": 4, "cycle_length": 5000, "cycles": 100}}
# PX appendix B.4 gives the cold-posterior results as a figure (Figure 7, no numbers); Table 10 (CIFAR-10, cyclical
# schedule, T = 1) gives ERR, NLL and AMB with their sd over four trials, for reference.
PAPER_TABLE10 = {"sghmc": {"ERR": "0.133 ± 0.002", "NLL": "0.422 ± 0.005", "AMB": "0.186 ± 0.004"},
                 "px_sghmc": {"ERR": "0.121 ± 0.002", "NLL": "0.388 ± 0.005", "AMB": "0.242 ± 0.002"}}


def _target():
    from sgbench import targets

    return targets.get("bnn", task="classification", noise="minibatch", noise_batch_size=BATCH_SIZE)


def ensemble_scores(target, samples, split: str = "test") -> dict:
    """ERR, NLL and AMB of the ensemble of ``samples`` (members, dim) on ``split``."""
    from sgbench.reference.metrics import accuracy, ensemble_ambiguity, nll

    features, labels = target.splits[split]
    logits = np.stack([np.asarray(target.predict(x, features)) for x in samples])
    top = logits.max(axis=-1, keepdims=True)
    log_probs = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    labels = labels.astype(int)
    return {"ERR": 1 - accuracy(labels, log_probs=log_probs), "NLL": nll(labels, log_probs=log_probs),
            "AMB": ensemble_ambiguity(log_probs=log_probs)}


def run_chains(target, sampler: str, step_size: float, temperature: float, chains: int, cycle_length: int,
               cycles: int, seed: int, split: str = "test") -> list[dict] | None:
    """``chains`` chains of ``sampler`` from the target's initialisation for ``cycles`` cycles of the cyclical
    schedule at peak ``step_size``, each cycle's last position kept: one :func:`ensemble_scores` per chain on
    ``split``, or None when a chain diverged."""
    from sgbench.bench.running import run as running

    params = dict(step_size=step_size, temperature=temperature,
                  schedule={"kind": "cyclical", "cycle_length": cycle_length}, **SAMPLER_PARAMS[sampler])
    result = running.run(sampler, target, params=params, num_chains=chains, num_steps=cycles * cycle_length,
                         thin=cycle_length, keep_samples=True, seed=seed)
    if np.any(np.asarray(result.trace.first_nonfinite_step) >= 0):
        return None
    samples = np.asarray(result.samples)
    return [ensemble_scores(target, samples[c], split) for c in range(chains)]


def tune_step_sizes(target, chains: int, cycle_length: int, seed: int, units, grid=None) -> pd.DataFrame:
    """Per sampler and step size of ``grid`` (default ``STEP_GRID``) at T = 1: the mean validation NLL over
    ``chains`` chains of ``TUNING_CYCLES`` cycles (NaN where a chain diverged); each a unit of ``units`` (a
    ``sgbench.bench.reproduce._record.Units``: kept in its record)."""
    settings = {"part": "tuning", "chains": chains, "cycle_length": cycle_length, "cycles": TUNING_CYCLES,
                "seed": seed}

    def validation_nll(sampler, step):
        scores = run_chains(target, sampler, step, 1.0, chains, cycle_length, TUNING_CYCLES, seed, split="validation")
        return math.nan if scores is None else float(np.mean([s["NLL"] for s in scores]))

    rows = [{"sampler": sampler, "step size": step,
             "validation NLL": units.cached(settings, (sampler, step), validation_nll, sampler, step)}
            for sampler in SAMPLERS for step in (STEP_GRID if grid is None else grid)]
    return pd.DataFrame(rows).astype({"validation NLL": float})


def best_steps(tuning: pd.DataFrame) -> dict:
    """Per sampler, the grid step size of the lowest validation NLL (None when every one diverged)."""
    out = {}
    for sampler, rows in tuning.groupby("sampler"):
        finite = rows.dropna(subset=["validation NLL"])
        out[sampler] = None if finite.empty else float(finite.loc[finite["validation NLL"].idxmin(), "step size"])
    return out


def compute(chains: int, cycle_length: int, cycles: int, seed: int = 0, temperatures=TEMPERATURES,
            grid=None, record=None, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Tune, then run every (temperature, sampler). Returns ``(frame, tuning, steps)``: one row per (temperature,
    sampler, chain) with ERR, NLL and AMB (a diverged run's rows hold NaN), the tuning table and the chosen
    step sizes. With ``record`` (a ``sgbench.bench.reproduce._record`` file) every finished run is kept and reused by a
    rerun of the same settings; ``progress``: progress over the runs on stderr (``_record.Units``)."""
    from sgbench.bench.reproduce._record import Units

    settings = {"part": "runs", "chains": chains, "cycle_length": cycle_length, "cycles": cycles, "seed": seed}
    total = len(SAMPLERS) * (len(STEP_GRID if grid is None else grid) + len(temperatures))
    rows = []
    with Units("px-cold-posterior", record, total, "run", progress) as units:
        target = _target()
        tuning = tune_step_sizes(target, chains, cycle_length, seed, units, grid)
        steps = best_steps(tuning)
        for temperature in temperatures:
            for sampler, step in steps.items():
                if step is None:  # every step size diverged: nothing to run
                    scores = None
                    units.update()
                else:
                    scores = units.cached({**settings, "step_size": step}, (temperature, sampler), run_chains,
                                          target, sampler, step, temperature, chains, cycle_length, cycles, seed)
                for chain, score in enumerate(scores or [dict.fromkeys(("ERR", "NLL", "AMB"), math.nan)] * chains):
                    rows.append({"T": temperature, "sampler": sampler, "chain": chain, **score})
    return pd.DataFrame(rows), tuning, steps


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (T, sampler): each score's mean and sd over chains."""
    groups = frame.groupby(["T", "sampler"], sort=False)[["ERR", "NLL", "AMB"]]
    means, sds = groups.mean(), groups.std(ddof=1)
    return means.join(sds.add_suffix("_sd")).reset_index()


def checks(table: pd.DataFrame, chains: int, z: float = 2.0) -> tuple[Check, ...]:
    """The paper's claims: PX-SGHMC's NLL below SGHMC's at every temperature (appendix B.4: "consistently
    outperforms the SGHMC baseline across ... temperature values"), and its AMB above SGHMC's at every
    temperature (Tables 4 and 10: more diverse functions). Passed when the means go the claimed way at every T,
    failed when they go against it by more than ``z`` standard errors of the difference (independent chains:
    sqrt(sd_a^2 + sd_b^2) / sqrt(chains)) at some T, not resolved otherwise."""
    out = []
    for score, sign, words in (("NLL", -1, "NLL below SGHMC's"), ("AMB", 1, "ensemble ambiguity above SGHMC's")):
        parts, verdicts = [], []
        for temperature, rows in table.groupby("T", sort=False):
            rows = rows.set_index("sampler")
            gap = sign * (rows.loc["px_sghmc", score] - rows.loc["sghmc", score])
            se = math.hypot(rows.loc["px_sghmc", f"{score}_sd"], rows.loc["sghmc", f"{score}_sd"]) / math.sqrt(chains)
            verdicts.append(True if gap > 0 else False if not math.isfinite(gap) or -gap > z * se else None)
            parts.append(f"T={temperature:g}: PX - SGHMC = {sign * gap:+.3f} ± {se:.3f}")
        passed = False if False in verdicts else None if None in verdicts else True
        out.append(Check(f"PX-SGHMC's {words} at every temperature", passed, "; ".join(parts)))
    return tuple(out)


def display(table: pd.DataFrame, steps: dict) -> pd.DataFrame:
    """The summary as printed: mean ± sd per score, the peak step size, and no paper value (Figure 7 has no
    numbers)."""
    shown = pd.DataFrame({"T": table["T"], "sampler": [SAMPLERS[s] for s in table["sampler"]],
                          "peak step": [f"{steps[s]:g}" if steps[s] else "all diverged" for s in table["sampler"]]})
    for score in ("ERR", "NLL", "AMB"):
        shown[score] = [f"{v:.3f} ± {sd:.3f}" if math.isfinite(v) else "" for v, sd in
                        zip(table[score], table[f"{score}_sd"])]
    shown["verdict"] = NO_PAPER_VALUE
    return shown


def figure(table: pd.DataFrame) -> bytes:
    """PNG: ERR, NLL and AMB against the temperature (log scale), one line per sampler, 2-sd bars."""
    fig, axes = subplots(1, 3, figsize=(11, 3))
    for ax, score in zip(axes, ("ERR", "NLL", "AMB")):
        for k, sampler in enumerate(SAMPLERS):
            rows = table[table["sampler"] == sampler]
            ax.errorbar(rows["T"], rows[score], yerr=2 * rows[f"{score}_sd"], fmt="o-", color=f"C{k}", ms=4,
                        label=SAMPLERS[sampler])
        ax.set(xscale="log", xlabel="temperature T", title=score)
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    return png_bytes(fig, dpi=90, tight=True)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce px-cold-posterior``: :func:`compute` at ``scale`` (``--chains``, ``--cycles`` and
    ``--seed`` override it), every finished run kept in ``px_cold_posterior_runs.jsonl`` beside the results store
    ``db``."""
    from sgbench.base.arguments import integer_at_least

    setting = SCALES[scale]
    chains = integer_at_least("--chains", options.get("chains", setting["chains"]), 2, 1000)
    cycles = integer_at_least("--cycles", options.get("cycles", setting["cycles"]), 1, 10_000)
    seed = seed_of(options)
    from sgbench.bench.reproduce._record import record_path

    record = record_path(db, "px-cold-posterior")
    (frame, tuning, steps), seconds = timed(compute, chains, setting["cycle_length"], cycles, seed, record=record,
                                               progress=progress)
    table = summary(frame)
    paper = pd.DataFrame([{"sampler": SAMPLERS[s], **v} for s, v in PAPER_TABLE10.items()])
    return Outcome(
        name="px-cold-posterior",
        title="PX-SGMCMC paper, appendix B.4: SGHMC and PX-SGHMC under cold posteriors, with ensemble ambiguity",
        table=display(table, steps), checks=checks(table, chains),
        intro=(f"Digits MLP (2 x 16 hidden, 1482 parameters), minibatches of {BATCH_SIZE}; {chains} chains per "
               f"(T, sampler) from the He initialisation, {cycles} cycles of {setting['cycle_length']} steps, one "
               f"sample per cycle; peak step sizes chosen at T = 1 by validation NLL ({TUNING_CYCLES} cycles); "
               f"seed {seed}; {seconds:.0f} s. Scores on the test split, mean ± sd over chains. Finished runs are "
               f"kept in {record}."),
        sections=(("Scores against the temperature", figure(table)),
                  ("Step-size search (validation NLL at T = 1; empty: a chain diverged)", tuning),
                  ("The paper's Table 10 (CIFAR-10, ResNet, T = 1), for reference", paper),
                  ("Differences from the paper",
                   "A 1482-parameter MLP on digits instead of ResNets on CIFAR-10 (no GPU, no download), hence no "
                   "cell has a paper value: the checks are the paper's orderings. The step sizes are searched on a "
                   "shorter run (10 cycles) and reused at every temperature; the prior is the target's N(0, I) for "
                   "both samplers (the paper tuned it per method).")),
    )


REPRODUCTION = register(Reproduction(
    name="px-cold-posterior",
    summary="PX-SGMCMC appendix B.4: SGHMC vs PX-SGHMC on a digits BNN at T = 1, 0.1, 0.01 (ERR, NLL, ensemble "
            "ambiguity)",
    source="PX-SGMCMC paper, appendix B.4, Tables 4 and 10",
    scales={"quick": "4 chains x 10 cycles of 500 steps per (T, sampler), after a step-size search",
            "paper": "4 chains x 100 cycles of 5000 steps per (T, sampler), the paper's cycle budget"},
    run=run,
    keeps="record",
    options=(Option("--chains", "chains per sampler (default: the scale's)"),
             Option("--cycles", "px-cold-posterior: cycles per chain, one sample each (default: the scale's)"),
             SEED_OPTION),
))
