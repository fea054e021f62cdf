"""Lines of runs and the best step size of each: the headline and the best-per-line table."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from sgbench.bench.sweeps.report.settings import line_keys, line_labels, sorted_runs, without_absent_settings
from sgbench.bench.sweeps.report.values import B2, B2_STD, STEP_SIZE, is_missing, metric, number_text

STD_MEANING = "± 1 bootstrap std over chains"


@dataclasses.dataclass
class Line:
    """One line of runs and its best run (None if no run has a b²)."""

    label: str
    sampler_label: str
    target: str
    runs: pd.DataFrame
    best: pd.Series | None

    @property
    def step_sizes(self) -> list[float]:
        return sorted(self.runs[STEP_SIZE].astype(float).unique()) if STEP_SIZE in self.runs else []

    @property
    def edge(self) -> str:
        """"smallest" or "largest" when the best step size is at that end of the grid, else ""."""
        sizes = self.step_sizes
        if self.best is None or len(sizes) < 2 or STEP_SIZE not in self.best:
            return ""
        h = float(self.best[STEP_SIZE])
        return "smallest" if h == sizes[0] else "largest" if h == sizes[-1] else ""

    @property
    def why_none(self) -> str:
        """Why the line has no b²: no truth for its target, or every chain diverged."""
        alive = self.runs["num_diverged_chains"] < self.runs["num_chains"]
        return "every chain diverged" if not alive.any() else "no known truth for the target"


def lines_of_runs(frame: pd.DataFrame) -> list[Line]:
    """The lines of runs of ``frame`` (sorted, without absent settings), each with its best run: the
    lowest b² among runs with a b², preferring those where no chain diverged."""
    frame = sorted_runs(without_absent_settings(frame))
    keys = line_keys(frame)
    sampler, target = line_labels(frame)
    named_target = target.nunique() > 1 or keys.nunique() == 1  # the label names the target
    lines = []
    for key in dict.fromkeys(keys):
        runs = frame[keys == key]
        ok = runs[np.isfinite(metric(runs, B2))]
        best = None
        if len(ok):
            order = np.lexsort((metric(ok, B2).to_numpy(), (ok["num_diverged_chains"] > 0).to_numpy()))
            best = ok.iloc[order[0]]
        first = runs.index[0]
        label = f"{sampler[first]} on {target[first]}" if named_target else sampler[first]
        lines.append(Line(label, sampler[first], target[first], runs, best))
    return lines


def _b2_text(run) -> str:
    """A run's "0.049 ± 0.018", "0.39 ± n/a (one chain)" (no spread over one chain), or "0.049" (no std stored)."""
    value, std = run[B2], run.get(B2_STD, math.nan)
    if run["num_chains"] < 2:
        return f"{value:.3g} ± n/a (one chain)"
    return f"{value:.3g}" + (f" ± {std:.2g}" if math.isfinite(std) else "")


def _result(line: Line, meaning: bool = False, brief: bool = False) -> str:
    """"h = 0.001, b² = 0.049 ± 0.018" of the line's best run (with what ± means if ``meaning``), its
    diverged chains if any, and whether it is at the edge of the grid (in a few words if ``brief``)."""
    best = line.best
    text = f"h = {number_text(best.get(STEP_SIZE, math.nan))}, b² = {_b2_text(best)}"
    text += f" ({STD_MEANING})" if meaning else ""
    if best["num_diverged_chains"] > 0:
        text += f", {best['num_diverged_chains']:.0f}/{best['num_chains']} chains diverged"
    if line.edge and brief:
        text += f", the {line.edge} step size run"
    elif line.edge:
        text += f"; the {line.edge} step size run: a {'smaller' if line.edge == 'smallest' else 'larger'} one " \
                "may do better"
    return text


def _ties(line: Line) -> str:
    """The step sizes of ``line`` whose b² is within 1 std (combined) of the best's, as a clause."""
    best, runs = line.best, line.runs
    b2, std = metric(runs, B2), metric(runs, B2_STD).fillna(0)
    close = (runs.index != best.name) & np.isfinite(b2) & (
        b2 - best[B2] <= np.hypot(std, 0 if is_missing(best.get(B2_STD)) else best[B2_STD]))
    if not close.any():
        return ""
    tied = [f"h = {number_text(h)} (b² = {v:.3g})" for h, v in zip(runs.loc[close, STEP_SIZE], b2[close])][:3]
    return f"; within 1 std of it: {', '.join(tied)}"


def headline(frame: pd.DataFrame) -> list[str]:
    """The report's headline sentences: per target, the best step size of its line of runs (its b²
    ± 1 bootstrap std over chains), or the line of lowest b² when there are several; in words when
    no run has a b²."""
    lines = lines_of_runs(frame)
    if not lines:
        return []
    if len(lines) == 1:
        (line,) = lines
        if line.best is None:
            return [f"No b² for {line.label}: {line.why_none}."]
        what = "Best step size" if len(line.step_sizes) > 1 else "One step size"
        return [f"{what}: {line.label}, {_result(line, meaning=True)}{_ties(line)}."]
    sentences, meaning = [], True
    for target in dict.fromkeys(line.target for line in lines):
        on_target = [line for line in lines if line.target == target]
        measured = [line for line in on_target if line.best is not None]
        if not measured:
            sentences.append(f"No b² on {target}: {' or '.join(sorted({line.why_none for line in on_target}))}.")
            continue
        best = min(measured, key=lambda line: (line.best["num_diverged_chains"] > 0, line.best[B2]))
        lead = f"Lowest b² on {target}: {best.sampler_label} at" if len(on_target) > 1 else \
            f"Best step size for {best.sampler_label} on {target}:"
        sentences.append(f"{lead} {_result(best, meaning, brief=len(lines) > 2)}.")
        meaning = False
    return sentences


def best_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per line of runs, lowest b² first: its best step size, that b² ± 1 bootstrap std,
    the step sizes run and a note (edge of the grid, no truth, every chain diverged)."""
    rows = []
    for line in sorted(lines_of_runs(frame), key=lambda line: math.inf if line.best is None else line.best[B2]):
        sizes, best = line.step_sizes, line.best
        rows.append({
            "line": line.label,
            "best step size": "—" if best is None else number_text(best.get(STEP_SIZE, math.nan)),
            "b² (± 1 bootstrap std)": "—" if best is None else _b2_text(best),
            "diverged": "—" if best is None else f"{best['num_diverged_chains']:.0f}/{best['num_chains']}",
            "step sizes run": f"{len(sizes)}: {number_text(sizes[0])} to {number_text(sizes[-1])}" if len(sizes) > 1
            else "".join(map(number_text, sizes)),
            "note": line.why_none if best is None else f"{line.edge} step size run" if line.edge else "",
        })
    return pd.DataFrame(rows)
