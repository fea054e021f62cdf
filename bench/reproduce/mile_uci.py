r"""The UCI regression benchmark of the MILE paper (section 4.1.1, Tables 1, 3
and 10) at a reduced scale, on the regression data available here: hold-out LPPD, RMSE and calibration error of
the deep-ensemble baseline (DE), naive MCLMC and MILE.

The paper's six UCI data sets cannot be downloaded here. The substitutes are scikit-learn's diabetes data (442 x 10,
real) and Friedman's generated benchmark ``friedman1`` (1000 x 10, noise sd 1; ``sgbench.targets.datasets``); a user's
own UCI file runs with ``--dataset-file PATH`` (a ``.csv`` with a label column ``y``, or a ``.npz``). The model is
the paper's: ``targets.get("bnn", noise="none")``, a distributional ReLU network with two hidden layers of 16
(location and log-scale outputs), prior N(0, I), a 70/10/20 train/validation/test split per data split. DE is MILE's
deep ensemble (``sgbench.samplers.mile.initial_positions``: 12 members, early stopping on the validation split); MILE
and naive MCLMC (Robnik's tuning as published: initial step :math:`\sqrt d`) run one chain from each member; their
predictive is the mixture over the kept draws of all chains (naive MCLMC: of its finite chains).

Metrics (``sgbench.reference.metrics``, in standardised label units as in the paper): LPPD (MILE eq. 4), RMSE of the
predictive mean, and the calibration error of central credible intervals at 0.5, 0.75, 0.9, 0.95 (Definition 2);
each averaged over ``splits`` data splits with its standard error, as in Table 3. The paper's claims (:func:`claims`)
about MILE against the DE are general and tested on each of our data sets, by paired t-tests over the splits; those
about BDE (not run here), the paper's own data sets, wall time and Figure 7's coverage are not testable.

Kept on interruption: each finished (data set, split), in ``mile_uci_runs.jsonl`` beside the results store;
progress over the splits (``sgbench.bench.reproduce._record.Units``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.base import provenance
from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.reproduce._registry import (
    EXECUTOR_OPTIONS,
    JOBS_OPTION,
    SEED_OPTION,
    Option,
    Reproduction,
    executor_context,
    register,
    seed_of,
)
from sgbench.bench.reproduce.claims import Claim, PairedComparison, not_testable, ordering, somewhere
from sgbench.bench.reproduce.outcome import NO_PAPER_VALUE, NO_RESULT, Outcome, timed

DATASETS = ("diabetes", "friedman1")
METHODS = {"de": "DE", "naive": "naive MCLMC", "mile": "MILE", "truth": "true predictive"}
METRICS = {"lppd": "LPPD (↑)", "rmse": "RMSE (↓)", "calibration": "CalE (↓)"}
THIN = 10
NUM_CHAINS = 12  # the paper's DE members and chains (appendix A.2)
SPLITS_OPTION = Option("--splits", "data splits per data set (default: 3)")  # mile-uci's and mile-classification's
DATASET_FILE_OPTION = Option("--dataset-file", "a .csv (label column y) or .npz file to use instead of the bundled "
                                               "data: regression values for mile-uci, integer classes from 0 for "
                                               "mile-classification", type=str)
SCALES = {"quick": {"phases": (4000, 500, 500), "sampling": 2000, "splits": 3},
          "paper": {"phases": (40_000, 5000, 5000), "sampling": 10_000, "splits": 3}}
# Table 3 (LPPD, RMSE: mean ± standard error over 3 splits) and Table 10 (calibration error) of the paper, for
# reference: other data sets than ours.
PAPER_UCI = pd.DataFrame(
    [("Airfoil", "0.024 ± 0.024", "0.612 ± 0.011", "0.309 ± 0.005", "0.206 ± 0.018", "0.077 ± 0.012", "0.086 ± 0.018"),
     ("Bikesharing", "0.390 ± 0.010", "0.645 ± 0.10", "0.251 ± 0.004", "0.236 ± 0.004", "0.125 ± 0.005",
      "0.081 ± 0.002"),
     ("Concrete", "-0.072 ± 0.018", "0.336 ± 0.054", "0.304 ± 0.007", "0.250 ± 0.014", "0.066 ± 0.002",
      "0.068 ± 0.017"),
     ("Energy", "1.227 ± 0.037", "2.300 ± 0.066", "0.120 ± 0.022", "0.034 ± 0.007", "0.215 ± 0.015", "0.061 ± 0.014"),
     ("Protein", "-1.024 ± 0.029", "-0.750 ± 0.018", "0.742 ± 0.011", "0.702 ± 0.008", "0.054 ± 0.011",
      "0.057 ± 0.003"),
     ("Yacht", "1.623 ± 0.101", "2.859 ± 0.199", "0.081 ± 0.038", "0.033 ± 0.011", "0.253 ± 0.037", "0.133 ± 0.059")],
    columns=["data set", "LPPD DE", "LPPD MILE", "RMSE DE", "RMSE MILE", "CalE DE", "CalE MILE"])


def predictive_metrics(target, positions) -> dict:
    """Hold-out LPPD, RMSE and calibration error on ``target``'s test split of the mixture over ``positions``
    (samples, dim) of its network; NaN for each when no position is given."""
    from sgbench.reference.metrics import credible_interval_calibration_error, gaussian_lppd, rmse

    positions = np.asarray(positions)
    if positions.shape[0] == 0:
        return {name: math.nan for name in METRICS}
    features, labels = target.splits["test"]
    outputs = np.stack([np.asarray(target.predict(x, features)) for x in positions])
    means, scales = outputs[..., 0], np.exp(outputs[..., 1])
    return {"lppd": gaussian_lppd(labels, means, scales), "rmse": rmse(labels, means),
            "calibration": credible_interval_calibration_error(labels, means, scales)}


def true_predictive_metrics(target) -> dict:
    """:func:`predictive_metrics` of friedman1's true predictive :math:`N(f(x), 1)` (``sgbench.targets.datasets``) on
    ``target``'s test split, in its standardised label units: the best a model can do."""
    from sgbench.reference.metrics import credible_interval_calibration_error, gaussian_lppd, rmse
    from sgbench.targets.datasets import FRIEDMAN1, bundled, friedman1_mean

    features, _ = bundled("friedman1")
    _, labels = target.splits["test"]
    means = (friedman1_mean(features[target.split_indices["test"]]) - target.label_mean) / target.label_scale
    scales = np.full_like(means, FRIEDMAN1["noise"] / target.label_scale)
    return {"lppd": gaussian_lppd(labels, means[None], scales[None]), "rmse": rmse(labels, means[None]),
            "calibration": credible_interval_calibration_error(labels, means[None], scales[None])}


