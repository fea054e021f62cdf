r"""The SMILE paper's BNN regression benchmark (section 3.3, Table 2; appendix E.1): stochastic microcanonical samplers
against scale-adapted SGHMC and the full-batch gold standard MILE, at the same number of sampling steps as MILE
("batch-wise") and at the same number of passes through the data ("epoch-wise").

Protocol (appendix E.1): a regression network with three hidden layers of 16 (ReLU), prior N(0, I), a 70/10/20
train/validation/test split per data split; 10 chains, each started from one member of MILE's deep ensemble (every
method starts from the same ensemble of a split); MILE with the budget of Sommer et al. (tuning phases (40000, 5000,
5000), 10000 sampling steps kept every 10: 1000 draws a chain); every stochastic sampler at the paper's fixed step
size 0.001 with minibatches of 256 (``targets.get("bnn", noise="minibatch")``: indices drawn with replacement).
Batch-wise, a stochastic chain runs MILE's steps (its tuning steps as burn-in, then its sampling steps kept every 10);
epoch-wise, every one of those steps becomes an epoch of :math:`\lceil N_{train} / 256 \rceil` minibatch steps,
a draw kept at the end of every 10th epoch of the sampling part, so each chain makes MILE's number of passes through
the data. The stochastic samplers are the paper's rows, scale-adapted SGHMC (the paper's SGHMC baseline, section
2.2; its burn-in adaptation over the burn-in steps), SMILE-naive and pSMILE-naive, and ours beyond the table, SMILE
and pSMILE (Algorithm 1, their step starting at 0.001). The deep ensemble's own predictive is shown for reference.

Metrics (``sgbench.bench.reproduce.mile_uci.predictive_metrics``, standardised label units): hold-out LPPD and RMSE
of the mixture over all kept draws, as in the paper; the calibration error of MILE's Definition 2 besides. The paper
reports mean ± standard deviation over 3 splits; so does the table. The network's likelihood is the suite's
distributional Gaussian (location and log-scale outputs, MILE's regression model); the paper's Table 2 calls its
task "classical mean regression" without its noise model.

Data: scikit-learn's diabetes data and the generated Friedman #1 benchmark by default (the paper's UCI sets cannot be
downloaded here); ``--data NAME=PATH`` runs a user's file instead (``.csv`` with a label column ``y``, or ``.npz``,
through ``sgbench.targets.datasets.load_file``); when NAME is one of the paper's sets (airfoil, bikesharing,
energy), our cells stand beside the paper's with a verdict each. The claims (:func:`claims`) compare methods on the
same splits and starts by paired t-tests over the splits (``claims.PairedComparison``).

Kept on interruption: each finished (data set, split, method, budget) in ``smile_table2_runs.jsonl`` beside the
results store; ``--jobs N`` or ``--executor dask`` computes units in parallel (``computed_units``); progress over
the chain-steps.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pandas as pd

from sgbench.base import provenance
from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce import mile_uci
from sgbench.bench.reproduce._registry import (
    EXECUTOR_OPTIONS,
    JOBS_OPTION,
    SEED_OPTION,
    Option,
    Reproduction,
    check_data_file,
    executor_context,
    jobs_of,
    register,
    seed_of,
)
from sgbench.bench.reproduce.claims import Claim, PairedComparison, not_testable, ordering
from sgbench.bench.reproduce.outcome import NO_PAPER_VALUE, NO_RESULT, Outcome, timed, verdict

NAME = "smile-table2"
DATASETS = ("diabetes", "friedman1")
HIDDEN = (16, 16, 16)  # appendix E.1: three hidden layers of 16
NUM_CHAINS = 10
STEP_SIZE = 1e-3  # appendix E.1: every SGMCMC variant's fixed step size
BATCH_SIZE = 256
THIN = 10  # MILE keeps every 10th of its sampling steps (1000 of 10000)
FULL, BATCH, EPOCH = "full-batch", "batch-wise", "epoch-wise"
STOCHASTIC = {"sghmc_sa": "SGHMC", "smile_naive": "SMILE-naive", "psmile_naive": "pSMILE-naive",
              "smile": "SMILE (ours)", "psmile": "pSMILE (ours)"}
METHODS = {"de": "DE (start)", "mile": "MILE", **STOCHASTIC}
METRICS = {"lppd": "LPPD (↑)", "rmse": "RMSE (↓)", "calibration": "CalE (↓)"}
SIGNS = {"lppd": 1, "rmse": -1, "calibration": -1}
SHORT = {"lppd": "LPPD", "rmse": "RMSE", "calibration": "CalE"}
CLAIMED = ("lppd", "rmse")  # the paper's two metrics
SCALES = {"quick": {"phases": (2000, 250, 250), "sampling": 500, "splits": 3},
          "paper": {"phases": (40_000, 5000, 5000), "sampling": 10_000, "splits": 3}}
PAPER_DATASETS = ("airfoil", "bikesharing", "energy")
# Table 2: (method, budget) -> data set -> (LPPD, its sd, RMSE, its sd), sd over 3 splits.
PAPER_TABLE2 = {
    ("mile", FULL): {"airfoil": (0.665, 0.062, 0.152, 0.014), "bikesharing": (0.226, 0.043, 0.229, 0.016),
                     "energy": (2.204, 0.024, 0.032, 0.002)},
    ("sghmc_sa", BATCH): {"airfoil": (-0.176, 0.023, 0.265, 0.020), "bikesharing": (-0.092, 0.029, 0.250, 0.015),
                          "energy": (0.062, 0.034, 0.113, 0.009)},
    ("smile_naive", BATCH): {"airfoil": (0.280, 0.008, 0.185, 0.006), "bikesharing": (0.132, 0.046, 0.236, 0.017),
                             "energy": (1.191, 0.015, 0.045, 0.001)},
    ("psmile_naive", BATCH): {"airfoil": (0.438, 0.042, 0.172, 0.007), "bikesharing": (0.185, 0.037, 0.231, 0.014),
                              "energy": (1.666, 0.017, 0.041, 0.001)},
    ("sghmc_sa", EPOCH): {"airfoil": (0.177, 0.037, 0.214, 0.004), "bikesharing": (0.145, 0.059, 0.236, 0.019),
                          "energy": (1.063, 0.020, 0.053, 0.002)},
    ("smile_naive", EPOCH): {"airfoil": (0.497, 0.049, 0.166, 0.007), "bikesharing": (0.167, 0.058, 0.233, 0.018),
                             "energy": (1.287, 0.020, 0.046, 0.001)},
    ("psmile_naive", EPOCH): {"airfoil": (0.633, 0.052, 0.151, 0.005), "bikesharing": (0.221, 0.028, 0.230, 0.013),
                              "energy": (2.018, 0.060, 0.038, 0.003)},
}
SECTION = "section 3.3"
BENEFIT = f"{SECTION}, \"The benefit of gradient noise preconditioning\""
GAP = f"{SECTION}, \"Closing the gap to full-batch MCMC\""
DATA_OPTION = Option("--data", "NAME=PATH: a user's regression file (.csv with label column y, or .npz) run instead "
                               "of the bundled data; NAME airfoil, bikesharing or energy compares with the paper's "
                               "Table 2; repeatable", str, repeatable=True)
DATA_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


def parse_data(entries) -> dict:
    """``{name: path}`` of the ``--data NAME=PATH`` entries (None or empty: the bundled ``DATASETS``, path None);
    a ValueError naming ``--data`` and the accepted form for a malformed entry, a repeated name or a file the
    network cannot be built on."""
    if not entries:
        return {name: None for name in DATASETS}
    data = {}
    for entry in entries:
        name, separator, path = str(entry).partition("=")
        if not separator or not DATA_NAME.fullmatch(name) or not path:
            raise ValueError(f"--data must be NAME=PATH (NAME: 1 to 40 letters, digits, _ or -; PATH: a .csv file "
                             f"with a label column y, or a .npz file), got {entry!r}")
        if name.lower() in data:
            raise ValueError(f"--data names {name!r} twice; give each data set once")
        check_data_file(f"--data {name}", path, hidden=HIDDEN)  # a bad file is refused before any run
        data[name.lower()] = path
    return data


def _network(name: str, path, split: int, noise: str):
    """The paper's network on data set ``name`` (bundled, or the file ``path``), data split ``split``: exact
    gradients (``noise="none"``) or minibatches of ``BATCH_SIZE`` (at most the training split)."""
    from sgbench import targets

    source = {"dataset": "file", "path": path} if path is not None else {"dataset": name}
    exact = targets.get("bnn", noise="none", hidden=HIDDEN, split_seed=split, **source)
    if noise == "none":
        return exact
    return targets.get("bnn", noise="minibatch", noise_batch_size=min(BATCH_SIZE, exact.num_data), hidden=HIDDEN,
                       split_seed=split, **source)


@functools.lru_cache(maxsize=2)
def _starts(name: str, path, split: int, seed: int) -> tuple:
    """(the deep ensemble of ``NUM_CHAINS`` members on split ``split``, seconds it took): every method's starts;
    kept for the next unit of the same split in this process."""
    from sgbench.samplers import mile

    return timed(mile.initial_positions, _network(name, path, split, "none"), NUM_CHAINS, seed)


def batches_per_epoch(num_train: int) -> int:
    r""":math:`\lceil N_{train} / B \rceil` minibatch steps make one pass through the training data (B =
    ``BATCH_SIZE``, or all the data when there are fewer)."""
    return math.ceil(num_train / min(BATCH_SIZE, num_train))


def schedule(method: str, budget: str, phases, sampling: int, num_train: int) -> dict:
    """A chain's steps: ``{"burnin", "steps", "thin"}`` of ``method`` under ``budget``, from MILE's ``phases`` and
    ``sampling`` steps: MILE and batch-wise runs take MILE's steps (burn-in = its tuning), epoch-wise runs
    :func:`batches_per_epoch` times each."""
    factor = batches_per_epoch(num_train) if budget == EPOCH else 1
    return {"burnin": sum(phases) * factor, "steps": sampling * factor, "thin": THIN * factor}


def sampler_params(method: str, burnin: int) -> dict:
    """``method``'s hyperparameters: MILE's own tuning (in :func:`one_unit`), else the paper's fixed step size;
    scale-adapted SGHMC adapts its preconditioner over the ``burnin`` steps."""
    if method == "sghmc_sa":
        return {"step_size": STEP_SIZE, "burn_in_steps": burnin}
    return {"step_size": STEP_SIZE}


def one_unit(name: str, path, split: int, method: str, budget: str, phases, sampling: int, seed: int,
             progress=None) -> dict:
    """``method`` under ``budget`` on split ``split`` of data set ``name``: its hold-out metrics
    (:func:`mile_uci.predictive_metrics`: LPPD, RMSE, calibration error) over the kept draws of its finite chains.

    Args:
        name: the data set (bundled, or a user's named file).
        path: the file of ``name``, or None for bundled data.
        split: the data split (its seed).
        method: a key of ``METHODS``.
        budget: ``FULL`` (DE, MILE), ``BATCH`` or ``EPOCH``.
        phases: MILE's tuning phases.
        sampling: MILE's sampling steps.
        seed: the deep ensemble's and the chains' seed.
        progress: called with the chain-steps done, or None.

    Returns:
        the metrics, ``nan chains``, ``seconds`` (the run; the ensemble's fit for the DE), ``steps`` and ``gradient
        evaluations`` per chain, ``passes`` through the training data per chain, and the ``final step size``
        (median over chains: MILE's tuned step, SMILE's and pSMILE's adapted one, the others' fixed one).
    """
    from sgbench.bench.running import run as running

    starts, de_seconds = _starts(name, path, split, seed)
    exact = _network(name, path, split, "none")
    if method == "de":
        row = {**_metrics(exact, starts), "nan chains": 0, "seconds": de_seconds, "steps": math.nan,
               "gradient evaluations": math.nan, "passes": math.nan, "final step size": math.nan}
    else:
        plan = schedule(method, budget, phases, sampling, exact.num_data)
        target = exact if method == "mile" else _network(name, path, split, "minibatch")
        params = (dict(tuning_steps=tuple(phases), sampling_steps=sampling, thin=THIN) if method == "mile"
                  else sampler_params(method, plan["burnin"]))
        result, seconds = timed(running.run, method, target, params=params, num_chains=NUM_CHAINS,
                                num_steps=plan["steps"], num_burnin=plan["burnin"], thin=plan["thin"],
                                keep_samples=True, seed=seed, initial_position=starts, progress=progress)
        failed = np.asarray(result.trace.nonfinite_steps) > 0
        kept = np.asarray(result.samples)[~failed].reshape(-1, target.dim)
        evaluations = float(np.mean(result.trace.grad_evals))
        final = result.trace.final_state
        final_step = float(np.median(final.step_size)) if hasattr(final, "step_size") else STEP_SIZE
        per_evaluation = 1.0 if method == "mile" else target.noise.batch_size / target.num_data
        row = {**_metrics(exact, kept), "nan chains": int(failed.sum()), "seconds": seconds,
               "steps": plan["burnin"] + plan["steps"], "gradient evaluations": evaluations,
               "passes": evaluations * per_evaluation, "final step size": final_step}
    return {"data set": name, "split": split, "method": method, "budget": budget, **row,
            "commit": provenance.git_commit()}


def _metrics(target, positions) -> dict:
    """The metrics of ``METRICS`` of the mixture over ``positions`` on ``target``'s test split."""
    metrics = mile_uci.predictive_metrics(target, positions)
    return {key: metrics[key] for key in METRICS}


def units(data: dict, splits: int, phases, sampling: int, seed: int):
    """The units of :func:`compute`: for every data set and split, the DE, MILE, and each stochastic sampler
    batch-wise and epoch-wise."""
    from sgbench.bench.reproduce.computed_units import Unit

    settings = {"phases": list(phases), "sampling": sampling, "seed": seed, "hidden": list(HIDDEN),
                "chains": NUM_CHAINS, "step_size": STEP_SIZE, "batch_size": BATCH_SIZE}
    runs = [("de", FULL), ("mile", FULL)] + [(m, b) for b in (BATCH, EPOCH) for m in STOCHASTIC]
    out = []
    for name, path in data.items():
        num_train = _network(name, path, 0, "none").num_data
        for split in range(splits):
            for method, budget in runs:
                plan = schedule(method, budget, phases, sampling, num_train)
                size = NUM_CHAINS * (1 if method == "de" else plan["burnin"] + plan["steps"])
                out.append(Unit((name, split, method, budget), {**settings, "path": path},
                                (name, path, split, method, budget, tuple(phases), sampling, seed), size))
    return out


def compute(data: dict, splits: int, phases, sampling: int, seed: int = 0, record=None, jobs: int = 1, client=None,
            progress: bool = True) -> pd.DataFrame:
    """Every unit of :func:`units`, each kept in ``record`` as it finishes: one row per (data set, split, method,
    budget) (:func:`one_unit`).

    Args:
        data: ``{name: path}`` (:func:`parse_data`).
        splits: data splits per data set.
        phases: MILE's tuning phases (the stochastic samplers' burn-in, batch-wise).
        sampling: MILE's sampling steps.
        seed: the ensembles' and chains' seed.
        record: the record file (``_record``), or None.
        jobs: units at once in spawned processes.
        client: a ``distributed.Client``: each unit a Dask task.
        progress: progress lines on stderr.

    Returns:
        the rows.
    """
    from sgbench.bench.reproduce.computed_units import computed

    rows = computed(NAME, record, units(data, splits, phases, sampling, seed), one_unit, "chain-step", jobs,
                    client, progress, reports_progress=True)
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (data set, budget, method): each metric's mean and standard deviation over the splits (the paper's ±),
    the non-finite chains of all splits, the per-chain steps, gradient evaluations, passes and mean seconds, and
    the median final step size over splits."""
    groups = frame.groupby(["data set", "budget", "method"], sort=False)
    out = groups[list(METRICS)].mean()
    for name in METRICS:
        out[f"{name}_sd"] = groups[name].std(ddof=1)
    out["nan chains"] = groups["nan chains"].sum()
    out["splits"] = groups["split"].count()
    for column in ("steps", "gradient evaluations", "passes", "seconds"):
        out[column] = groups[column].mean()
    out["final step size"] = groups["final step size"].median()
    return out.reset_index()


def _signed(frame: pd.DataFrame, dataset: str, metric: str) -> pd.DataFrame:
    """``metric`` on ``dataset`` per split (rows) and (method, budget) (columns), signed so that higher is better;
    a run whose every chain failed (no finite draw: NaN) is ``-inf``, below any value."""
    rows = frame[frame["data set"] == dataset].set_index(["split", "method", "budget"])[metric].unstack(
        ["method", "budget"])
    return (SIGNS[metric] * rows).fillna(-np.inf)


def _paired(frame: pd.DataFrame, dataset: str, metric: str, better: tuple, worse: tuple,
            label: str) -> PairedComparison:
    """Per split, (method, budget) ``better``'s ``metric`` minus ``worse``'s, signed so that a positive difference
    is ``better``'s advantage; named ``"DATASET LABEL METRIC"``. The splits pair them: same data, same starts. A
    run that failed counts against its method (``claims.PairedComparison.of``); both failed: left out."""
    rows = _signed(frame, dataset, metric)
    return PairedComparison.of(f"{dataset} {label} {SHORT[metric]}", rows[better] - rows[worse])


def _gap_closed(frame: pd.DataFrame, dataset: str, metric: str, method: str) -> PairedComparison:
    """Per split, ``method``'s epoch-wise ``metric`` minus the midpoint of SGHMC's (epoch-wise) and MILE's, signed:
    positive when ``method`` closes more than half of SGHMC's gap to MILE; failed runs as in :func:`_paired`."""
    rows = _signed(frame, dataset, metric)
    midpoint = (rows[("sghmc_sa", EPOCH)] + rows[("mile", FULL)]) / 2
    return PairedComparison.of(f"{dataset} {STOCHASTIC[method]} {SHORT[metric]}", rows[(method, EPOCH)] - midpoint)


def _paper_says(pairs) -> str:
    """How the paper's Table 2 means compare for ``pairs`` of ((better method, budget), (worse method, budget)):
    ``"LPPD: pSMILE-naive (batch-wise) better than SMILE-naive (batch-wise) in 3 of 3 of its pairs of cells
    (means); RMSE: ..."``."""
    parts = []
    for metric, index in (("lppd", 0), ("rmse", 2)):
        wins = total = 0
        for better, worse in pairs:
            for dataset in PAPER_DATASETS:
                total += 1
                difference = PAPER_TABLE2[better][dataset][index] - PAPER_TABLE2[worse][dataset][index]
                wins += SIGNS[metric] * difference > 0
        parts.append(f"{SHORT[metric]}: {' and '.join(sorted({_named(b) for b, _ in pairs}))} better than "
                     f"{' and '.join(sorted({_named(w) for _, w in pairs}))} in {wins} of {total} of its pairs of "
                     "cells (means)")
    return "; ".join(parts)


def _paper_gap_closed() -> str:
    """How often the paper's Table 2 has epoch-wise pSMILE-naive beyond the midpoint of epoch-wise SGHMC and MILE
    (more than half of the gap closed), its means, per metric."""
    parts = []
    for metric, index in (("lppd", 0), ("rmse", 2)):
        closed = sum(SIGNS[metric] * (PAPER_TABLE2[("psmile_naive", EPOCH)][d][index]
                                      - (PAPER_TABLE2[("sghmc_sa", EPOCH)][d][index]
                                         + PAPER_TABLE2[("mile", FULL)][d][index]) / 2) > 0 for d in PAPER_DATASETS)
        parts.append(f"{SHORT[metric]}: pSMILE-naive (epoch-wise) closes more than half of SGHMC's (epoch-wise) gap "
                     f"to MILE in {closed} of {len(PAPER_DATASETS)} data sets (means)")
    return "; ".join(parts)


def _named(run: tuple) -> str:
    """``"pSMILE-naive (epoch-wise)"``: a (method, budget) of the table in words."""
    method, budget = run
    return METHODS[method] if budget == FULL else f"{METHODS[method]} ({budget})"


def claims(frame: pd.DataFrame) -> tuple[Claim, ...]:
    """The paper's claims about Table 2 (section 3.3 and appendix E.1), in its order, tested on every data set run
    by paired t-tests over the splits (``claims.PairedComparison``; ``claims.ordering``: Bonferroni over the
    settings, family false-contradiction rate 5 %). The comparisons are general claims about the samplers; the
    cells of the paper's own data sets are compared in the table when a user runs them.

    Args:
        frame: :func:`compute`'s rows.

    Returns:
        the claims.
    """
    datasets = list(dict.fromkeys(frame["data set"]))
    general = f"tested on each data set run here ({', '.join(datasets)}), at the same splits and starts"
    batch = [((m, BATCH), ("sghmc_sa", BATCH)) for m in ("smile_naive", "psmile_naive")]
    table = summary(frame)
    evaluations = {(m, b): table[(table["method"] == m) & (table["budget"] == b)]["gradient evaluations"].mean()
                   for m, b in ((m, BATCH) for m in STOCHASTIC)}
    evaluations[("mile", FULL)] = table[table["method"] == "mile"]["gradient evaluations"].mean()
    return (
        ordering("... both SMILE-naive and pSMILE-naive consistently, and notably outperform the SGHMC baseline in "
                 "both log pointwise predictive density (LPPD) ... and root mean squared error (RMSE)",
                 f"{BENEFIT}, second sentence (Table 2, batch-wise rows)",
                 [_paired(frame, d, metric, better, worse, f"{STOCHASTIC[better[0]]} vs SGHMC")
                  for d in datasets for better, worse in batch for metric in CLAIMED],
                 "SGHMC", "the naive variant", paper=_paper_says(batch),
                 reason=f"batch-wise, each naive variant against scale-adapted SGHMC in LPPD and RMSE; {general}; "
                        "\"notably\" is not quantified: held needs each difference beyond the noise"),
        ordering("Critically, pSMILE-naive markedly improves upon SMILE-naive",
                 f"{BENEFIT}, third sentence (Table 2, batch-wise rows)",
                 [_paired(frame, d, metric, ("psmile_naive", BATCH), ("smile_naive", BATCH),
                          "pSMILE-naive vs SMILE-naive") for d in datasets for metric in CLAIMED],
                 "SMILE-naive", "pSMILE-naive",
                 paper=_paper_says([(("psmile_naive", BATCH), ("smile_naive", BATCH))]),
                 reason=f"batch-wise, LPPD and RMSE; {general}; \"markedly\" is not quantified"),
        not_testable("This provides all stochastic samplers with the same number of total gradient computations as "
                     "the MILE baseline", f"{BENEFIT}, first and second sentences",
                     "a statement of the paper's protocol (one sample per minibatch step, MILE's number of steps), "
                     "not a result; this reproduction gives every stochastic chain MILE's steps as the paper does, "
                     "and the table counts what a step costs here: gradient evaluations per chain "
                     + ", ".join(f"{METHODS[m]} {v:.0f}" for (m, _), v in evaluations.items() if math.isfinite(v))
                     + " (the minimal-norm microcanonical step evaluates 3 minibatch gradients, MILE's 2 full-batch "
                       "ones, SGHMC's 1)"),
        ordering("Under this condition, pSMILE-naive closes the remaining performance gap entirely, matching the "
                 "performance of the full-batch MILE", f"{GAP}, third sentence (Table 2, epoch-wise rows)",
                 [_paired(frame, d, metric, ("psmile_naive", EPOCH), ("mile", FULL), "pSMILE-naive vs MILE")
                  for d in datasets for metric in CLAIMED], "MILE", "pSMILE-naive (epoch-wise)",
                 paper=_paper_says([(("psmile_naive", EPOCH), ("mile", FULL))]),
                 reason=f"epoch-wise pSMILE-naive against MILE in LPPD and RMSE; {general}; contradicted where MILE "
                        "is better beyond the noise; \"matching\" has no margin in the paper, so a difference "
                        "inside the noise is within noise, and held needs pSMILE-naive better beyond it"),
        ordering("... it demonstrates that with proper preconditioning, stochastic microcanonical dynamics can "
                 "achieve state-of-the-art sampling performance, effectively mitigating the performance gap often "
                 "observed between stochastic and full-batch MCMC", f"{GAP}, fourth sentence",
                 [_gap_closed(frame, d, metric, "psmile_naive") for d in datasets for metric in CLAIMED],
                 "the midpoint of SGHMC and MILE", "pSMILE-naive (epoch-wise)",
                 paper=_paper_gap_closed(),
                 reason="\"mitigating the gap\" read as closing more than half of the gap between the stochastic "
                        "baseline (scale-adapted SGHMC, epoch-wise) and MILE: per split, pSMILE-naive's metric "
                        f"against the midpoint of SGHMC's and MILE's, LPPD and RMSE; {general}"),
        not_testable("For all SGMCMC variants, we fix the step size of 0.001, which was individually verified to "
                     "work best in terms of performance by a grid over both smaller and larger step sizes",
                     "appendix E.1, third paragraph, first sentence",
                     "the paper gives neither the grid nor the data sets it was searched on; this reproduction runs "
                     "the paper's step size 0.001 and no grid"),
        not_testable("For SMILE-naive, we even explored decaying step size schedulers, which did not improve the "
                     "performance significantly", "appendix E.1, third paragraph, second sentence",
                     "the paper names no schedule; none is run here"),
        not_testable("One should note that the performance of these naive methods is rather sensitive to their "
                     "hyperparameters", f"{SECTION}, paragraph after \"Closing the gap\", first sentence",
                     "a statement about the batch- and step-size ablation of Figure 5 (bikesharing, not shipped), "
                     "which this reproduction does not run"),
    )


def _pm(mean: float, sd: float) -> str:
    """``"mean ± sd"`` with 3 decimals, or empty when the mean is not finite."""
    return f"{mean:.3f} ± {sd:.3f}" if math.isfinite(mean) else ""


def display(table: pd.DataFrame) -> pd.DataFrame:
    """The summary as printed: one row per (data set, budget, method), LPPD, RMSE and calibration error as mean ±
    sd over splits, the paper's Table 2 cell and a verdict where the data set is the paper's (means compared with
    their standard errors, ``outcome.verdict``), and the per-chain cost."""
    rows = []
    for _, row in table.iterrows():
        shown = {"data set": row["data set"], "budget": row["budget"], "method": METHODS[row["method"]]}
        paper = PAPER_TABLE2.get((row["method"], row["budget"]), {}).get(row["data set"])
        for metric, index in (("lppd", 0), ("rmse", 2)):
            shown[METRICS[metric]] = _pm(row[metric], row[f"{metric}_sd"])
            shown[f"paper {SHORT[metric]}"] = _pm(*paper[index:index + 2]) if paper else ""
            se = row[f"{metric}_sd"] / math.sqrt(row["splits"]) if row["splits"] > 1 else math.nan
            shown[f"{SHORT[metric]} verdict"] = (
                verdict(row[metric], se, paper[index], paper[index + 1] / math.sqrt(3)) if paper
                else NO_PAPER_VALUE if math.isfinite(row[metric]) else NO_RESULT)
        shown[METRICS["calibration"]] = _pm(row["calibration"], row["calibration_sd"])
        shown["NaN chains"] = "" if row["method"] == "de" else f"{row['nan chains']} of {NUM_CHAINS * row['splits']}"
        for column in ("steps", "gradient evaluations", "passes"):
            shown[f"{column} per chain"] = "" if not math.isfinite(row[column]) else f"{row[column]:.0f}"
        shown["final step (median)"] = "" if not math.isfinite(row["final step size"]) else \
            f"{row['final step size']:.2g}"
        shown["s per split"] = round(row["seconds"], 1)
        rows.append(shown)
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame) -> bytes:
    """PNG: LPPD and RMSE per data set, a bar per (budget, method) with ± one sd over splits."""
    datasets = list(dict.fromkeys(table["data set"]))
    fig, axes = subplots(len(CLAIMED), len(datasets), figsize=(5 * len(datasets), 5.5), squeeze=False)
    for column, dataset in enumerate(datasets):
        rows = table[table["data set"] == dataset]
        labels = [f"{METHODS[m]}, {b}" if b != FULL else METHODS[m] for m, b in zip(rows["method"], rows["budget"])]
        colours = [f"C{list(METHODS).index(m)}" for m in rows["method"]]
        for line, metric in enumerate(CLAIMED):
            ax = axes[line][column]
            ax.barh(np.arange(len(rows)), rows[metric], xerr=rows[f"{metric}_sd"], color=colours)
            ax.set_yticks(np.arange(len(rows)), labels if column == 0 else [""] * len(rows), fontsize=7)
            ax.invert_yaxis()
            ax.set_title(f"{dataset}: {METRICS[metric]}", fontsize=9)
    fig.tight_layout()
    return png_bytes(fig, dpi=90, tight=True)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce smile-table2``: :func:`compute` at ``scale`` (``--splits``, ``--data``, ``--seed``,
    ``--jobs`` and the executor options override it), each finished unit kept in ``smile_table2_runs.jsonl``
    beside the results store ``db``."""
    from sgbench.base.arguments import integer_at_least
    from sgbench.bench.reproduce._record import record_path

    splits = integer_at_least("--splits", options.get("splits", SCALES[scale]["splits"]), 1, 100)
    data = parse_data(options.get("data"))
    seed = seed_of(options)
    jobs = jobs_of(options)
    phases, sampling = SCALES[scale]["phases"], SCALES[scale]["sampling"]
    record = record_path(db, NAME)
    with executor_context(options, jobs) as client:
        frame, seconds = timed(compute, data, splits, phases, sampling, seed, record, jobs, client, progress)
    table = summary(frame)
    paper_sets = [name for name in data if name in PAPER_DATASETS]
    return Outcome(
        name=NAME, title="SMILE paper, Table 2: stochastic microcanonical samplers against SGHMC and MILE on "
                         "regression BNNs",
        table=display(table), claims=claims(frame),
        intro=(f"{', '.join(f'{n} ({p})' if p else n for n, p in data.items())}; {splits} data splits; "
               f"{NUM_CHAINS} chains from the deep ensemble; MILE's tuning {phases} + {sampling} sampling steps "
               f"kept every {THIN} (paper: (40000, 5000, 5000) + 10000); the stochastic samplers at step {STEP_SIZE} "
               f"with minibatches of {BATCH_SIZE}, batch-wise MILE's steps, epoch-wise as many epochs; seed {seed}; "
               f"{seconds:.0f} s here. Metrics in standardised label units, mean ± sd over splits as in the paper; "
               f"finished units are kept in {record}."),
        sections=(("Hold-out metrics", figure(table)),
                  ("Per split", frame.drop(columns="commit").round(4)),
                  ("Differences from the paper",
                   "The paper's data sets (airfoil, bikesharing, energy) cannot be downloaded here: diabetes and "
                   "Friedman #1 stand in unless --data names a file, so "
                   + ("the cells of " + ", ".join(paper_sets) + " have paper values and the others none"
                      if paper_sets else "no cell has a paper value")
                   + "; the claims compare the samplers, which is general. Minibatches are drawn with "
                     "replacement, so an epoch is ceil(N/256) minibatch steps rather than a shuffled pass. The "
                     "likelihood is the suite's distributional Gaussian (MILE's regression model). SMILE and "
                     "pSMILE (Algorithm 1) and the deep ensemble's own predictive are ours, beyond the table.")),
    )


REPRODUCTION = register(Reproduction(
    name=NAME,
    summary="SMILE Table 2: SGHMC, SMILE-naive, pSMILE-naive (and SMILE, pSMILE) against MILE on a 3-hidden-layer "
            "regression BNN, batch-wise and epoch-wise budgets",
    source="SMILE paper, section 3.3 and appendix E.1",
    scales={"quick": "10 chains, MILE's tuning (2000, 250, 250) + 500 sampling steps (a twentieth of the paper's), "
                     "the stochastic samplers at that many steps or epochs, 3 splits per data set",
            "paper": "10 chains, MILE's budget (40000, 5000, 5000) + 10000 steps, the stochastic samplers at that "
                     "many steps (batch-wise) or epochs (epoch-wise), 3 splits per data set"},
    run=run,
    options=(mile_uci.SPLITS_OPTION, DATA_OPTION, SEED_OPTION, JOBS_OPTION, *EXECUTOR_OPTIONS),
))
