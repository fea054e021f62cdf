r"""``sgbench gate --power``: the share of planted bugs (:mod:`sgbench.bench.gate.planted`) each layer catches.

Layers:

- ``gate``: the quick gate alone, as CI runs it (fixed seed 0, truth and baseline checks at the
  suite's per-check rate): each bug is planted and every cell it acts on is run and checked; a bug
  is caught when any check of any cell fails.
- ``tests``: the fast tests that exercise the code the bug changes (the bug's ``tests``: the
  equivalence tests, the exact-law tests ...), run by pytest in a subprocess with the bug planted
  by :mod:`sgbench.bench.gate.planted_plugin`; caught when a test fails.

A bug has an *effect* when at least one cell it acts on can change its law (``PlantedBug.vanishes``
gives no reason); the figure of merit is the share of bugs with an effect that the gate alone
catches (aim: ``POWER_AIM``). For a miss, the report says why: the reasons the cells cannot see it,
or, where a cell's law does change, how close its checks came (the largest statistic over its
threshold). The gate's false-failure budget is the gate's own (``sgbench gate --reseed``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd

from sgbench.bench.gate import design_bias
from sgbench.bench.gate.cells import suite
from sgbench.bench.gate.planted import BUGS, ENVIRONMENT_VARIABLE, PlantedBug
from sgbench.bench.gate.runner import check_group, references, run_cell
from sgbench.bench.running.progress_event import Counted

POWER_AIM = 0.95
TEST_TIMEOUT_SECONDS = 900


def gate_layer(bug: PlantedBug, suite_name: str = "quick", seed: int = 0, progress=print) -> dict:
    """Plant ``bug``, run the cells of ``suite_name`` it can change, check them as the gate does.

    Returns:
        a row: cells run, cells with an effect, whether caught, the failed (cell, check) pairs,
        the closest approach (largest statistic / threshold) and the reasons where it vanishes.
    """
    document, base, alpha = references(suite_name, None, True)
    cells = [c for c in suite(suite_name) if bug.acts_on(c)]
    reasons = {c.name: bug.vanishes(c) for c in cells}
    affected = [c for c in cells if not reasons[c.name]]
    designs = {c.name: design_bias.of_cell(c, document) for c in affected}
    failed, closest = [], (0.0, "")
    with bug.planted():
        for cell in affected:
            rows, _, _ = check_group(run_cell(cell, seed=seed), 0, designs[cell.name], base, alpha)
            failed += [f"{cell.name}:{r['name']}" for r in rows if not r["passed"]]
            for r in rows:  # the statistical checks (``finite`` and ``moves`` are deterministic: rate 0)
                ratio = abs(r["statistic"]) / r["threshold"] if r["threshold"] and r["alpha"] > 0 else 0.0
                if np.isfinite(ratio) and ratio > closest[0]:
                    closest = (float(ratio), f"{cell.name}:{r['name']}")
    progress(f"{bug.name}: {len(affected)} of {len(cells)} cells with an effect; gate "
             f"{'caught it' if failed else 'missed it'}")
    return {"bug": bug.name, "what": bug.what, "cells_run": len(affected),
            "has_effect": bool(affected), "gate": bool(failed), "gate_failures": ", ".join(failed[:4])
            + (f" (+{len(failed) - 4})" if len(failed) > 4 else ""), "closest": closest,
            "vanishes": sorted({r for r in reasons.values() if r})}


def tests_layer(bug: PlantedBug) -> tuple[str, str]:
    """Run ``bug.tests`` with the bug planted: (outcome, detail), outcome one of ``caught``,
    ``missed``, ``no tests`` or ``error``."""
    if not bug.tests:
        return "no tests", ""
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "sgbench.bench.gate.planted_plugin", "-p",
               "no:cacheprovider", "-m", "not statistical", "--no-header", "-rf", *bug.tests]  # -n 0: one process
    try:
        done = subprocess.run(command, env={**os.environ, ENVIRONMENT_VARIABLE: bug.name}, capture_output=True,
                              text=True, timeout=TEST_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return "error", f"timed out after {TEST_TIMEOUT_SECONDS} s"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    last = lines[-1] if lines else done.stderr.strip()[-200:]
    if done.returncode == 1:
        first = next((line for line in lines if line.startswith("FAILED")), last)
        return "caught", first.removeprefix("FAILED ")[:160]
    return {0: "missed", 5: "no tests"}.get(done.returncode, "error"), last[:160]


def _why_missed(row: dict) -> str:
    if not row["has_effect"]:
        return "no cell can see it: " + "; ".join(row["vanishes"])
    ratio, where = row["closest"]
    return (f"its effect is below what the cells detect (closest: {where} at {ratio:.2f} of its threshold)"
            + (f"; elsewhere: {'; '.join(row['vanishes'])}" if row["vanishes"] else ""))


def measure_power(names=None, suite_name: str = "quick", with_tests: bool = True, progress=print) -> pd.DataFrame:
    """Every planted bug (or those in ``names``) through the gate and, with ``with_tests``, the fast
    tests: one row per bug (see the module docstring)."""
    bugs = BUGS if not names else tuple(b for b in BUGS if b.name in set(names))
    unknown = sorted(set(names or ()) - {b.name for b in BUGS})
    if unknown:
        raise ValueError(f"unknown planted bugs {unknown}; known: {', '.join(b.name for b in BUGS)}")
    rows = []
    for k, bug in enumerate(bugs):
        started = time.perf_counter()
        row = gate_layer(bug, suite_name, progress=progress)
        row["tests"], row["tests_detail"] = tests_layer(bug) if with_tests else ("not run", "")
        row["why_missed"] = "" if row["gate"] else _why_missed(row)
        row["seconds"] = round(time.perf_counter() - started, 1)
        progress(Counted(k + 1, len(bugs), f"{bug.name}: gate {'caught' if row['gate'] else 'missed'}, "
                 f"tests {row['tests']} ({row['seconds']} s)"))
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["closest"] = [f"{r:.2f} ({w})" if w else "" for r, w in frame["closest"]]
    frame["vanishes"] = ["; ".join(v) for v in frame["vanishes"]]
    return frame


def gate_share(frame: pd.DataFrame) -> tuple[int, int]:
    """(bugs with an effect the gate caught, bugs with an effect)."""
    effect = frame[frame["has_effect"]]
    return int(effect["gate"].sum()), len(effect)