def one_split(dataset: str, split: int, phases, sampling: int, seed: int, path=None) -> list[dict]:
    """DE, naive MCLMC and MILE on data split ``split`` of ``dataset`` (``path``: the file of ``dataset="file"``):
    one row each with the metrics of :func:`predictive_metrics`, the chains that went non-finite (``nan chains``)
    and the wall ``seconds`` (the DE's fit; the samplers' runs on top of it); on friedman1 also the true
    predictive's row (:func:`true_predictive_metrics`)."""
    from sgbench import targets
    from sgbench.bench.running import run as running
    from sgbench.samplers import mile

    target = targets.get("bnn", noise="none", split_seed=split, dataset=dataset, **({"path": path} if path else {}))
    starts, de_seconds = timed(mile.initial_positions, target, NUM_CHAINS, seed)
    rows = [{"method": "de", **predictive_metrics(target, starts), "nan chains": 0, "seconds": de_seconds}]
    if dataset == "friedman1":
        rows.append({"method": "truth", **true_predictive_metrics(target), "nan chains": 0, "seconds": 0.0})
    common = dict(num_chains=NUM_CHAINS, num_steps=sampling, num_burnin=sum(phases), thin=THIN, keep_samples=True,
                  seed=seed, initial_position=starts)
    for method, name, params in (
            ("naive", "mclmc", dict(tuning_steps=tuple(phases), step_size=math.sqrt(target.dim))),
            ("mile", "mile", dict(tuning_steps=tuple(phases), sampling_steps=sampling, thin=THIN))):
        result, seconds = timed(running.run, name, target, params=params, **common)
        failed = np.asarray(result.trace.nonfinite_steps) > 0
        kept = np.asarray(result.samples)[~failed].reshape(-1, target.dim)
        rows.append({"method": method, **predictive_metrics(target, kept), "nan chains": int(failed.sum()),
                     "seconds": seconds})

    return [{"data set": dataset, "split": split, **row, "commit": provenance.git_commit()} for row in rows]


