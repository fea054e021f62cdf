r"""``sgbench gate``: run a suite's cells, check them against truth (tier 2, ``sgbench.bench.gate.truth``)
and against stored baselines (tier 3, ``sgbench.bench.gate.baseline``), and say what moved.

**Outcomes.** Each cell is PASSED, FAILED or INCONCLUSIVE (``sgbench.bench.gate.outcome``), and so is the run
(FAILED if a cell failed, else INCONCLUSIVE if a cell is): FAILED when a check fails or the chains do not
move (the ``moves`` row: ``sgbench.bench.gate.start``), INCONCLUSIVE when every check passed but a cell that must
forget its start (``Cell.must_forget``) did not within its warm-up, PASSED otherwise.

**Error budget.** A whole gate run fails by chance with probability at most ``ALPHA_RUN`` = 1e-3
when nothing is wrong (at most one failing run in a thousand): Bonferroni over the statistical
checks, so each check (and each baseline comparison) has false-failure rate
``ALPHA_RUN / (cells x checks per cell)``, about 1e-5 for the quick suite. Each check splits its own
rate over coordinates. :func:`reseed` measures the empirical rates.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sgbench.bench.gate import baseline as baselines, cell_record, design_bias
from sgbench.bench.gate.cells import Cell, select, suite
from sgbench.bench.gate.outcome import Outcome, combined
from sgbench.bench.gate.replicates import Replicates, run_replicates
from sgbench.bench.gate.start import FORGET_TIMES, STILL, Travel
from sgbench.bench.gate.truth import truth_checks
from sgbench.bench.running.progress_event import Counted

ALPHA_RUN = 1e-3
TRUTH_CHECKS = 3  # mean, second_moment, b2 (``finite`` is deterministic)


@dataclasses.dataclass
class GateOutcome:
    """The checks (one row per cell and check), the what-moved table (empty without baselines),
    the per-cell outcomes (``cells``: cell, outcome, failed checks, how far the chains travelled), per cell its
    relative second-moment errors per coordinate (``errors``: cell names, means, standard errors), the seconds of
    the run, how many cells were reused from an interrupted run's record (``sgbench.bench.gate.cell_record``), and
    the run's outcome."""

    suite: str
    seed: int
    checks: pd.DataFrame
    moved: pd.DataFrame
    cells: pd.DataFrame
    errors: tuple
    seconds: float
    reused: int = 0

    @property
    def outcome(self) -> Outcome:
        return combined(Outcome[name] for name in self.cells["outcome"])


def alpha_per_check(num_cells: int, with_baseline: bool) -> float:
    """The false-failure rate of each statistical check: ``ALPHA_RUN`` over all of a run's checks."""
    return ALPHA_RUN / (num_cells * (TRUTH_CHECKS + int(with_baseline)))


def references(suite_name: str, baseline_path: Path | None, use_baseline: bool) -> tuple:
    """(stored design biases, the suite's baselines or None, the per-check false-failure rate)."""
    base = baselines.load(baseline_path or baselines.path_for(suite_name)) if use_baseline else None
    return design_bias.load(), base, alpha_per_check(len(suite(suite_name)), base is not None)


def run_cell(cell: Cell, groups: int = 1, seed: int = 0, **options) -> Replicates:
    """``groups`` runs of ``cell`` as the gate makes them: averaging every ``cell.thin``-th scored step and
    keeping every ``cell.keep_every``-th draw for :func:`sgbench.bench.gate.start.travel`; ``options`` as for
    ``run_replicates``."""
    return run_replicates(cell, groups=groups, seed=seed, keep_samples=True, thin=cell.thin,
                          keep_every=cell.keep_every, **options)


def run_cell_in(cell: Cell, seed: int = 0, dtype: str = "float64") -> Replicates:
    """:func:`run_cell` with the JAX driver in ``dtype``; a cell of the NumPy reference runs in float64 (the only
    dtype it has) whatever ``dtype`` is."""
    return run_cell(cell, seed=seed, dtype=dtype if cell.backend == "jax" else "float64")


def moves_row(cell: Cell, travel: Travel) -> dict:
    """The ``moves`` row of a cell's checks: fails when its chains do not move (``sgbench.bench.gate.start``);
    ``statistic`` the median standardised distance from start to end in the least-moving coordinate,
    ``estimate`` the autocorrelation time in steps, ``expected`` the longest that the warm-up allows."""
    return {"cell": cell.name, "name": "moves", "passed": not travel.still, "alpha": 0.0,
            "statistic": travel.displacement, "threshold": STILL, "estimate": travel.autocorrelation_steps,
            "expected": travel.warmup / FORGET_TIMES, "standard_error": float("nan"), "detectable": float("nan"),
            "forgot": travel.forgot}


