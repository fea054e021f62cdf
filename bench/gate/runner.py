r"""``sgbench gate``: run a suite's cells, check them against truth (tier 2, ``bench.gate.truth``)
and against stored baselines (tier 3, ``bench.gate.baseline``), and say what moved.

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

from bench.gate import baseline as baselines
from bench.gate import design_bias
from bench.gate.cells import select, suite
from bench.gate.replicates import Replicates, run_replicates
from bench.gate.truth import truth_checks

ALPHA_RUN = 1e-3
TRUTH_CHECKS = 3  # mean, second_moment, b2 (``finite`` is deterministic)


@dataclasses.dataclass
class GateOutcome:
    """The checks (one row per cell and check), the what-moved table (empty without baselines),
    the per-cell replicate statistics, and whether everything passed."""

    suite: str
    seed: int
    checks: pd.DataFrame
    moved: pd.DataFrame
    replicates: list
    seconds: float

    @property
    def passed(self) -> bool:
        return bool(self.checks["passed"].all())


def alpha_per_check(num_cells: int, with_baseline: bool) -> float:
    """The false-failure rate of each statistical check: ``ALPHA_RUN`` over all of a run's checks."""
    return ALPHA_RUN / (num_cells * (TRUTH_CHECKS + int(with_baseline)))


def references(suite_name: str, baseline_path: Path | None, use_baseline: bool) -> tuple:
    """(stored design biases, the suite's baselines or None, the per-check false-failure rate)."""
    base = baselines.load(baseline_path or baselines.path_for(suite_name)) if use_baseline else None
    return design_bias.load(), base, alpha_per_check(len(suite(suite_name)), base is not None)


def check_group(rep: Replicates, group: int, design: dict, document: dict | None, alpha: float):
    """(check rows, moved rows) of group ``group`` of ``rep``."""
    one = rep.group(group)
    rows = [{"cell": rep.cell.name, **c.as_row()} for c in truth_checks(one, design, alpha)]
    moved = []
    if document is not None:
        check, moved = baselines.compare(rep.cell.name, baselines.metrics(rep, group), document, alpha)
        rows.append({"cell": rep.cell.name, **check.as_row()})
    return rows, moved


def run_gate(suite_name: str = "quick", seed: int = 0, baseline_path: Path | None = None, use_baseline=True,
             progress=print, client=None) -> GateOutcome:
    """Run every cell of ``suite_name`` once with ``seed`` and check it; ``baseline_path``
    defaults to ``reports/baselines/<suite>.json`` (``use_baseline=False``: truth checks only). ``client``: a
    ``distributed.Client`` that runs each cell as a task (``bench.sweeps.dask_tasks``); the checks are made here."""
    cells = suite(suite_name)
    document, base, alpha = references(suite_name, baseline_path, use_baseline)
    rows, moved, reps = [], [], []
    start = time.perf_counter()
    if client is None:
        computed = (run_replicates(cell, groups=1, seed=seed) for cell in cells)
    else:
        from bench.sweeps.dask_tasks import results_in_order

        computed = results_in_order(client, run_replicates, cells, groups=1, seed=seed)
    for k, (cell, rep) in enumerate(zip(cells, computed)):
        design = design_bias.of_cell(cell, document)
        cell_rows, cell_moved = check_group(rep, 0, design, base, alpha)
        rows += cell_rows
        moved += cell_moved
        reps.append(rep)
        failed = [r["name"] for r in cell_rows if not r["passed"]]
        progress(f"[{k + 1}/{len(cells)}] {cell.name}: {'FAILED ' + ', '.join(failed) if failed else 'passed'} "
                 f"({rep.seconds:.1f} s)")
    return GateOutcome(suite_name, seed, pd.DataFrame(rows), pd.DataFrame(moved), reps, time.perf_counter() - start)


def update_baseline(suite_name: str, why: str, command: str, seeds: int = baselines.DEFAULT_SEEDS,
                    path: Path | None = None, names=None, sampler: str | None = None, progress=print) -> Path:
    """Regenerate ``suite_name``'s baselines (all cells, those in ``names``, or those of ``sampler``)
    from ``seeds`` reseeded runs and the fixed seed 0, merged into the file's other cells."""
    baselines.checked_why(why)  # before minutes of runs, not after
    cells = select(suite_name, names, sampler)
    entries = {}
    for k, cell in enumerate(cells):
        fixed = baselines.metrics(run_replicates(cell, groups=1, seed=0), 0)
        entries[cell.name] = baselines.summarise(run_replicates(cell, groups=seeds, seed=baselines.SEED), fixed)
        progress(f"[{k + 1}/{len(cells)}] {cell.name}: sqrt(b2) {entries[cell.name]['mean'].get('sqrt_b2', np.nan):.4f}"
                 f" +- {entries[cell.name]['sd'].get('sqrt_b2', np.nan):.4f} over {seeds} seeds")
    return baselines.write(path or baselines.path_for(suite_name), suite_name, entries, why, command)


def reseed(suite_name: str, num_runs: int, baseline_path: Path | None = None, use_baseline=True,
           first_seed: int = 1, names=None, progress=print) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gate run ``num_runs`` times with fresh seeds (each cell's runs in one compiled call;
    all cells, or those in ``names``, each at the whole suite's per-check rate): (per check:
    failures, runs, empirical rate, designed rate; per run: whether it failed)."""
    document, base, alpha = references(suite_name, baseline_path, use_baseline)
    cells = select(suite_name, names)
    failed_runs = np.zeros(num_runs, dtype=bool)
    rows = []
    for k, cell in enumerate(cells):
        design = design_bias.of_cell(cell, document)
        rep = run_replicates(cell, groups=num_runs, seed=first_seed)
        outcomes = [check_group(rep, g, design, base, alpha)[0] for g in range(num_runs)]
        for g, group_rows in enumerate(outcomes):
            failed_runs[g] |= not all(r["passed"] for r in group_rows)
        for j, first in enumerate(outcomes[0]):
            failures = sum(not group_rows[j]["passed"] for group_rows in outcomes)
            rows.append({"cell": cell.name, "check": first["name"], "failures": failures, "runs": num_runs,
                         "rate": failures / num_runs, "designed_rate": first["alpha"],
                         "detectable": first["detectable"]})
        progress(f"[{k + 1}/{len(cells)}] {cell.name}: {num_runs} runs in {rep.seconds:.1f} s, "
                 f"{sum(r['failures'] for r in rows[-len(outcomes[0]):])} check failures")
    runs = pd.DataFrame({"run": np.arange(num_runs), "seed_group": np.arange(num_runs), "failed": failed_runs})
    return pd.DataFrame(rows), runs