def compute(phases, sampling: int, splits: int, seed: int = 0, datasets=DATASETS, path=None,
            progress=False, record=None, name: str = "mile-uci", split_rows=None, jobs: int = 1,
            client=None) -> pd.DataFrame:
    """``split_rows`` (default :func:`one_split`) for every data set and split: one row per (data set, split,
    method). With ``record`` (a ``sgbench.bench.reproduce._record`` file) each finished split is kept there and
    reused by a rerun of the same settings; ``progress``: progress over the splits on stderr
    (``sgbench.bench.reproduce._record.Units``, its lines named ``name``). The splits are computed here one after
    another, in ``jobs`` processes or as Dask tasks (``sgbench.bench.reproduce.computed_units``).

    Args:
        phases: MILE's three tuning phases (steps).
        sampling: the sampling steps per chain.
        splits: data splits per data set.
        seed: the deep ensemble's and the chains' seed.
        datasets: the data sets (``"file"``: the one at ``path``).
        path: the file of ``dataset="file"``, or None.
        progress: progress lines on stderr.
        record: the record file, or None (nothing kept).
        name: the reproduction's name, in the progress lines.
        split_rows: ``split_rows(dataset, split, phases, sampling, seed, path)`` gives one split's rows
            (mile-classification's ``one_split``); None: this module's :func:`one_split`.
        jobs: splits computed at once in spawned processes.
        client: a ``distributed.Client``: each split a Dask task instead.

    Returns:
        the rows of every (data set, split).
    """
    from sgbench.bench.reproduce.computed_units import Unit, computed

    split_rows = one_split if split_rows is None else split_rows
    settings = {"phases": list(phases), "sampling": sampling, "seed": seed, "path": path}
    units = [Unit((d, s), settings, (d, s, tuple(phases), sampling, seed, path)) for d in datasets
             for s in range(splits)]
    results = computed(name, record, units, split_rows, "split", jobs, client, progress)
    return pd.DataFrame([row for rows in results for row in rows])


def summary(frame: pd.DataFrame, metrics=tuple(METRICS)) -> pd.DataFrame:
    """Per (data set, method): each of ``metrics`` (columns of ``frame``) as its mean over splits and its standard
    error (sd / sqrt(splits)), the non-finite chains of all splits and the mean seconds per split."""
    groups = frame.groupby(["data set", "method"], sort=False)
    out = groups[list(metrics)].mean()
    for name in metrics:
        out[f"{name}_se"] = groups[name].std(ddof=1) / np.sqrt(groups[name].count())
    out["nan chains"] = groups["nan chains"].sum()
    out["splits"] = groups["split"].count()
    out["seconds"] = groups["seconds"].mean()
    return out.reset_index()


SIGNS = {"lppd": 1, "rmse": -1, "calibration": -1}  # +1: higher is better, -1: lower is
SHORT = {"lppd": "LPPD", "rmse": "RMSE", "calibration": "CalE"}
GAIN = ("the DE", "MILE's gain")  # the labels of a setting's paired differences: MILE's advantage over the DE
SECTION = "section 4.1.1, \"Performance results\""
TABLE10_TEXT = "appendix A.4, the paragraph after Definition 2 (Table 10's text)"


