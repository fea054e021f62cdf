r"""``sgbench validate ... --reseed N``: the same validation with N seeds, to measure how often it ends in each
outcome. On a sampler known to be correct, the share of FAILED is the empirical false-failure rate, stated with
its one-sided 95 % Clopper-Pearson upper bound (``sgbench.reference.checks.rates``); validate's design bounds it by
``ALPHA_RUN`` = 1e-3.

Each run is a line of a JSON-lines record (the seed, the settings' key, the outcome and each target's outcome
and reason, the seconds), written as it finishes; a record holding runs of the same settings is resumed, so an
interrupted measurement keeps every finished run and repeats none.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pandas as pd

from sgbench.bench.running.progress_event import Counted
from sgbench.reference.checks import rate_upper_bound


def settings_key(settings: dict) -> str:
    """The first 12 hex digits of the sha256 of ``settings`` as canonical JSON (what makes runs comparable)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]


def finished(record: Path, key: str) -> dict:
    """The runs of ``record`` with settings ``key``, by seed (a missing file: none)."""
    if not Path(record).exists():
        return {}
    runs = {}
    for line in Path(record).read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("settings") == key:
                runs[row["seed"]] = row
    return runs


def reseed(run, settings: dict, seeds, record: Path, progress=print) -> pd.DataFrame:
    """Run ``run(seed) -> Verdict`` for every seed of ``seeds`` not yet in ``record`` (under ``settings``).

    Args:
        run: makes one validation with a seed.
        settings: what the runs share (recorded by its key).
        seeds: the seeds.
        record: the JSON-lines record, appended to.
        progress: called with a line per run.

    Returns:
        one row per seed (``seed``, ``outcome``, ``outcomes`` per target, ``reasons``, ``seconds``).
    """
    key = settings_key(settings)
    done = finished(record, key)
    record = Path(record)
    record.parent.mkdir(parents=True, exist_ok=True)
    for k, seed in enumerate(seeds):
        if seed in done:
            continue
        started = time.perf_counter()
        verdict = run(seed)
        row = {"settings": key, "seed": seed, "outcome": verdict.outcome.name,
               "outcomes": {t: o.name for t, o in verdict.outcomes.items()}, "reasons": verdict.reasons,
               "seconds": round(time.perf_counter() - started, 2), "command_settings": settings}
        with record.open("a") as file:
            file.write(json.dumps(row, default=str) + "\n")
        done[seed] = row
        progress(Counted(k + 1, len(seeds), f"seed {seed}: {row['outcome']} ({row['seconds']:.0f} s)"))
    return pd.DataFrame([done[s] for s in seeds])


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per outcome: how many runs, the share, and its one-sided 95 % Clopper-Pearson upper bound."""
    n = len(runs)
    rows = []
    for outcome in ("PASSED", "FAILED", "INCONCLUSIVE"):
        count = int((runs["outcome"] == outcome).sum()) if n else 0
        rows.append({"outcome": outcome, "runs": count, "of": n, "share": count / n if n else float("nan"),
                     "upper_95": rate_upper_bound(count, n) if n else float("nan")})
    return pd.DataFrame(rows)
