"""The table of runs: as formatted strings for the page, and as plain text for a terminal (at most
120 columns)."""

from __future__ import annotations

import math
import textwrap

import pandas as pd

from sgbench.bench.sweeps.report.best import headline, lines_of_runs
from sgbench.bench.sweeps.report.settings import (
    group_settings,
    name_with_settings,
    sampler_settings,
    shared_settings,
    sorted_runs,
    target_settings,
    without_absent_settings,
)
from sgbench.bench.sweeps.report.values import B2, B2_STD, STEP_SIZE, THRESHOLD, metric, number_text

TERMINAL_WIDTH = 120


def _b2_cells(frame: pd.DataFrame) -> list[str]:
    """Per run, "b² ± std", "b² ± n/a (one chain)" when no spread over chains can be had, "diverged" when every
    chain diverged, or "—" when it has no b²."""
    b2, std, diverged = metric(frame, B2), metric(frame, B2_STD), metric(frame, "num_diverged_chains")
    return ["diverged" if not math.isfinite(v) and d >= n else
            "—" if not math.isfinite(v) else
            f"{number_text(v, '.2e')} ± {number_text(s, '.1e') if n >= 2 else 'n/a (one chain)'}"
            for v, s, d, n in zip(b2, std, diverged, frame["num_chains"])]


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of ``frame`` as a table of formatted strings, one row per run: the target, chains and
    steps only when they vary (a single run's too: the page's opening line, :func:`run_summary`, and
    :func:`shared_settings` say them), settings only where they vary among runs of one target name or
    one sampler (the others are in :func:`shared_settings` and :func:`group_settings`), metric columns
    only where some run has them.

    Args:
        frame: runs as ``ResultsStore.to_frame`` makes them.

    Returns:
        One row per run, sorted by line of runs then step size; every cell a string.
    """
    frame = sorted_runs(without_absent_settings(frame))
    diverged = metric(frame, "num_diverged_chains")
    metrics = {
        "b² mean (chain avg ± boot. std)": _b2_cells(frame),
        "b² mean pooled": metric(frame, "b2_mean_pooled").map(lambda v: number_text(v, ".2e")),
        "b² max (chain avg)": metric(frame, "b2_max_chain_average").map(lambda v: number_text(v, ".2e")),
        **({"grad evals to b² < 0.01": metric(frame, THRESHOLD).map(lambda v: "not reached" if v == math.inf
                                                                      else number_text(v, ".3g"))}
           if THRESHOLD in frame else {}),
    }
    columns = {
        "sampler": frame["sampler"],
        "target": name_with_settings(frame["target"], target_settings(frame)),
        "setting": sampler_settings(frame),
        "step size": frame[STEP_SIZE].map(number_text) if STEP_SIZE in frame else "—",
        "chains": frame["num_chains"].map(number_text),
        "steps": frame["num_steps"].map(number_text),
        **{name: values for name, values in metrics.items()
           if any(text not in ("—", "diverged") for text in values)},
        "diverged": [f"{number_text(d, '.0f')}/{n}" for d, n in zip(diverged, frame["num_chains"])],
        "grad evals": frame["grad_evals"].map(number_text),
        "wall s": frame["wall_seconds"].map(lambda v: number_text(v, ".2f")),
        "chain-steps/s": frame["chain_steps_per_second"].map(lambda v: number_text(v, ".3g")),
    }
    shown = pd.DataFrame({name: list(values) if not isinstance(values, str) else values
                          for name, values in columns.items()})
    constant = [c for c in ("target", "chains", "steps") if shown[c].nunique() == 1]
    return shown.drop(columns=constant + ([] if shown["setting"].astype(bool).any() else ["setting"]))


def no_truth_note(frame: pd.DataFrame) -> str:
    """A sentence naming the targets of ``frame`` whose runs have no b² although some chain did not
    diverge (the target has no known truth at these parameters), or "" when there are none."""
    alive = frame["num_diverged_chains"] < frame["num_chains"]
    missing = alive & (frame[B2].isna() if B2 in frame else True)
    names = sorted(frame.loc[missing, "target"].unique())
    if not names:
        return ""
    return (f"no known truth for target {', '.join(names)} at these parameters (no analytic moments and no stored "
            "NUTS reference; `sgbench reference build TARGET` makes one), so b² and the other metrics against "
            "truth are not computed (—)")


def _text_table(columns: dict[str, list[str]], left=()) -> list[str]:
    """Rows of a plain-text table: columns two spaces apart, ``left`` ones left-aligned."""
    widths = {name: max(len(name), *map(len, values)) for name, values in columns.items()}

    def row(cells):
        return "  ".join(cell.ljust(widths[name]) if name in left else cell.rjust(widths[name])
                         for name, cell in zip(columns, cells)).rstrip()

    return [row(columns), *(row(cells) for cells in zip(*columns.values()))]


def _wrap(text: str) -> str:
    return textwrap.fill(text, TERMINAL_WIDTH, subsequent_indent="    ")


def format_table(frame: pd.DataFrame) -> str:
    """The headline, the settings and the table of runs as plain text for a terminal (at most 120
    columns: long settings move to a key under the table), and why metrics are missing. Target,
    setting, chains and steps are columns only when they vary; a constant one is in the headline or
    the settings shared by all runs.

    Args:
        frame: runs as ``ResultsStore.to_frame`` makes them.

    Returns:
        The lines joined by newlines, or "(no runs)" for an empty ``frame``.
    """
    if frame.empty:
        return "(no runs)"
    frame = sorted_runs(without_absent_settings(frame))
    best = {line.best.name for line in lines_of_runs(frame) if line.best is not None}
    setting = [", ".join(part for part in parts if part)
               for parts in zip(target_settings(frame), sampler_settings(frame))]
    diverged = metric(frame, "num_diverged_chains")
    columns = {
        "sampler": list(frame["sampler"]),
        "target": list(frame["target"]),
        "setting": setting,
        "chains": list(frame["num_chains"].map(number_text)),
        "steps": list(frame["num_steps"].map(number_text)),
        "step size": [number_text(h) + ("*" if i in best else " ") for h, i in zip(frame[STEP_SIZE], frame.index)]
        if STEP_SIZE in frame else ["—"] * len(frame),
        "b² ± boot. std": _b2_cells(frame),
        "diverged": [f"{d:.0f}/{n}" for d, n in zip(diverged, frame["num_chains"])],
        "grad evals": list(frame["grad_evals"].map(number_text)),
        "wall s": list(frame["wall_seconds"].map(lambda v: number_text(v, ".2f"))),
    }
    for name in ("target", "setting", "chains", "steps"):
        if len(set(columns[name])) == 1:
            del columns[name]
    left = ("sampler", "target", "setting")
    key = []
    if "setting" in columns and max(map(len, _text_table(columns, left))) > TERMINAL_WIDTH:
        texts = [s for s in dict.fromkeys(columns["setting"]) if s]
        columns["setting"] = [f"[{texts.index(s) + 1}]" if s else "" for s in columns["setting"]]
        key = [_wrap(f"[{i}] {s}") for i, s in enumerate(texts, 1)]
    lines = [_wrap(s) for s in headline(frame)]
    lines.append(_wrap(f"settings shared by all runs: {shared_settings(frame)}"))
    lines += [_wrap(f"settings of {group}: {text}") for group, text in group_settings(frame).items()]
    lines += _text_table(columns, left)
    lines += key
    if best:
        lines.append("* lowest b² of its line (sampler, target and settings)")
    note = no_truth_note(frame)
    if note:
        lines.append(textwrap.fill(note, 100))
    return "\n".join(lines)