def gains(frame: pd.DataFrame, metric: str, dataset: str, better: str = "mile", worse: str = "de",
          signs=SIGNS, short=SHORT) -> PairedComparison:
    """Method ``better`` (MILE) against ``worse`` (the DE) on ``dataset``: per split, ``better``'s ``metric`` minus
    ``worse``'s, signed so that a positive difference is ``better``'s advantage (``signs[metric]``: +1 where higher
    is better); the splits pair the two (the same data, MILE started from that split's ensemble). The setting is
    named ``"DATASET METRIC"`` (``short[metric]``)."""
    rows = frame[frame["data set"] == dataset].pivot(index="split", columns="method", values=metric)
    return PairedComparison.of(f"{dataset} {short[metric]}", signs[metric] * (rows[better] - rows[worse]))


def paper_wins(metric: str) -> str:
    """``"RMSE: MILE better than the DE on 6 of the 6 data sets (their means)"``: how often the paper's Tables 3 and
    10 have MILE's ``metric`` better than the DE's."""
    means = {method: PAPER_UCI[f"{SHORT[metric]} {method}"].str.split(" ± ").str[0].astype(float)
             for method in ("DE", "MILE")}
    wins = int((SIGNS[metric] * (means["MILE"] - means["DE"]) > 0).sum())
    return f"{SHORT[metric]}: MILE better than the DE on {wins} of the {len(PAPER_UCI)} data sets (their means)"


def claims(frame: pd.DataFrame, steps: int) -> tuple[Claim, ...]:
    """The paper's claims about the UCI benchmark (Tables 1, 3 and 10 and their text), in the paper's order. MILE
    against the deep ensemble is a general claim, tested on each of our data sets by paired t-tests over the splits
    (``sgbench.bench.reproduce.claims.PairedComparison``); the claims about BDE (not run here), about the paper's
    own data sets (not shipped), about wall time and about Figure 7's coverage are not testable, each with its
    reason.

    Args:
        frame: :func:`compute`'s rows (data set, split, method, metrics).
        steps: the MCLMC steps per chain run (tuning and sampling), for the reason of the runtime claim.

    Returns:
        the claims.
    """
    datasets = list(dict.fromkeys(frame["data set"]))
    paper_steps = sum(SCALES["paper"]["phases"]) + SCALES["paper"]["sampling"]
    general = (f"MILE against the DE is a general claim, tested on each data set run here ({', '.join(datasets)}), "
               "not the paper's (not shipped)")
    no_bde = "BDE (NUTS chains started from the deep ensemble) is not run by this reproduction"
    steps_run = "" if steps == paper_steps else f", and this scale runs {steps} of the paper's {paper_steps} steps"
    return (
        ordering("MILE consistently matches or outperforms the other methods in predictive performance ...",
                 f"{SECTION}, first sentence", [gains(frame, "rmse", d) for d in datasets], *GAIN,
                 paper=paper_wins("rmse"),
                 reason=f"predictive performance as the RMSE (section 4.1); {general}; a match inside the "
                        "noise is not held"),
        ordering("MILE consistently matches or outperforms the other methods in ... UQ",
                 f"{SECTION}, first sentence", [gains(frame, "lppd", d) for d in datasets], *GAIN,
                 paper=paper_wins("lppd"),
                 reason=f"UQ as the LPPD (section 4.1); {general}; a match inside the noise is not held"),
        not_testable("MILE consistently matches or outperforms the other methods", f"{SECTION}, first sentence",
                     f"the other methods include BDE, and {no_bde}; MILE against the DE is tested in the two claims "
                     "above"),
        not_testable("... while significantly reducing the computational cost. This is especially evident in larger "
                     "datasets like bikesharing (B) and protein (P), where MILE achieves sampling speeds nearly ten "
                     "times faster than BDE", f"{SECTION}, first and second sentences",
                     f"the cost is compared with BDE's: {no_bde}; bikesharing and protein are not shipped with the "
                     "suite"),
        not_testable("In most cases, the additional MCLMC sampling after DE optimization is as fast as the DE "
                     "fitting phase itself ... yielding a time complexity comparable to DE (≈ 2× runtime)",
                     f"{SECTION}, third and fourth sentences",
                     "the paper gives no tolerance for \"as fast as\" and \"comparable\", and the wall times in the "
                     "record (the table's s per split) include JAX's compilation and were measured on 2 cores shared "
                     f"with other jobs{steps_run}"),
        ordering("... while providing better and more principled uncertainty measures",
                 f"{SECTION}, fourth sentence",
                 [gains(frame, metric, d) for d in datasets for metric in ("lppd", "calibration")], *GAIN,
                 paper=f"{paper_wins('lppd')}; {paper_wins('calibration')}",
                 reason="the uncertainty measures of this benchmark, LPPD (Table 3) and calibration error "
                        f"(Table 10), at every data set; \"more principled\" is not a measured quantity; "
                        f"{general}"),
        not_testable("Table 10 and Fig. 7 show that MILE achieves calibration quality comparable to the one of BDE, "
                     "confirming its effectiveness in uncertainty quantification",
                     "appendix A.1.1, \"Calibration\", second sentence", no_bde),
        not_testable("For most cases, we observe that the calibration error of MILE is on the same level as BDE",
                     f"{TABLE10_TEXT}, second sentence", no_bde),
        somewhere("... and both methods often outperform the simple DE", f"{TABLE10_TEXT}, second sentence",
                  [gains(frame, "calibration", d) for d in datasets], *GAIN, paper=paper_wins("calibration"),
                  reason=f"MILE's calibration error below the DE's at some data set (\"often\"); {general}; "
                         "BDE, the other of \"both methods\", is not run"),
        not_testable("The plots show a high variation in coverage quality of DE-based confidence intervals by "
                     "exhibiting both strong structural under- and overconfidence, whereas the sampling-based "
                     "methods are generally better calibrated", f"{TABLE10_TEXT}, fifth sentence (Figure 7)",
                     "this reproduction computes the calibration error of Definition 2 (tested above), not the "
                     "coverage at each nominal level that Figure 7 plots"),
        not_testable("for bikesharing, DE is more underconfident, while for protein, it is overconfident in contrast "
                     "to the sampling-based alternatives", f"{TABLE10_TEXT}, sixth sentence (Figure 7)",
                     "bikesharing and protein are not shipped with the suite, and the coverage at each nominal level "
                     "is not computed here"),
        not_testable("A visual inspection reveals that both BDE and MILE tend to be slightly underconfident",
                     f"{TABLE10_TEXT}, seventh sentence (Figure 7)",
                     f"the coverage at each nominal level is not computed here, {no_bde}, and \"slightly\" is not "
                     "quantified"),
        not_testable("Average hold-out and standard error of LPPD and RMSE performance ... for the six datasets used "
                     "in Sommer et al. (2024) over 3 data splits", "Tables 3 and 10, their cells",
                     f"every cell is a value on one of the paper's data sets ({', '.join(PAPER_UCI['data set'])}), "
                     "none of which is shipped with the suite or can be downloaded here: no cell of ours has a paper "
                     "value (the paper's tables are on the page, for reference)"),
    )