def cell_outcome(cell: Cell, rows: list[dict], travel: Travel) -> dict:
    """One cell's outcome (module docstring) from its check rows and its ``travel``: a row with the cell,
    the outcome's name, the failed checks and the travel in words."""
    failed = [r["name"] for r in rows if not r["passed"]]
    if failed:
        outcome = Outcome.FAILED
    elif cell.must_forget and not travel.forgot:
        outcome = Outcome.INCONCLUSIVE
    else:
        outcome = Outcome.PASSED
    words = travel.describe("the sampler's GateSettings.num_burnin") if cell.must_forget or travel.still else (
        "the chains move; they are checked against a law from the same start and warm-up, so they need not "
        "forget it")
    return {"cell": cell.name, "outcome": outcome.name, "failed": ", ".join(failed), "travel": words}


def check_group(rep: Replicates, group: int, design: dict, document: dict | None, alpha: float):
    """(check rows, moved rows, cell outcome row) of group ``group`` of ``rep`` (a :func:`run_cell` run)."""
    one = rep.group(group)
    travel = one.travel()
    rows = [{"cell": rep.cell.name, **c.as_row()} for c in truth_checks(one, design, alpha)]
    rows.append(moves_row(rep.cell, travel))
    moved = []
    if document is not None:
        check, moved = baselines.compare(rep.cell.name, baselines.metrics(rep, group), document, alpha)
        rows.append({"cell": rep.cell.name, **check.as_row()})
    return rows, moved, cell_outcome(rep.cell, rows, travel)


def record_settings(suite_name: str, seed: int = 0, baseline_path: Path | None = None, use_baseline=True,
                    dtype: str = "float64") -> dict:
    """The settings under which a gate run's finished cells are kept and reused (``cell_record.settings``)."""
    document, base, _ = references(suite_name, baseline_path, use_baseline)
    return cell_record.settings(suite_name, seed, base, document, dtype)


def run_gate(suite_name: str = "quick", seed: int = 0, baseline_path: Path | None = None, use_baseline=True,
             progress=print, client=None, record: Path | None = None, on_cell=None, dtype: str = "float64",
             only=None) -> GateOutcome:
    """Run every cell of ``suite_name`` once with ``seed`` and check it.

    Args:
        suite_name: the gate suite.
        seed: the run's seed.
        baseline_path: the baselines (default ``reports/baselines/<suite>.json``).
        use_baseline: False for truth checks only.
        progress: told one line per cell.
        client: a ``distributed.Client`` that runs each cell as a task (``sgbench.bench.sweeps.dask_tasks``); the
            checks are made here.
        record: the record of finished cells (``sgbench.bench.gate.cell_record``): cells finished there under
            this run's settings are reused, each cell computed is appended as it finishes; None keeps nothing.
        on_cell: called with each computed cell's ``Replicates`` as it finishes (the CLI stores its runs).
        dtype: the JAX driver's dtype (``RunConfig.dtype``) for every cell's runs; the NumPy reference's cells run
            in float64 whatever it is. A record keeps the cells of each dtype apart.
        only: the cells ``c`` with ``only(c)`` true alone (None: every cell of the suite).

    Returns:
        the :class:`GateOutcome`.
    """
    cells = suite(suite_name)
    if only is not None:
        cells = tuple(cell for cell in cells if only(cell))
        if not cells:
            raise ValueError(f"only: none of the gate suite {suite_name!r}'s cells was selected")
    document, base, alpha = references(suite_name, baseline_path, use_baseline)
    under = cell_record.settings(suite_name, seed, base, document, dtype)
    kept = cell_record.finished_cells(record, under) if record is not None else {}
    to_compute = [cell for cell in cells if cell.name not in kept]
    progress(f"gate '{suite_name}': {len(cells)} cells" + (f", {len(kept)} of them kept from an interrupted run"
                                                           if kept else ""))
    start = time.perf_counter()
    if client is None:
        computed = (run_cell_in(cell, seed=seed, dtype=dtype) for cell in to_compute)
    else:
        from sgbench.bench.sweeps.dask_tasks import results_in_order

        computed = results_in_order(client, run_cell_in, to_compute, seed=seed, dtype=dtype)
    rows, moved, outcomes, errors = [], [], [], ([], [], [])
    for k, cell in enumerate(cells):
        entry = kept.get(cell.name)
        if entry is None:
            rep = next(computed)
            cell_rows, cell_moved, verdict = check_group(rep, 0, design_bias.of_cell(cell, document), base, alpha)
            summary = rep.summary()
            entry = {"rows": cell_rows, "moved": cell_moved, "outcome": verdict,
                     "errors": summary["second_moment_error"], "errors_se": summary["second_moment_error_se"],
                     "seconds": rep.seconds}
            if on_cell is not None:
                on_cell(rep)
            if record is not None:
                cell_record.keep(record, under, cell.name, entry)
            when = f"{rep.seconds:.1f} s"
        else:
            when = "kept from an interrupted run"
        rows += entry["rows"]
        moved += entry["moved"]
        outcomes.append(entry["outcome"])
        for part, value in zip(errors, (cell.name, entry["errors"], entry["errors_se"])):
            part.append(value)
        verdict = entry["outcome"]
        said = {"FAILED": f"FAILED {verdict['failed']}", "INCONCLUSIVE": f"INCONCLUSIVE: {verdict['travel']}",
                "PASSED": "passed"}[verdict["outcome"]]
        progress(Counted(k + 1, len(cells), f"{cell.name}: {said} ({when})"))
    return GateOutcome(suite_name, seed, pd.DataFrame(rows), pd.DataFrame(moved), pd.DataFrame(outcomes), errors,
                       time.perf_counter() - start, reused=len(cells) - len(to_compute))


