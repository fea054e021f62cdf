r"""Tier-3 regression baselines: each gate cell's metrics from ``K`` reseeded runs, stored in
``reports/baselines/<suite>.json`` with why and when they were made.

Metrics per cell (``metrics``): the mean over chains of the relative second-moment error and of
the standardised mean error per coordinate, and :math:`\sqrt{b^2}` (for heavy-tailed cells the
median over chains, whose seed-to-seed law is normal where the mean's is not); plus, compared exactly, the
gradient evaluations per chain and the number of diverged chains. A baseline keeps each metric's
mean :math:`\bar y` and standard deviation :math:`s` over the ``K`` seeds, and the value of the
gate's fixed seed.

A new run's metric :math:`y` is inside the tolerance when
:math:`|y - \bar y| \le t_{K-1}(1 - \alpha/(2M))\, s\sqrt{1 + 1/K}`, the prediction interval of
one more seed (exact for normal metrics; these are means over 64 chains), Bonferroni over the
cell's ``M`` metrics: false-failure rate ``alpha`` per cell when nothing changed. It detects a
shift of :math:`(t + z_{0.9})\,s\sqrt{1+1/K}` with probability 0.9. The table of what moved
lists every metric in units of :math:`s`, and whether it differs from the fixed-seed value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sgbench.base import provenance

if TYPE_CHECKING:  # the CLI reads DEFAULT_SEEDS without loading JAX and SciPy
    from sgbench.bench.gate.replicates import Replicates
    from sgbench.reference.checks import CheckResult

DIRECTORY = Path(__file__).resolve().parents[2] / "reports" / "baselines"
DEFAULT_SEEDS = 32
SEED = 500  # baseline seeds: disjoint from the gate's (0, 1) and the design bias's (700)
EXACT = ("grad_evals_per_chain", "num_diverged")


class BaselineError(LookupError):
    """A baseline file that is missing, unreadable, or lacks a cell."""


def metrics(rep: Replicates, group: int) -> dict[str, float]:
    """The baseline metrics of one run (group ``group`` of ``rep``)."""
    healthy = ~rep.diverged[group]
    out = {"num_diverged": float((~healthy).sum()), "grad_evals_per_chain": rep.grad_evals_per_chain}
    if healthy.sum() < 1:
        return out
    centre = np.median if rep.cell.heavy_tailed else np.mean
    r = centre(rep.second_moment_error[group][healthy], axis=0)
    m = centre(rep.mean_error[group][healthy], axis=0)
    out["sqrt_b2"] = float(np.sqrt(np.mean(r**2)))
    out.update({f"second_moment_error[{i}]": float(v) for i, v in enumerate(r)})
    out.update({f"mean_error[{i}]": float(v) for i, v in enumerate(m)})
    return out


def summarise(rep: Replicates, fixed: dict[str, float]) -> dict:
    """A cell's baseline entry from ``rep`` (``K`` groups) and the fixed-seed run's metrics."""
    per_seed = [metrics(rep, g) for g in range(rep.groups)]
    names = sorted(set().union(*per_seed))
    table = {n: np.array([row.get(n, np.nan) for row in per_seed]) for n in names}
    return {"seeds": rep.groups, "fixed_seed": fixed,
            "mean": {n: float(np.mean(v)) for n, v in table.items()},
            "sd": {n: float(np.std(v, ddof=1)) for n, v in table.items()}}


def path_for(suite_name: str, directory: Path = DIRECTORY) -> Path:
    return Path(directory) / f"{suite_name}.json"


def checked_why(why: str) -> str:
    """``why`` stripped; ValueError if it says nothing."""
    if not why or not why.strip():
        raise ValueError("why must say why the baselines are regenerated (a non-empty sentence)")
    return why.strip()


def write(path: Path, suite_name: str, cells: dict, why: str, command: str) -> Path:
    """Write a baseline document: ``cells`` merged into those already in ``path``, each new entry
    stamped with why it was made, by which command, on which commit and machine, and when."""
    stamp = {"why": checked_why(why), "command": command, "git_commit": provenance.git_commit(),
             "machine": provenance.machine_summary(), "created": provenance.utc_now()}
    kept = load(path)["cells"] if Path(path).exists() else {}
    merged = {**kept, **{name: {**entry, **stamp} for name, entry in cells.items()}}
    document = {"suite": suite_name, **stamp, "cells": dict(sorted(merged.items()))}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n")
    return path


def load(path: Path) -> dict:
    """The baseline document at ``path``; BaselineError naming the file and the fix otherwise."""
    fix = "regenerate it with `sgbench baseline update --why TEXT`"
    if not Path(path).exists():
        raise BaselineError(f"baseline file {path} does not exist; {fix}")
    try:
        document = json.loads(Path(path).read_text())
        cells = document["cells"]
        for name, entry in cells.items():
            if not {"seeds", "mean", "sd", "fixed_seed"} <= set(entry):
                raise ValueError(f"cell {name!r} lacks seeds, mean, sd or fixed_seed")
            if int(entry["seeds"]) < 2:
                raise ValueError(f"cell {name!r} has fewer than 2 seeds")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise BaselineError(f"baseline file {path} is corrupted ({type(error).__name__}: {error}); {fix}") from error
    return document


def compare(cell_name: str, values: dict[str, float], document: dict, alpha: float) -> tuple[CheckResult, list]:
    """(the check, rows of the what-moved table) of one run's metrics against the cell's baseline."""
    import scipy.stats

    from sgbench.reference.checks import CheckResult

    entry = document["cells"].get(cell_name)
    if entry is None:
        raise BaselineError(f"the baseline has no cell {cell_name!r}; regenerate it with "
                            "`sgbench baseline update --why TEXT`")
    k = int(entry["seeds"])
    statistical = [n for n in entry["mean"] if n not in EXACT]
    crit = scipy.stats.t.ppf(1 - alpha / (2 * max(1, len(statistical))), k - 1)
    widen = math.sqrt(1 + 1 / k)
    rows, worst, passed, detectable = [], 0.0, True, {}
    for name in sorted(set(entry["mean"]) | set(values)):
        value, mean = values.get(name, np.nan), entry["mean"].get(name, np.nan)
        sd = entry["sd"].get(name, np.nan)
        fixed = entry["fixed_seed"].get(name, np.nan)
        if name in EXACT:
            ok = value == mean
            z = 0.0 if ok else math.inf
        else:
            z = abs(value - mean) / (sd * widen) if sd > 0 else (0.0 if value == mean else math.inf)
            ok = bool(z <= crit)  # NaN (a metric lost) fails
            detectable[name] = (crit + scipy.stats.norm.ppf(0.9)) * sd * widen
        passed &= bool(ok)
        worst = max(worst, z) if not math.isnan(z) else math.inf
        rows.append({"cell": cell_name, "metric": name, "value": value, "baseline_mean": mean, "baseline_sd": sd,
                     "shift_in_sd": (value - mean) / sd if sd > 0 else np.nan, "fixed_seed_value": fixed,
                     "moved_from_fixed_seed": not (value == fixed or abs(value - fixed) <= 1e-12 * abs(fixed)),
                     "within_tolerance": bool(ok)})
    check = CheckResult(name="baseline", passed=passed, alpha=alpha, statistic=float(worst), threshold=float(crit),
                        estimate=float("nan"), expected=float("nan"), standard_error=float("nan"),
                        detectable=float(max(detectable.values(), default=float("nan"))),
                        details={"seeds": k, "metrics": len(rows)})
    return check, rows
