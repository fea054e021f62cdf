"""What ``sgbench conformance`` writes from its rows (``sgbench.bench.conformance.conformance``):
``conformance.json`` (the machine-readable record: the scale, seed, library versions, every row, and what could not
run) and ``conformance.html`` (per library a table of verdicts, biases with intervals, detectable bias and speed
beside the suite's, and a figure of each adapter's relative variance error against truth with its interval)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from sgbench.bench.conformance.conformance import LIBRARIES, library_version

COLUMNS = {"adapter": "adapter", "claims": "claims", "setting": "setting", "target": "target", "outcome": "outcome",
           "r_reference": "r vs reference", "r_truth": "r vs truth", "detectable": "detects (90 %)",
           "grad_evals_per_s": "grad evals/s", "suite_grad_evals_per_s": "suite grad evals/s",
           "chain_steps_per_s": "chain-steps/s", "suite_chain_steps_per_s": "suite chain-steps/s"}
REASON_COLUMNS = {"adapter": "adapter", "setting": "setting", "target": "target", "outcome": "outcome",
                  "reason": "why"}
LEGEND = {
    "claims": "the suite sampler and form whose discretisation the adapter implements; 'none': held to truth alone",
    "outcome": "PASSED: agrees and resolves r = 0.1; FAILED: a disagreement that is not a discretisation bias; "
               "INCONCLUSIVE: nothing found wrong, but the run could not have found it (the reason says why)",
    "r vs reference": "relative variance error against the claimed suite sampler's run at the translated "
                      "hyperparameters (worst coordinate) [the interval the check accepts at its false-failure rate]",
    "r vs truth": "relative variance error against the target at its temperature (worst coordinate) [interval]",
    "detects (90 %)": "the smallest r the deciding check finds with probability 0.9",
    "grad evals/s": "gradient evaluations per second, all chains together (blackjax and SGMCMCJax: one JAX program; "
                    "posteriors: one torch update of all chains, sgnht one chain at a time)",
    "suite grad evals/s": "the same for the suite's implementation of the method, in the same run",
}


FIGURE_LIMIT = 100.0  # |r| beyond which an interval is named under the figure instead of drawn


def _interval_text(row, name: str) -> str:
    value, low, high = row[name], row[f"{name}_low"], row[f"{name}_high"]
    if value is None or not math.isfinite(value):
        return ""
    number = (lambda x: f"{x:+.3f}") if abs(value) < 1000 else (lambda x: f"{x:+.3g}")  # noqa: E731
    return f"{number(value)} [{number(low)}, {number(high)}]"


def frame(rows: list[dict], columns: dict = COLUMNS) -> pd.DataFrame:
    """The rows as one of the page's tables: intervals written ``r [low, high]``, the ``columns`` (``COLUMNS``: the
    numbers; ``REASON_COLUMNS``: each outcome's reason, in a table of its own so that neither is too wide)."""
    table = pd.DataFrame(rows)
    if not len(table):
        return table
    for name in ("r_reference", "r_truth"):
        table[name] = [_interval_text(row, name) for _, row in table.iterrows()]
    table["setting"] = table["setting"] + " " + table["params"].map(lambda p: json.dumps(p, sort_keys=True))
    return table[[c for c in columns if c in table]].rename(columns=columns)


def figure(rows: list[dict], library: str) -> bytes | None:
    """PNG: per adapter, setting and target, r against truth with its accepted interval (None: no such rows). An
    interval beyond ``FIGURE_LIMIT`` (the few chains left after most diverged) is named under the axis, not drawn: it
    would squeeze every other row into one point."""
    from sgbench.base.figures import png_bytes, subplots

    finite = [row for row in rows if row["r_truth"] is not None and math.isfinite(row["r_truth"])]
    shown = [row for row in finite if max(abs(row["r_truth_low"]), abs(row["r_truth_high"])) <= FIGURE_LIMIT]
    beyond = [f"{row['adapter']} · {row['setting']} · {row['target']} (r {row['r_truth']:.3g})" for row in finite
              if row not in shown]
    if not shown:
        return None
    fig, ax = subplots(figsize=(9, 0.3 * len(shown) + 1.5))
    colours = {"PASSED": "C2", "FAILED": "C3", "INCONCLUSIVE": "0.3"}
    for y, row in enumerate(shown):
        value = row["r_truth"]
        ax.errorbar([value], [y], xerr=[[value - row["r_truth_low"]], [row["r_truth_high"] - value]], fmt="o",
                    ms=4, color=colours.get(row["outcome"], "k"))
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_yticks(range(len(shown)), [f"{r['adapter']} · {r['setting']} · {r['target']}" for r in shown], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("relative variance error r against truth, worst coordinate [accepted interval]\n"
                  "green PASSED, red FAILED, grey INCONCLUSIVE"
                  + "".join(f"\nnot drawn, beyond ±{FIGURE_LIMIT:g}: {text}" for text in beyond), fontsize=8)
    ax.set_title(f"{library}: draws against truth")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return png_bytes(fig)


def _finite(value):
    """NaN as None (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def write(rows: list[dict], not_run: dict[str, str], scale: str, seed: int, out: Path) -> tuple[Path, Path]:
    """Write ``conformance.json`` and ``conformance.html`` in ``out``.

    Args:
        rows: every row of the run (``sgbench.bench.conformance.conformance.conformance``).
        not_run: per library that could not run, why.
        scale: the scale's name.
        seed: the runs' seed.
        out: the folder.

    Returns:
        (the JSON path, the page's path).
    """
    from sgbench.bench.html import image, render_page, table

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    versions = {library: library_version(library) for library in LIBRARIES}
    record = {"scale": scale, "seed": seed, "versions": versions, "not_run": not_run,
              "rows": [_finite(row) for row in rows]}
    json_path = out / "conformance.json"
    json_path.write_text(json.dumps(record, indent=1, sort_keys=True))
    counts = pd.Series([row["outcome"] for row in rows]).value_counts()
    headline = (f"{len(rows)} adapter settings and targets: " +
                ", ".join(f"{counts.get(o, 0)} {o}" for o in ("PASSED", "FAILED", "INCONCLUSIVE")))
    sections = []
    for library in LIBRARIES:
        of = [row for row in rows if row["library"] == library]
        heading = f"{library} {versions[library]}"
        if library in not_run:
            sections.append((heading, f"not run: {not_run[library]}"))
            continue
        sections.append((heading, table(frame(of), legend=LEGEND)))
        sections.append((f"{library}: why each outcome", table(frame(of, REASON_COLUMNS))))
        png = figure(of, library)
        if png is not None:
            sections.append((f"{library}: against truth", image(png, f"{library} against truth")))
    return json_path, render_page(out / "conformance.html", "Conformance of the public SG-MCMC libraries", sections,
                                  headline=headline, passed=None,
                                  intro=f"scale {scale}, seed {seed}; findings explained in the docs, "
                                        "'Known defects' pages; record: conformance.json")