def display(table: pd.DataFrame) -> pd.DataFrame:
    """The summary as printed: one row per (data set, method), each metric as mean ± se, beside the paper's
    verdict column (no paper value: the paper's data sets are others)."""
    shown = pd.DataFrame({"data set": table["data set"], "method": [METHODS[m] for m in table["method"]]})
    for name, label in METRICS.items():
        shown[label] = [f"{v:.3f} ± {se:.3f}" if math.isfinite(v) else "" for v, se in
                        zip(table[name], table[f"{name}_se"])]
    shown["verdict"] = [NO_PAPER_VALUE if math.isfinite(v) else NO_RESULT for v in table["lppd"]]
    shown["NaN chains"] = [f"{n} of {NUM_CHAINS * s}" if m in ("naive", "mile") else ""
                           for n, s, m in zip(table["nan chains"], table["splits"], table["method"])]
    shown["s per split"] = table["seconds"].round(1)
    return shown


def figure(table: pd.DataFrame) -> bytes:
    """PNG: one panel per metric, grouped bars (data set x method) with 2-standard-error bars."""
    datasets = list(dict.fromkeys(table["data set"]))
    fig, axes = subplots(1, len(METRICS), figsize=(4 * len(METRICS), 3))
    methods = [m for m in METHODS if m in set(table["method"])]
    width = 0.8 / len(methods)
    for ax, (name, label) in zip(axes, METRICS.items()):
        for k, method in enumerate(methods):
            rows = table[table["method"] == method].set_index("data set").reindex(datasets)
            offset = (k - (len(methods) - 1) / 2) * width
            ax.bar(np.arange(len(datasets)) + offset, rows[name], width, yerr=2 * rows[f"{name}_se"], color=f"C{k}",
                   label=METHODS[method])
        ax.set_xticks(np.arange(len(datasets)), datasets)
        ax.set_title(label)
    axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return png_bytes(fig, dpi=90, tight=True)