def update_baseline(suite_name: str, why: str, command: str, seeds: int = baselines.DEFAULT_SEEDS,
                    path: Path | None = None, names=None, sampler: str | None = None, progress=print) -> Path:
    """Regenerate ``suite_name``'s baselines (all cells, those in ``names``, or those of ``sampler``)
    from ``seeds`` reseeded runs and the fixed seed 0, merged into the file's other cells."""
    baselines.checked_why(why)  # before minutes of runs, not after
    cells = select(suite_name, names, sampler)
    entries = {}
    for k, cell in enumerate(cells):
        fixed = baselines.metrics(run_cell(cell, seed=0), 0)
        entries[cell.name] = baselines.summarise(run_cell(cell, groups=seeds, seed=baselines.SEED), fixed)
        mean, sd = (entries[cell.name][key].get("sqrt_b2", np.nan) for key in ("mean", "sd"))
        progress(Counted(k + 1, len(cells), f"{cell.name}: sqrt(b2) {mean:.4f} +- {sd:.4f} over {seeds} seeds"))
    return baselines.write(path or baselines.path_for(suite_name), suite_name, entries, why, command)


def reseed(suite_name: str, num_runs: int, baseline_path: Path | None = None, use_baseline=True,
           first_seed: int = 1, names=None, progress=print) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gate run ``num_runs`` times with fresh seeds (each cell's runs in one compiled call;
    all cells, or those in ``names``, each at the whole suite's per-check rate): (per check:
    failures, runs, empirical rate, designed rate, and per cell the runs it was INCONCLUSIVE in; per
    run: whether it failed, whether it was inconclusive)."""
    document, base, alpha = references(suite_name, baseline_path, use_baseline)
    cells = select(suite_name, names)
    progress(f"gate '{suite_name}' reseeded: {len(cells)} cells x {num_runs} runs")
    failed_runs = np.zeros(num_runs, dtype=bool)
    inconclusive_runs = np.zeros(num_runs, dtype=bool)
    rows = []
    for k, cell in enumerate(cells):
        design = design_bias.of_cell(cell, document)
        rep = run_cell(cell, groups=num_runs, seed=first_seed)
        outcomes = [check_group(rep, g, design, base, alpha) for g in range(num_runs)]
        verdicts = np.array([o[2]["outcome"] for o in outcomes])
        failed_runs |= verdicts == Outcome.FAILED.name
        inconclusive_runs |= verdicts == Outcome.INCONCLUSIVE.name
        for j, first in enumerate(outcomes[0][0]):
            failures = sum(not group[0][j]["passed"] for group in outcomes)
            rows.append({"cell": cell.name, "check": first["name"], "failures": failures, "runs": num_runs,
                         "rate": failures / num_runs, "designed_rate": first["alpha"],
                         "detectable": first["detectable"],
                         "inconclusive": int(np.sum(verdicts == Outcome.INCONCLUSIVE.name))})
        progress(Counted(k + 1, len(cells), f"{cell.name}: {num_runs} runs in {rep.seconds:.1f} s, "
                         f"{sum(r['failures'] for r in rows[-len(outcomes[0][0]):])} check failures, "
                         f"{rows[-1]['inconclusive']} inconclusive"))
    runs = pd.DataFrame({"run": np.arange(num_runs), "seed_group": np.arange(num_runs), "failed": failed_runs,
                         "inconclusive": inconclusive_runs & ~failed_runs})
    return pd.DataFrame(rows), runs
