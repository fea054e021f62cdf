"""The page of ``sgbench tune``: the winner, the halving tree, the discrepancy curves and every round's
arms (tables and matplotlib figures, drawn with :mod:`sgbench.base.figures`, through
:func:`sgbench.bench.html.render_page`)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sgbench.base.figures import png_bytes, subplots
from sgbench.bench.html import image, render_page, table

METRIC_NAMES = {"ksd": "KSD", "fssd": "FSSD"}


def _finite_positive_limits(values) -> tuple[float, float] | None:
    good = [v for v in values if math.isfinite(v) and v > 0]
    return (min(good) / 1.5, max(good) * 1.5) if good else None


def halving_figure(tuning) -> bytes:
    """PNG, two panels: left, the halving tree (each arm's discrepancy per round, lines joining the rounds
    it survived, pruned arms' last point hollow, diverged arms on the top edge, the winner in red); right,
    each arm's discrepancy against the budget it has spent so far."""
    from matplotlib.ticker import NullFormatter

    metric = METRIC_NAMES[tuning.metric]
    by_arm: dict[int, list] = {}
    for record in tuning.records:
        by_arm.setdefault(record.arm, []).append(record)
    limits = _finite_positive_limits([r.discrepancy for r in tuning.records])
    top = limits[1] if limits else 1.0
    fig, (tree, curves) = subplots(1, 2, figsize=(12, 4.8))
    num_rounds = 1 + max(r.round for r in tuning.records)
    for arm, records in by_arm.items():
        rounds = [r.round for r in records]
        values = [r.discrepancy if math.isfinite(r.discrepancy) else top for r in records]
        spent = np.cumsum([r.charged for r in records])
        winner = arm == tuning.winner
        style = dict(color="C3", lw=2, zorder=3) if winner else dict(color="0.45", lw=0.8, alpha=0.8)
        tree.plot(rounds, values, "-", **style)
        curves.plot(spent, values, "-o", ms=3, **style)
        survived = records[-1].round == num_rounds - 1
        tree.plot(rounds[-1:], values[-1:], "o", mfc=style["color"] if survived else "white",
                  mec=style["color"], ms=6 if winner else 4, zorder=4)
    for ax in (tree, curves):
        if limits:
            ax.set_yscale("log")
            ax.set_ylim(*limits)
        ax.set_ylabel(f"{metric} (lower is better)")
        ax.grid(True, alpha=0.3)
    tree.set_xticks(range(num_rounds))
    tree.set_xlabel("round (hollow: pruned after it; red: the winner)")
    tree.set_title(f"halving tree, {len(by_arm)} arms, eta = {tuning.eta}" if tuning.eta else "one round")
    curves.set_xscale("log")
    curves.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short ranges
    curves.set_xlabel(f"budget spent by the arm ({tuning.budget.unit})")
    curves.set_title(f"{metric} against budget")
    fig.tight_layout()
    return png_bytes(fig)


def rounds_table(tuning) -> pd.DataFrame:
    """Every arm in every round, best first within a round, with whether it was kept."""
    kept = set()
    if tuning.halving is not None:
        kept = {(r.index, arm) for r in tuning.halving.rounds for arm in r.kept}
    frame = tuning.table()
    frame.insert(1, "kept", [("yes" if (r.round, r.arm) in kept else "") for r in tuning.records])
    metric = tuning.metric
    return frame.sort_values(["round", metric], kind="stable").reset_index(drop=True)


def winner_line(tuning) -> str:
    """One line: the method's chosen hyperparameters and its discrepancy."""
    last = [r for r in tuning.records if r.arm == tuning.winner][-1]
    return (f"{tuning.method}: {tuning.winner_arm.label}, {METRIC_NAMES[tuning.metric]} {last.discrepancy:.4g} "
            f"after {last.steps:,} steps; {tuning.spent:,.6g} of {tuning.budget.total:,.6g} {tuning.budget.unit} spent")


def write_page(path: Path, tunings: list, command: str = "") -> Path:
    """Write the page of one tuning (the first of ``tunings``) and its baselines (the others)."""
    main = tunings[0]
    sections = []
    if len(tunings) > 1:
        from sgbench.bench.tune.mamba import summary

        sections.append(("Methods compared", table(pd.DataFrame([summary(t) for t in tunings]))))
    for tuning in tunings:
        sections.append((f"{tuning.method}: halving tree and discrepancy curves",
                         image(halving_figure(tuning), f"halving tree of {tuning.method}")))
        sections.append((f"{tuning.method}: every arm of every round", table(rounds_table(tuning))))
    settings = ", ".join(f"{k}={v}" for k, v in main.target_params.items()
                         if k != "noise_batch_size" and v is not None)
    intro = (f"{main.sampler} on {main.target} ({settings}); {len(main.arms)} arms; budget {main.budget.total:g} "
             f"{main.budget.unit}; reward -{METRIC_NAMES[main.metric]}" + (f"; command: {command}" if command else ""))
    return render_page(path, f"MAMBA tuning: {main.sampler} on {main.target}", sections,
                       headline=winner_line(main), intro=intro)