def run(scale: str, options: dict, db, out, progress: bool) -> Outcome:
    """``sgbench reproduce mile-uci``: :func:`compute` at ``scale`` (``--splits``, ``--dataset-file`` and ``--seed``
    override it), each finished split kept in ``mile_uci_runs.jsonl`` beside the results store ``db``."""
    from sgbench.base.arguments import integer_at_least

    splits = integer_at_least("--splits", options.get("splits", SCALES[scale]["splits"]), 1, 100)
    path = options.get("dataset_file")
    if path is not None:
        from sgbench import targets

        targets.get("bnn", noise="none", dataset="file", path=path)  # a bad file is refused before any run
    datasets = ("file",) if path else DATASETS
    seed = seed_of(options)
    phases, sampling = SCALES[scale]["phases"], SCALES[scale]["sampling"]
    from sgbench.bench.reproduce._record import record_path

    record = record_path(db, "mile-uci")
    jobs = integer_at_least("--jobs", options.get("jobs", 1), 1, 64)
    with executor_context(options, jobs) as client:
        frame, seconds = timed(compute, phases, sampling, splits, seed, datasets, path, progress, record,
                               jobs=jobs, client=client)
    table = summary(frame)
    return Outcome(
        name="mile-uci", title="MILE paper, UCI benchmark (Tables 3 and 10) on the regression data available here",
        table=display(table), claims=claims(frame, sum(phases) + sampling),
        intro=(f"{', '.join(datasets if not path else [path])}; {splits} data splits; {NUM_CHAINS} DE members and "
               f"chains, tuning phases {phases} and {sampling} sampling steps kept every {THIN} (paper: 12, "
               f"(40000, 5000, 5000) + 10000, every 10), seed {seed}; {seconds:.0f} s. Metrics in standardised "
               f"label units, mean ± standard error over splits; finished splits are kept in {record}. On "
               "friedman1 the true predictive N(f(x), 1) bounds what a model can reach."),
        sections=(("Hold-out metrics", figure(table)),
                  ("Per split", frame.drop(columns="commit").round(4)),
                  ("The paper's Tables 3 and 10 (its data sets, for reference)", PAPER_UCI),
                  ("Differences from the paper",
                   "The paper's UCI data sets (Airfoil, Bikesharing, Concrete, Energy, Protein, Yacht) cannot be "
                   "downloaded here: scikit-learn's diabetes data and the generated Friedman #1 benchmark stand in, "
                   "so no cell has a paper value; the claims tested are the paper's comparisons of MILE with the "
                   "DE, which are general. BDE (NUTS chains from the ensemble) is not run, so the claims about it "
                   "are not testable. Naive MCLMC and, on friedman1, the true predictive are ours, not the paper's. "
                   "Run a downloaded UCI file with --dataset-file.")),
    )


REPRODUCTION = register(Reproduction(
    name="mile-uci",
    summary="MILE Tables 3 and 10: hold-out LPPD, RMSE and calibration error of DE, naive MCLMC and MILE on "
            "regression BNNs (diabetes and Friedman #1 for the UCI data)",
    source="MILE paper, section 4.1.1 and appendix A.1",
    scales={"quick": "12 chains, tuning (4000, 500, 500) + 2000 sampling steps, 3 splits per data set",
            "paper": "12 chains, the paper's budget (40000, 5000, 5000) + 10000 steps, 3 splits per data set"},
    run=run,
    options=(SPLITS_OPTION, DATASET_FILE_OPTION, SEED_OPTION, JOBS_OPTION, *EXECUTOR_OPTIONS),
))
