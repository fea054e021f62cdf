r"""Tables 1, 2 and 3 of the MAMBA paper (sections 4.1 and 4.3, appendices C.1
and C.3), each one :class:`Table`:

- ``mamba-table1``: the simulated 10-d logistic regression with prior :math:`\mathcal N(0, 10 I)`; the KSD and
  the relative error of the posterior standard deviations :math:`\xi(\sigma) = \lVert s - s_{NUTS}\rVert /
  \lVert s_{NUTS}\rVert` against the stored NUTS reference of the same data set (``reference/data``); methods
  MAMBA-KSD, MAMBA-FSSD, grid search, heuristic.
- ``mamba-table2``: probabilistic matrix factorisation (``sgbench.targets.pmf``) of generated MovieLens-like ratings at
  reduced scale (``PMF_SCALE``); KSD, and :math:`\xi(\sigma)` of the predicted ratings of 50 test pairs against the
  stored NUTS reference, which keeps those predictions (``ProbabilisticMatrixFactorisation.reference_quantities``);
  the test RMSE (the paper's Table 7) per run; methods MAMBA-KSD, grid search, heuristic.
- ``mamba-table3``: a Bayesian neural network classifier; the expected and maximum calibration errors (ECE,
  MCE, in %) of the Bayesian-model-average predictive on the test split; methods MAMBA-KSD, grid search,
  heuristic. MNIST cannot be downloaded here: scikit-learn's digits (8 x 8 images, 1797, 70 % for training).

For each sampler, method and run r = 0..runs-1 (seed r): tune with the budget (``sgbench.bench.tune.mamba``), then run
the chosen hyperparameters for ``final_budget`` gradient evaluations (the paper runs each for a fixed time) and
score those draws (thinned to at most 1000). The summary gives the mean and standard deviation over the runs
beside the paper's numbers and the hyperparameters chosen; the paper's claims about each table are tested on the
runs by ``sgbench.bench.reproduce.mamba_claims``. Each table's differences from the paper are in its
``differences`` and on its page.

Kept on interruption: each finished cell, in ``mamba_tableN_runs.jsonl`` beside the results store; progress: a line per
cell and ``progress_bar`` over the cells. Under ``sgbench.bench.reproduce._record.recorded_only`` a cell missing from
the record raises ``NotRecorded`` and nothing is built or computed (the docs' tables are rendered so).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.special
from markupsafe import Markup, escape

from sgbench import targets
from sgbench.base import provenance
from sgbench.base.arguments import integer_at_least
from sgbench.base.figures import png_bytes, subplots
from sgbench.base.unit_record import write_line
from sgbench.bench.reproduce import _record, mamba_claims
from sgbench.bench.reproduce._record import record_path
from sgbench.bench.reproduce._registry import (
    EXECUTOR_OPTIONS,
    JOBS_OPTION,
    Option,
    Reproduction,
    executor_context,
    jobs_of,
    register,
)
from sgbench.bench.running.compilation_cache import enable_compilation_cache
from sgbench.bench.running.progress_lines import progress_bar
from sgbench.bench.tune import mamba as tuner
from sgbench.bench.tune.budget import Budget
from sgbench.bench.tune.rewards import discrepancy
from sgbench.reference import store as reference_store
from sgbench.reference.build import kept_quantities
from sgbench.reference.metrics.classification import accuracy, ece, mce
from sgbench.reference.metrics.std_error import std_relative_error
from sgbench.samplers import control_variates, get as get_sampler
from sgbench.samplers.control_variates import find_map

SAMPLERS = ("sgld", "sgld_cv", "sghmc", "sghmc_cv", "sgnht", "sgnht_cv")
SAMPLER_PARAMS = {"sgld": {"convention": "welling_teh"}, "sgld_cv": {"convention": "welling_teh"}}
DEFAULT_BUDGET = 10_000
# The batch fractions of the paper's PMF and BNN grids (appendix C.2.3, C.3.3); its logistic-regression grid adds
# 0.1 %, which at N = 10^4 is a minibatch of 10, whose steps cost more in overhead than in gradients.
AXES = {"batch_fraction": (1.0, 0.1, 0.01)}
COMMON_DIFFERENCES = (
    "Budgets in full-data gradient evaluations, not seconds (reproducible): 10,000 for tuning and 10,000 for the "
    "final run by default.",
    "Our grid (sgbench.bench.tune.arms.default_axes): 11 step sizes in half decades around 1/N, "
    "friction 0.01 and 0.1 for "
    "SGHMC (which has no leapfrog count L here), batch fractions 1, 10 % and 1 %.",
    "SGLD and SGLD-CV in the paper's eq. (1) convention (welling_teh); SGHMC and SGNHT in their MAMBA forms "
    "(appendix D; friction 0.01, diffusion 0.01).",
    "Grid search spends the same budget on every arm of the same grid and ranks by KSD (not by a test-set loss at "
    "a fixed 10 % batch).",
)


@dataclasses.dataclass(frozen=True)
class Table:
    """One of the paper's tables: its target, methods, the paper's values and how a final run is scored.

    Attributes:
        name: the ``sgbench reproduce`` name.
        title: the page's title.
        target: the target's name; ``target_params(num_data)`` its parameters.
        methods: the methods of the paper's table.
        columns: (key, label) of the scores, in the order of ``paper``'s tuples.
        paper: method -> sampler -> the paper's values of ``columns``.
        differences: what differs from the paper, in sentences.
        start_at_map: the chains start at the MAP (else at the target's ``initial_position``).
        score: ``score(target, draws, reference) -> dict`` of the ``columns`` keys and the ``extras`` keys.
        reference: ``reference(target) -> object`` handed to ``score`` (the NUTS draws, or None).
        extras: (key, label) of further scores shown in the table, for which the paper's table has no value.
    """

    name: str
    title: str
    target: str
    target_params: Callable[[int | None], dict]
    methods: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]
    paper: dict
    differences: tuple[str, ...]
    start_at_map: bool
    score: Callable
    reference: Callable
    extras: tuple[tuple[str, str], ...] = ()


def _ksd_and_xi(target, draws, nuts) -> dict:
    """KSD, and xi(sigma) x 100 of what the NUTS reference keeps (``sgbench.reference.build.kept_quantities``)."""
    finite = np.all(np.isfinite(draws))
    xi = 100 * std_relative_error(kept_quantities(target, draws), nuts) if finite else np.inf
    return {"ksd": discrepancy("ksd", draws, target), "xi_x100": xi}


def _ksd_xi_and_rmse(target, draws, nuts) -> dict:
    """:func:`_ksd_and_xi` and the test RMSE of the posterior-mean predictions (the paper's Table 7)."""
    rmse = target.test_rmse(draws) if np.all(np.isfinite(draws)) else np.inf
    return {**_ksd_and_xi(target, draws, nuts), "rmse": rmse}


def _calibration(target, draws, _) -> dict:
    """ECE, MCE (%) and accuracy (%) of the Bayesian-model-average predictive on the test split."""
    flat = np.asarray(draws, dtype=np.float64).reshape(-1, target.dim)
    if not np.all(np.isfinite(flat)):
        return {"ece_pct": np.inf, "mce_pct": np.inf, "accuracy_pct": np.nan, "ksd": np.inf}
    features, labels = target.splits["test"]
    log_probs = scipy.special.log_softmax(np.stack([np.asarray(target.predict(x, features)) for x in flat]), axis=-1)
    return {"ece_pct": 100 * ece(labels, log_probs=log_probs), "mce_pct": 100 * mce(labels, log_probs=log_probs),
            "accuracy_pct": 100 * accuracy(labels, log_probs=log_probs), "ksd": discrepancy("ksd", draws, target)}


def _paper(methods, values) -> dict:
    return {method: dict(zip(SAMPLERS, rows)) for method, rows in zip(methods, values)}


TABLE1 = Table(
    name="mamba-table1", title="MAMBA paper, Table 1 (logistic regression), at reduced scale", target="logreg",
    target_params=lambda num_data: {"dataset": "simulated", "num_data": 10_000 if num_data is None else num_data},
    methods=("mamba-ksd", "mamba-fssd", "grid", "heuristic"),
    columns=(("ksd", "KSD"), ("xi_x100", "xi x 100")),
    paper=_paper(("mamba-ksd", "mamba-fssd", "grid", "heuristic"), (
        [(66, 28.3), (13, 5.2), (85, 107.7), (18, 8.4), (69, 55.7), (3, 0.8)],
        [(58, 68.5), (23, 5.9), (56, 82.5), (43, 26.3), (68, 102.5), (11, 2.0)],
        [(106, 12.0), (38, 12.4), (174, 34.5), (131, 31.2), (73, 15.0), (12, 10.5)],
        [(100, 12.1), (102, 27.5), (53972, 3000.3), (51565, 3084.0), (51, 71.4), (9, 20.4)])),
    differences=("N = 10^4 by default, not 10^6: NUTS references are stored for 10^4, 10^5 and 10^6 (--num-data "
                 "100000 or 1000000; the last took 2 hours 4.5 minutes to build on 2 cores, and its table days); for "
                 "another N, build one with sgbench reference build (7.4 minutes at 10^5 on 2 cores).",
                 *COMMON_DIFFERENCES),
    start_at_map=False,  # the target's initial position is its MAP already
    score=_ksd_and_xi,
    reference=lambda target: reference_store.load_draws(target),  # a missing one: an error naming the build
)

# The reduced scale of Table 2's generated ratings, the scale of its stored NUTS reference.
PMF_SCALE = dict(num_users=200, num_items=300, num_ratings=6000, latent_dim=5)

TABLE2 = Table(
    name="mamba-table2", title="MAMBA paper, Table 2 (probabilistic matrix factorisation), at reduced scale",
    target="pmf",
    target_params=lambda _: dict(PMF_SCALE),
    methods=("mamba-ksd", "grid", "heuristic"),
    columns=(("ksd", "KSD"), ("xi_x100", "xi x 100")),
    paper=_paper(("mamba-ksd", "grid", "heuristic"), (
        [(213, 69.2), (231, 72.1), (438, 79.9), (543, 83.7), (163, 40.8), (205, 38.5)],
        [(429, 119.2), (546, 133.0), (3180, 51.2), (4289, 55.6), (170, 44.2), (221, 46.8)],
        [(237, 71.7), (284, 75.0), (3942, 50.3), (4546, 53.2), (164, 40.6), (210, 38.7)])),
    differences=("MovieLens-100k cannot be downloaded here: ratings generated from the model itself "
                 "(sgbench.targets.datasets.matrix_factorisation_data, the paper's tau), "
                 "and at reduced scale: 200 users, "
                 "300 items, 6000 ratings (4800 for training), latent dimension 5 (2520 parameters), not 943 x 1682, "
                 "10^5 ratings and d = 20 (52,580), so that its NUTS reference builds under the posteriordb "
                 "contract on 2 cores (a MovieLens u.data file loads with --target-param dataset=file).",
                 "xi(sigma) on the predicted ratings of 50 test pairs, not on the parameters: the posterior is "
                 "unchanged by a sign flip or a permutation of the latent coordinates, so parameter-wise standard "
                 "deviations are not identified (NUTS chains started apart disagree on every U and V coordinate, "
                 "split R-hat 2.6) while the predictions are (R-hat < 1.01).",
                 "The samplers start from the MAP (L-BFGS from 50 sweeps of block coordinate ascent), without the "
                 "paper's N(0, 1) jitter; the search stops after 2000 steps at gradient max-norm 0.12 on a nearly "
                 "flat ridge (log density -3465.0, against -3491.7 at its start), with a warning.",
                 *COMMON_DIFFERENCES),
    start_at_map=True,
    score=_ksd_xi_and_rmse,
    reference=lambda target: reference_store.load_draws(target),
    extras=(("rmse", "test RMSE"),),
)

TABLE3 = Table(
    name="mamba-table3", title="MAMBA paper, Table 3 (Bayesian neural network), at reduced scale", target="bnn",
    target_params=lambda _: {"task": "classification", "hidden": (32,), "activation": "tanh"},
    methods=("mamba-ksd", "grid", "heuristic"),
    columns=(("ece_pct", "ECE %"), ("mce_pct", "MCE %")),
    paper=_paper(("mamba-ksd", "grid", "heuristic"), (
        [(1.0, 36.4), (0.9, 15.7), (0.7, 47.1), (0.7, 21.3), (9.3, 45.7), (0.9, 27.4)],
        [(14.6, 42.1), (8.8, 40.7), (20.1, 65.5), (25.1, 55.2), (5.4, 42.2), (7.7, 42.3)],
        [(0.8, 23.3), (0.7, 22.0), (50.9, 71.6), (40.8, 74.8), (6.2, 43.2), (7.0, 51.5)])),
    differences=("scikit-learn's digits (8 x 8 pixels, 1797 images; 70 % train, 20 % test) instead of MNIST (28 x 28, "
                 "60,000 + 10,000), which cannot be downloaded here.",
                 "One hidden layer of 32 tanh units (2410 parameters), not 100 units with a softmax inside "
                 "(the paper's beta = softmax(softmax(x B + b) A + a)); prior N(0, 1) on every weight as in the paper.",
                 "The samplers start from the MAP (L-BFGS), as the paper's final runs do.", *COMMON_DIFFERENCES),
    start_at_map=True,
    score=_calibration,
    reference=lambda target: None,
    extras=(("accuracy_pct", "accuracy %"), ("ksd", "KSD")),
)

TABLES = {table.name: table for table in (TABLE1, TABLE2, TABLE3)}


def _sampler_params(sampler: str, base) -> dict:
    """The paper's conventions (``SAMPLER_PARAMS``) and, for a control-variate sampler, the centre and its gradient
    found once on ``base`` (``find_map`` is cached per target object; each tuning run's own target would search
    again, for the same point)."""
    params = dict(SAMPLER_PARAMS.get(sampler, {}))
    if get_sampler(sampler).prepare is control_variates.prepare:
        params["centre"], params["centre_grad"] = find_map(base)
    return params


def _problem(table: Table, method: str, sampler: str, target_params: dict, base, budget: Budget, seed: int,
             start) -> tuner.Problem:
    options = dict(budget=budget, metric="fssd" if method == "mamba-fssd" else "ksd", initial_position=start,
                   sampler_params=_sampler_params(sampler, base), target_params=target_params, seed=seed)
    if method == "heuristic":
        return tuner.Problem.build(sampler, table.target, arms=[tuner.heuristic_arm(base)], **options)
    return tuner.Problem.build(sampler, table.target, axes=AXES, **options)


def _settings(table: Table, budget: Budget, final_budget: Budget, target_params: dict) -> dict:
    """What a finished row depends on besides its (sampler, method, run): rows of other settings are not reused."""
    return {"table": table.name, "budget": budget.total, "final_budget": final_budget.total,
            "target_params": json.loads(json.dumps(target_params, sort_keys=True, default=str)),
            "sampler_params": SAMPLER_PARAMS, "axes": {k: list(v) for k, v in AXES.items()}}


def finished_rows(record: Path | None, settings: dict) -> dict:
    """(sampler, method, run) -> row of the rows of ``record`` (JSON lines) with these ``settings``; a last line
    cut short by an interruption is ignored."""
    if record is None or not Path(record).is_file():
        return {}
    rows = {}
    for line in Path(record).read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("settings") == settings:
            row = entry["row"]
            rows[(row["sampler"], row["method"], row["run"])] = row
    return rows


def _append(record: Path | None, settings: dict, row: dict) -> None:
    if record is not None:
        write_line(record, {"settings": settings, "row": row})


@dataclasses.dataclass(frozen=True)
class _Context:
    """What every cell of one reproduction shares: the table, its target (parameters and object), the NUTS
    reference and the chains' start; built once per process."""

    table: Table
    target_params: dict
    base: object
    reference: object
    start: object

    @classmethod
    def build(cls, table: Table, num_data: int | None) -> _Context:
        target_params = table.target_params(num_data)
        base = targets.get(table.target, **target_params)
        return cls(table, target_params, base, table.reference(base),
                   find_map(base)[0] if table.start_at_map else None)


def _cell(context: _Context, sampler: str, method: str, run: int, budget: Budget, final_budget: Budget) -> dict:
    """One (sampler, method, run): tune with ``budget`` (seed ``run``), run the winner for ``final_budget``, score."""
    table = context.table
    problem = _problem(table, method, sampler, context.target_params, context.base, budget, run, context.start)
    tune = {"heuristic": tuner.heuristic, "grid": tuner.grid_search}.get(method, tuner.mamba)
    arm = tune(problem).winner
    steps = problem.costs[arm].steps_within(final_budget.total, True)
    final = problem.runner.run({arm: steps})[arm]
    scores = table.score(context.base, final.samples, context.reference)  # one target: one compiled score function
    return {"sampler": sampler, "method": method, "run": run, **dict(problem.arms[arm].values),
            "final_steps": steps, **scores, "nonfinite_steps": final.nonfinite_steps, "commit": provenance.git_commit(),
            "arm_label": problem.arms[arm].label}


_WORKER_CONTEXTS: dict = {}


def _cell_in_worker(table_name: str, num_data: int | None, sampler: str, method: str, run: int, budget: float,
                    final_budget: float) -> dict:
    """:func:`_cell` in a worker process (``jobs`` > 1), its :class:`_Context` built on the first cell it runs."""
    key = (table_name, num_data)
    if key not in _WORKER_CONTEXTS:
        enable_compilation_cache()
        _WORKER_CONTEXTS[key] = _Context.build(TABLES[table_name], num_data)
    return _cell(_WORKER_CONTEXTS[key], sampler, method, run, Budget("grads", budget), Budget("grads", final_budget))


def _computed(context: _Context, cells: list, budget: Budget, final_budget: Budget, num_data, jobs: int,
              client=None):
    """Yield each of ``cells`` (sampler, method, run) with its row as it finishes: in this process, with
    ``jobs`` > 1 in that many worker processes (spawned: a forked JAX runtime is unsafe), or as tasks of the Dask
    ``client`` (each worker builds the context once), in any order."""
    if client is None and (jobs == 1 or len(cells) < 2):
        for cell in cells:
            yield cell, _cell(context, *cell, budget, final_budget)
        return
    from sgbench.bench.reproduce import spawned_processes
    from sgbench.bench.sweeps import dask_tasks

    calls = [(context.table.name, num_data, *cell, budget.total, final_budget.total) for cell in cells]
    arriving = (dask_tasks.results_as_finished(client, _cell_in_worker, calls) if client is not None
                else spawned_processes.results_as_finished(_cell_in_worker, calls, jobs))
    for index, row in arriving:
        yield cells[index], row


def reproduce(table: Table, runs: int = 10, budget: float = DEFAULT_BUDGET, final_budget: float = DEFAULT_BUDGET,
              samplers=SAMPLERS, methods=None, num_data: int | None = None, progress: bool = True,
              record: Path | None = None, jobs: int = 1, client=None) -> pd.DataFrame:
    """Every (method, sampler, run) of ``table``: the chosen hyperparameters and the final run's scores.

    Each finished row is appended to ``record`` (JSON lines, flushed) with the settings it depends on (budgets,
    target parameters, sampler parameters, axes) and the code's commit; a rerun with the same settings takes those
    rows from it instead of running them again, so an interrupted reproduction resumes where it stopped. A cell's
    row depends only on its (sampler, method, run) and the settings, not on ``jobs``. When the record holds every
    cell nothing is built (no target, reference or MAP); under ``sgbench.bench.reproduce._record.recorded_only`` a
    cell missing from it raises ``NotRecorded``.

    Args:
        table: a :class:`Table` (``TABLES``).
        runs: independent tuning runs (seeds 0..runs-1).
        budget: the tuning budget in full-data gradient evaluations.
        final_budget: the final run's budget, in the same units.
        samplers: a subset of ``SAMPLERS``.
        methods: a subset of ``table.methods`` (default: all).
        num_data: N of Table 1's simulated data (a NUTS reference for it must be stored); None for the default.
        progress: on stderr, the cells left to compute, then one line per tuning run (cells done of all, its
            outcome, minutes so far) and ``sgbench.bench.running.progress_lines.progress_bar`` over the cells (a
            line at least every 10 s when stderr is not a terminal).
        record: the JSON-lines file of finished rows, or None (nothing kept).
        jobs: cells computed at once, each in its own process (1: all in this one). A tuning run's minibatch
            steps are small sequential programs that keep one core busy, so a second job uses a second core.
        client: a ``distributed.Client``: each cell a Dask task instead (``sgbench.bench.sweeps.dask_tasks``); the
            record is written here.

    Returns:
        a DataFrame, one row per (sampler, method, run) in that order; ``commit`` says which code produced it.
    """
    integer_at_least("runs", runs, 1, 1000)
    integer_at_least("jobs", jobs, 1, 256)
    methods = table.methods if methods is None else tuple(methods)
    budget, final_budget = Budget("grads", budget), Budget("grads", final_budget)
    for name, chosen, allowed in (("samplers", samplers, SAMPLERS), ("methods", methods, table.methods)):
        unknown = sorted(set(chosen) - set(allowed))
        if unknown or not chosen:
            raise ValueError(f"{name} must be a non-empty subset of {', '.join(allowed)}, got {list(chosen)}")
    settings = _settings(table, budget, final_budget, table.target_params(num_data))
    rows = finished_rows(record, settings)
    cells = [(sampler, method, run) for sampler in samplers for method in methods for run in range(runs)]
    missing = [cell for cell in cells if cell not in rows]
    if not missing:  # everything from the record: no target, reference or MAP is built
        if progress:
            print(f"all {len(cells)} cells from the record {record}: nothing to compute", file=sys.stderr, flush=True)
        return pd.DataFrame([rows[cell] for cell in cells])
    if not _record.computing_allowed():  # the cells run in parallel, outside _record.cached
        raise _record.NotRecorded(f"{record} holds no finished cell {list(missing[0])} under the settings {settings} "
                                  f"({len(missing)} of {len(cells)} cells missing)")
    enable_compilation_cache()
    context = _Context.build(table, num_data)
    for sampler in samplers:  # a budget too small for some arm is refused before hours of runs, not after
        problem = functools.partial(_problem, table, sampler=sampler, target_params=context.target_params,
                                    base=context.base, budget=budget, seed=0, start=context.start)
        if {"mamba-ksd", "mamba-fssd"} & set(methods):
            tuner.check_mamba_budget(problem(method="mamba-ksd"))
        if "grid" in methods:
            grid = problem(method="grid")
            grid.check_budget(budget.total / len(grid.arms), f"with {len(grid.arms)} arms sharing it equally (grid),")
    start, done = time.perf_counter(), len(cells) - len(missing)
    if progress:
        print(f"{len(missing)} of {len(cells)} cells to compute ({done} from the record), {jobs} at a time; a line as "
              "each one finishes", file=sys.stderr, flush=True)
    with progress_bar(len(cells), "cell", progress) as bar:
        bar.done_elsewhere(done)
        for cell, row in _computed(context, missing, budget, final_budget, num_data, jobs, client):
            label = row.pop("arm_label")
            rows[cell] = row
            done += 1
            _append(record, settings, row)
            bar.update()
            shown = ", ".join(f"{text} {row[key]:.4g}" for key, text in table.columns)
            minutes = (time.perf_counter() - start) / 60
            bar.write(f"[{done}/{len(cells)}] {cell[0]} {cell[1]} run {cell[2]}: {label}, {shown} ({minutes:.1f} min)")
    return pd.DataFrame([rows[cell] for cell in cells])


def _chosen(group: pd.DataFrame) -> str:
    """The hyperparameters a method chose over its runs: ``h 3.2e-06 to 3.2e-05; batch 1 %, 10 %`` (and the friction
    where the sampler has one)."""
    steps = sorted(set(group["step_size"]))
    parts = [f"h {steps[0]:.2g}" + (f" to {steps[-1]:.2g}" if len(steps) > 1 else "")]
    parts.append("batch " + ", ".join(f"{100 * b:g} %" for b in sorted(set(group["batch_fraction"]))))
    if "friction" in group and group["friction"].notna().all():
        parts.append("friction " + ", ".join(f"{f:g}" for f in sorted(set(group["friction"]))))
    return "; ".join(parts)


def summarise(table: Table, frame: pd.DataFrame) -> pd.DataFrame:
    """Per (method, sampler): the runs, how many diverged (a non-finite score: the final run left the finite
    numbers), the mean and standard deviation of each score (the table's columns and extras) over the other runs,
    beside the paper's value, and the hyperparameters chosen (:func:`_chosen`)."""
    rows = []
    for (method, sampler), group in frame.groupby(["method", "sampler"], sort=False):
        finite = group[np.all(np.isfinite(group[[key for key, _ in table.columns]]), axis=1)]
        row = {"method": method, "sampler": sampler, "runs": len(group), "diverged": len(group) - len(finite)}
        for i, (key, _) in enumerate(table.columns + table.extras):
            row[f"{key}_mean"] = finite[key].mean() if len(finite) else np.nan
            row[f"{key}_std"] = finite[key].std() if len(finite) > 1 else np.nan
            if i < len(table.columns):
                row[f"{key}_paper"] = table.paper[method][sampler][i]
        row["chosen"] = _chosen(group)
        rows.append(row)
    return pd.DataFrame(rows)


def _mean_std(mean: float, std: float) -> str:
    """``mean ± std`` to 3 significant digits (``-`` without a finite mean, the mean alone without a spread)."""
    if not np.isfinite(mean):
        return "-"
    return f"{mean:.3g} ± {std:.2g}" if np.isfinite(std) else f"{mean:.3g}"


def render(table: Table, summary: pd.DataFrame) -> pd.DataFrame:
    """The summary as printed: "mean ± std (paper)" per score over the finite runs, "mean ± std" per extra score,
    the diverged runs and the hyperparameters chosen."""
    shown = {"method": summary["method"], "sampler": summary["sampler"]}
    for key, label in table.columns:
        shown[f"{label} ours (paper)"] = [f"{_mean_std(m, s)} ({p:g})" for m, s, p in
                                          zip(summary[f"{key}_mean"], summary[f"{key}_std"], summary[f"{key}_paper"])]
    for key, label in table.extras:
        shown[label] = [_mean_std(m, s) for m, s in zip(summary[f"{key}_mean"], summary[f"{key}_std"])]
    shown["diverged"] = [f"{d} of {n}" for d, n in zip(summary["diverged"], summary["runs"])]
    shown["chosen"] = summary["chosen"]
    return pd.DataFrame(shown)


def figure(table: Table, summary: pd.DataFrame) -> bytes:
    """PNG, one panel per score: each method's mean ± std over runs per sampler (filled) beside the paper's value
    (hollow, same colour), on a log axis."""
    samplers = list(dict.fromkeys(summary["sampler"]))
    methods = list(dict.fromkeys(summary["method"]))
    fig, axes = subplots(1, len(table.columns), figsize=(6 * len(table.columns), 4.2), squeeze=False)
    offsets = np.linspace(-0.3, 0.3, len(methods))
    for ax, (key, label) in zip(axes[0], table.columns):
        for colour, (offset, method) in enumerate(zip(offsets, methods)):
            rows = summary[summary["method"] == method].set_index("sampler").reindex(samplers)
            x = np.arange(len(samplers)) + offset
            ax.errorbar(x, rows[f"{key}_mean"], yerr=rows[f"{key}_std"].fillna(0), fmt="o", color=f"C{colour}",
                        label=f"{method} (ours)", capsize=2)
            ax.plot(x, rows[f"{key}_paper"], "o", mfc="white", color=f"C{colour}", label=f"{method} (paper)")
        ax.set_yscale("log")
        ax.set_xticks(range(len(samplers)), samplers)
        ax.set_ylabel(f"{label} (lower is better)")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return png_bytes(fig)


# The scales of ``sgbench reproduce mamba-tableN``: the runs per cell and the budgets (full-data gradient
# evaluations) of tuning and of the final run; the paper's tables average 10 runs.
SCALES = {"quick": {"runs": 2, "budget_grads": 3000, "final_grads": 3000},
          "paper": {"runs": 10, "budget_grads": DEFAULT_BUDGET, "final_grads": DEFAULT_BUDGET}}


def _verdicts(table: Table, summary: pd.DataFrame) -> pd.DataFrame:
    """The printed summary with a verdict per score: ours (mean ± std over runs) against the paper's value, which
    has no interval (the paper gives none for these tables)."""
    from sgbench.bench.reproduce.outcome import verdict

    shown = render(table, summary)
    for key, label in table.columns:
        shown[f"{label} verdict"] = [verdict(m, s, p) for m, s, p in
                                     zip(summary[f"{key}_mean"], summary[f"{key}_std"], summary[f"{key}_paper"])]
    return shown


def _short_commits(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each commit cut to 12 hex digits (``+dirty`` kept)."""
    return frame.assign(commit=frame["commit"].str.replace(r"^([0-9a-f]{12})[0-9a-f]{28}", r"\1", regex=True))


def _commits(frame: pd.DataFrame) -> pd.DataFrame:
    """The code behind the runs: per commit (:func:`_short_commits`), its runs and their samplers."""
    return pd.DataFrame([{"commit": commit, "runs": len(group), "samplers": ", ".join(dict.fromkeys(group["sampler"]))}
                         for commit, group in _short_commits(frame).groupby("commit", sort=True)])


def run_table(table: Table, scale: str, options: dict, db, out, progress: bool):
    """``sgbench reproduce mamba-tableN``: :func:`reproduce` at ``scale`` (``SCALES``; ``--runs``,
    ``--budget-grads``, ``--final-grads`` override it), its finished cells kept in ``mamba_tableN_runs.jsonl``
    beside the results store ``db``, so that a rerun resumes; the outcome holds the paper's claims
    (``sgbench.bench.reproduce.mamba_claims``), the table with a verdict per score, the code behind the runs, and
    on the page the figure, the differences from the paper and every run."""
    from sgbench.bench.html import table as html_table
    from sgbench.bench.reproduce.outcome import Outcome, timed

    settings = {**SCALES[scale], **{k: v for k, v in options.items() if k in SCALES[scale]}}
    runs = integer_at_least("--runs", settings["runs"], 1, 1000)
    jobs = jobs_of(options, 256)
    if options.get("num_data") is not None:
        integer_at_least("--num-data", options["num_data"], 1, 1_000_000)
    for flag in ("budget_grads", "final_grads"):
        value = settings[flag]
        if not value > 0 or value == float("inf"):
            raise ValueError(f"--{flag.replace('_', '-')} must be a finite number > 0, got {value:g}")
    samplers = tuple(options.get("sampler") or SAMPLERS)
    methods = tuple(options.get("method") or table.methods)
    for flag, chosen, allowed in (("--sampler", samplers, SAMPLERS), ("--method", methods, table.methods)):
        for value in chosen:
            if value not in allowed:
                raise ValueError(f"{flag} must be one of {', '.join(allowed)}, got {value!r}")
    record = record_path(db, table.name)
    with executor_context(options, jobs) as client:
        frame, seconds = timed(reproduce, table, runs=runs, budget=settings["budget_grads"],
                               final_budget=settings["final_grads"], samplers=samplers, methods=methods,
                               num_data=options.get("num_data"), progress=progress, record=record, jobs=jobs,
                               client=client)
    summary = summarise(table, frame)
    commits = _commits(frame)
    intro = (f"{runs} tuning run{'s' if runs > 1 else ''} per cell, tuning budget {settings['budget_grads']:g} and "
             f"final run {settings['final_grads']:g} full-data gradient evaluations (paper: seconds); mean ± std "
             f"over runs (paper's value); {seconds:.0f} s in this invocation. Code: "
             f"{', '.join(commits['commit'])}; finished runs are kept in {record} and a "
             f"rerun with the same settings reuses them. Verdict: within 2 std of the paper's value, or differs.")
    return Outcome(name=table.name, title=table.title, table=_verdicts(table, summary),
                   claims=mamba_claims.claims(table, frame), intro=intro,
                   sections=(("The code behind the runs", commits),
                             ("Ours beside the paper's, per sampler", figure(table, summary)),
                             ("Differences from the paper",
                              Markup("<ul>" + "".join(f"<li>{escape(d)}</li>" for d in table.differences) + "</ul>")),
                             ("Every run", html_table(_short_commits(frame)))))


def _register(table: Table, source: str, summary: str):
    options = [Option("--runs", "mamba tables: independent tuning runs per cell, seeds 0.. (default: 2 quick, "
                                "10 paper)"),
               Option("--budget-grads", "mamba tables: tuning budget in full-data gradient evaluations (default: "
                                        "3000 quick, 10000 paper)", float),
               Option("--final-grads", "mamba tables: budget of the final run of the chosen hyperparameters "
                                       "(default: 3000 quick, 10000 paper)", float),
               Option("--sampler", "only these samplers (repeatable)", str, True),
               Option("--method", "mamba tables: only these methods (repeatable; default: the table's)", str, True),
               JOBS_OPTION,
               *EXECUTOR_OPTIONS]
    if table is TABLE1:
        options.append(Option("--num-data", "mamba-table1: N of the simulated data (default: 10000; paper: 10^6; "
                                            "needs a stored NUTS reference)"))
    return register(Reproduction(
        name=table.name, summary=summary, source=source,
        scales={"quick": f"{SCALES['quick']['runs']} tuning runs per cell, budgets of "
                         f"{SCALES['quick']['budget_grads']} + {SCALES['quick']['final_grads']} gradient evaluations",
                "paper": f"{SCALES['paper']['runs']} runs per cell (the paper's), budgets of "
                         f"{SCALES['paper']['budget_grads']} + {SCALES['paper']['final_grads']}"},
        run=functools.partial(run_table, table), options=tuple(options)))


for _table, _source, _summary in (
        (TABLE1, "MAMBA paper, section 4.1, appendix C.1", "MAMBA Table 1: KSD and xi(sigma) of tuned samplers, "
                                                         "logistic regression"),
        (TABLE2, "MAMBA paper, section 4.2, appendix C.2", "MAMBA Table 2: KSD and xi(sigma), probabilistic matrix "
                                                         "factorisation (generated ratings)"),
        (TABLE3, "MAMBA paper, section 4.3, appendix C.3", "MAMBA Table 3: ECE and MCE of a Bayesian neural network "
                                                         "classifier (digits)")):
    _register(_table, _source, _summary)
