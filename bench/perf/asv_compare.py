"""Speed changes between two commits in asv's results, benchmark by benchmark, for the nightly summary.

A benchmark (with its parameters) is *slower* at the later commit when its time is more than ``factor`` times
the earlier one and the two 99 % confidence intervals asv stores do not overlap (asv's own rule in
``asv compare``); *faster* the other way round. A run without statistics (``asv run --quick``: one sample, an
infinite interval) is judged by the factor alone. Only benchmarks measured at both commits on the same machine
are compared; a failed measurement (no value) is listed as ``failed`` when it had a value before.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pandas as pd

COLUMNS = ["benchmark", "params", "before", "after", "ratio", "change"]


def _values(results_dir: Path, machine: str, commit: str) -> dict:
    """``(benchmark, params) -> (value, ci_low, ci_high)`` of every result file of ``commit`` on ``machine``."""
    out = {}
    for path in sorted((Path(results_dir) / machine).glob(f"{commit[:8]}-*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        if not document.get("commit_hash", "").startswith(commit):
            continue
        columns = document["result_columns"]
        for name, row in document["results"].items():
            entry = dict(zip(columns, row))
            values = entry.get("result") or []
            combos = list(itertools.product(*entry.get("params") or [[]])) or [()]
            low = entry.get("stats_ci_99_a") or [None] * len(values)
            high = entry.get("stats_ci_99_b") or [None] * len(values)
            for combo, value, a, b in zip(combos, values, low, high):
                out[name, ", ".join(combo)] = (value, a, b)
    return out


def _finite(x) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def changes(results_dir, machine: str, before: str, after: str, factor: float = 1.5) -> pd.DataFrame:
    """Every benchmark measured at both commits, with its change.

    Args:
        results_dir: an asv results folder.
        machine: the asv machine name.
        before: the earlier commit (full hash or a prefix of at least 8 characters).
        after: the later commit.
        factor: the ratio beyond which a change counts (> 1).

    Returns:
        one row per benchmark and parameter combination: ``benchmark``, ``params``, ``before`` and ``after``
        (seconds, or bytes for peak memory), ``ratio`` (after / before) and ``change``: "slower", "faster",
        "failed" (no value after, one before), or "same".
    """
    if not factor > 1:
        raise ValueError(f"factor must be a number > 1, got {factor}")
    old, new = _values(results_dir, machine, before), _values(results_dir, machine, after)
    rows = []
    for key in sorted(old.keys() & new.keys()):
        (a, a_low, a_high), (b, b_low, b_high) = old[key], new[key]
        if not _finite(a):
            continue
        if not _finite(b):
            rows.append([*key, a, math.nan, math.nan, "failed"])
            continue
        ratio = b / a if a > 0 else math.inf
        apart_up = not (_finite(a_high) and _finite(b_low)) or b_low > a_high
        apart_down = not (_finite(b_high) and _finite(a_low)) or b_high < a_low
        change = ("slower" if ratio > factor and apart_up else
                  "faster" if ratio < 1 / factor and apart_down else "same")
        rows.append([*key, a, b, ratio, change])
    return pd.DataFrame(rows, columns=COLUMNS)
