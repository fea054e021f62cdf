"""Reports of a results store: a terminal table and a self-contained HTML page.

The page holds the table of runs, a log-log plot of b^2 against step size (embedded PNG, one
line per sampler and target setting, bootstrap error bars, diverged points marked), a note on
how to read them, and the provenance of the runs (git commit, machine, library versions, dates).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from markupsafe import Markup, escape

from bench.html import image, render_page, table
from bench.running.config import RunConfig
from bench.sweeps.store import ResultsStore

B2 = "b2_mean_chain_average"
B2_STD = "b2_mean_chain_average_bootstrap_std"
STEP_SIZE = "param_step_size"
THRESHOLD = "grad_evals_to_b2_below_0.01"
_CONFIG_COLUMNS = [f.name for f in dataclasses.fields(RunConfig) if f.name != "seed"]

HOW_TO_READ = """\
<p><b>b&sup2;</b> is the second-moment bias of Hoffman &amp; Sountsov (2022): for dimension
<i>i</i>, b&sup2;<sub>i</sub> = (&Ecirc;[x<sub>i</sub>&sup2;] &minus; E[x<sub>i</sub>&sup2;])&sup2;
/ Var[x<sub>i</sub>&sup2;], where &Ecirc; is a chain's estimate and E, Var are the target's truth.
&ldquo;b&sup2; mean&rdquo; averages it over dimensions, &ldquo;b&sup2; max&rdquo; takes the worst
dimension. Exact independent sampling of <i>n</i> draws gives b&sup2; &asymp; 1/<i>n</i> (the dotted
line), so a correct sampler sits near &tau;<sub>int</sub>/<i>n</i> plus the squared bias of its
discretisation: small step sizes mix slowly, large ones are biased, and beyond the stability limit
chains diverge.</p>
<p>&ldquo;Chain average&rdquo; is the mean over chains of each chain's b&sup2;; &ldquo;pooled&rdquo;
is b&sup2; of the chains' averaged second moments. The &plusmn; values and error bars are the
standard deviation of the chain average under a bootstrap over chains (1000 resamples), as in
appendix C of the SMILE paper. Diverged chains (a non-finite position) are left out of b&sup2; and
counted; a point where every chain diverged has no b&sup2; and is drawn as &times; at the top of the
plot. Wall seconds of a grid point are its share of the one compiled call that ran its grid
(compilation included); chain-steps/s leaves compilation out.</p>
"""

def _varying(frame: pd.DataFrame, columns) -> list[str]:
    """The ``columns`` of ``frame`` that take more than one value."""
    return [c for c in columns if c in frame and frame[c].map(str).nunique() > 1]


def _settings(frame: pd.DataFrame, columns) -> pd.Series:
    """Per row, "name=value" of the varying ``columns`` (prefixes stripped), comma-separated."""
    varying = _varying(frame, columns)
    return frame[varying].apply(
        lambda row: ", ".join(f"{_short(c)}={_number(row[c])}" for c in varying), axis=1
    ) if varying else pd.Series("", index=frame.index)


def shared_settings(frame: pd.DataFrame) -> str:
    """"name=value" of the run settings (target and sampler params, RunConfig fields, seed) that
    all rows of ``frame`` share, comma-separated."""
    if frame.empty:
        return ""
    columns = _line_columns(frame)
    varying = set(_varying(frame, columns))
    shared = [c for c in columns if c in frame and c not in varying and c not in ("sampler", "target")]
    first = frame.iloc[0]
    return ", ".join(f"{_short(c)}={_number(first[c])}" for c in shared)


def _short(column: str) -> str:
    return column.split("_", 1)[1] if column.startswith(("param_", "target_")) else column


def _number(value, spec: str = ".3g") -> str:
    if isinstance(value, dict) and "kind" in value:  # a step-size schedule
        fields = ", ".join(f"{k}={_number(v)}" for k, v in value.items() if k != "kind")
        return f"{value['kind']}({fields})"
    if isinstance(value, list):  # a vector hyperparameter (a control-variate centre)
        return f"[{len(value)} values]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return "—" if not math.isfinite(value) else format(value, spec)


def _target_columns(frame):
    return [c for c in frame.columns if c.startswith("target_") and c != "target_params"]


def _line_columns(frame):
    """Columns that identify one line of the plot: everything of a run but its step size."""
    params = [c for c in frame.columns if c.startswith("param_") and c != STEP_SIZE]
    return ["sampler", "target", *_target_columns(frame), *params,
            *[c for c in _CONFIG_COLUMNS if c in frame], "seed"]


def _metric(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name].astype(float) if name in frame else pd.Series(np.nan, index=frame.index)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in _line_columns(frame) + [STEP_SIZE] if c in frame]
    return frame.sort_values(keys, kind="stable", key=lambda s: s.map(str) if s.dtype == object else s)


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of ``frame`` as a table of formatted strings, one row per run."""
    frame = _sorted(frame)
    target = frame["target"] + _settings(frame, _target_columns(frame)).map(lambda s: f"({s})" if s else "")
    other = _settings(frame, [c for c in _line_columns(frame) if c not in ("sampler", "target")
                              and not c.startswith("target_") and c not in ("num_chains", "num_steps")])
    b2, std = _metric(frame, B2), _metric(frame, B2_STD)
    diverged = _metric(frame, "num_diverged_chains")
    b2_text = [
        "diverged" if not math.isfinite(v) and d > 0 else f"{_number(v, '.2e')} ± {_number(s, '.1e')}"
        for v, s, d in zip(b2, std, diverged)
    ]
    columns = {
        "sampler": frame["sampler"],
        "target": target,
        **({"setting": other} if other.astype(bool).any() else {}),
        "step size": frame[STEP_SIZE].map(_number) if STEP_SIZE in frame else "—",
        "chains": frame["num_chains"],
        "steps": frame["num_steps"].map(_number),
        "b² mean (chain avg ± boot. std)": b2_text,
        "b² mean pooled": _metric(frame, "b2_mean_pooled").map(lambda v: _number(v, ".2e")),
        "b² max (chain avg)": _metric(frame, "b2_max_chain_average").map(lambda v: _number(v, ".2e")),
        **({"grad evals to b² < 0.01": _metric(frame, THRESHOLD).map(lambda v: "not reached" if v == math.inf
                                                                      else _number(v, ".3g"))}
           if THRESHOLD in frame else {}),
        "diverged": [f"{_number(d, '.0f')}/{n}" for d, n in zip(diverged, frame["num_chains"])],
        "grad evals": frame["grad_evals"].map(_number),
        "wall s": frame["wall_seconds"].map(lambda v: _number(v, ".2f")),
        "chain-steps/s": frame["chain_steps_per_second"].map(lambda v: _number(v, ".3g")),
    }
    return pd.DataFrame(columns).reset_index(drop=True)


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


def format_table(frame: pd.DataFrame) -> str:
    """The table of runs as plain text for a terminal, and why metrics are missing where they are."""
    if frame.empty:
        return "(no runs)"
    table = display_frame(frame).to_string(index=False)
    note = textwrap.fill(no_truth_note(frame), 100)
    return f"settings shared by all runs: {shared_settings(frame)}\n{table}" + (f"\n{note}" if note else "")


def plot_b2(frame: pd.DataFrame) -> bytes:
    """PNG (Agg) of b^2 (mean over dims, chain average) against step size, log-log, one line per
    setting; points where every chain diverged are drawn as x at the top."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    frame = _sorted(frame)
    line_key = frame[_line_columns(frame)].apply(lambda column: column.map(str)).agg("|".join, axis=1)
    labels = frame["sampler"] + " on " + frame["target"] + _settings(
        frame, [c for c in _line_columns(frame) if c not in ("sampler", "target")]
    ).map(lambda s: f" ({s})" if s else "")
    b2, std, diverged = _metric(frame, B2), _metric(frame, B2_STD), _metric(frame, "num_diverged_chains")

    fig = Figure(figsize=(8, 5), dpi=110)  # no pyplot: the caller's matplotlib backend is left alone
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    step_sizes = frame[STEP_SIZE].astype(float).unique()
    if len(step_sizes) == 1:  # a single step size: give the log axis a width
        ax.set_xlim(step_sizes[0] / 3, step_sizes[0] * 3)
    top = ax.get_xaxis_transform()  # x in data coordinates, y in axes coordinates
    any_all_diverged = False
    for index, key in enumerate(dict.fromkeys(line_key)):
        rows = line_key == key
        ok = rows & np.isfinite(b2) & (b2 > 0)
        line = ax.errorbar(frame.loc[ok, STEP_SIZE], b2[ok], yerr=std[ok].fillna(0), marker="o", ms=4,
                           capsize=3, label=labels[rows].iloc[0])
        color = line[0].get_color()
        lost = rows & ~np.isfinite(b2) & (diverged > 0)
        if lost.any():
            any_all_diverged = True
            height = 0.96 - 0.04 * (index % 5)  # lines diverging at one step size stay apart
            ax.plot(frame.loc[lost, STEP_SIZE], np.full(lost.sum(), height), "x", color=color, ms=9, mew=2,
                    transform=top, clip_on=False)
        for x, y, d, n in zip(frame.loc[ok, STEP_SIZE], b2[ok], diverged[ok], frame.loc[ok, "num_chains"]):
            if d > 0:
                ax.annotate(f"{d:.0f}/{n} diverged", (x, y), textcoords="offset points", xytext=(5, 5),
                            fontsize=7, color=color)
    for n in sorted(set(frame["num_steps"] // frame["thin"]))[:3]:
        ax.axhline(1 / n, color="grey", linestyle=":", linewidth=1,
                   label=f"exact i.i.d. sampling, n = {n:,} draws per chain: 1/n")
    if any_all_diverged:
        ax.plot([], [], "x", color="black", ms=9, mew=2, label="every chain diverged (no b²)")
    return _png(fig, ax, "step size h", "b² (mean over dims, chain average)",
                "Second-moment bias against step size", legend_size=8)


def plot_running_b2(frame: pd.DataFrame) -> bytes | None:
    """PNG of the pooled running b^2 (mean over dims) against gradient evaluations per chain,
    log-log, one line per run that recorded checkpoints; None if no run did."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    curves = [(row, json.loads(row["curves"]).get("b2_mean_pooled")) for _, row in _sorted(frame).iterrows()]
    curves = [(row, c) for row, c in curves if c and c["value"]]
    if not curves:
        return None
    fig = Figure(figsize=(8, 5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for row, curve in curves:
        label = f"{row['sampler']} on {row['target']}, h = {_number(row.get(STEP_SIZE, math.nan))}"
        ax.loglog(curve["grad_evals"], curve["value"], marker=".", ms=3, label=label)
    ax.axhline(0.01, color="grey", linestyle=":", linewidth=1, label="b² = 0.01 (Hoffman & Sountsov)")
    return _png(fig, ax, "gradient evaluations per chain", "running b² (mean over dims, pooled)",
                "Running second-moment bias", legend_size=7)


def _png(fig, ax, xlabel: str, ylabel: str, title: str, legend_size: int) -> bytes:
    """Label, grid and legend ``ax``, and render ``fig`` as PNG bytes."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=legend_size, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _distinct(values) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def _provenance(frame: pd.DataFrame) -> str:
    """HTML list of git commits, machines, library versions and dates of the runs."""
    library_versions = [", ".join(f"{k} {v}" for k, v in json.loads(text).items())
                        for text in _distinct(frame["versions"])]
    items = {
        "git commit": _distinct(frame["git_commit"]),
        "machine": _distinct(frame["machine"]),
        "versions": library_versions,
        "runs made (UTC)": [f"{frame['created_at'].min()} to {frame['created_at'].max()}"],
    }
    body = "".join(
        f"<dt>{escape(name)}</dt>" + "".join(f"<dd><code>{escape(v)}</code></dd>" for v in values)
        for name, values in items.items()
    )
    return f'<dl class="provenance">{body}</dl>'


def write_report(store_or_frame, out_dir) -> Path:
    """Write ``out_dir/index.html`` for a :class:`ResultsStore` or its ``to_frame()``; return its path."""
    if isinstance(store_or_frame, ResultsStore):
        frame = store_or_frame.to_frame()
        source = Markup(f"results store <code>{escape(str(store_or_frame.path))}</code>")
    elif isinstance(store_or_frame, pd.DataFrame):
        frame, source = store_or_frame, "a results frame"
    else:
        raise TypeError("store_or_frame must be a ResultsStore or a pandas DataFrame, "
                        f"got {type(store_or_frame).__name__}")
    path = Path(out_dir) / "index.html"
    if frame.empty:
        return render_page(path, "sgmcmc-bench report", [], intro=Markup(f"No runs in {source}."))
    sections = [("Runs", Markup(f"<p>Settings shared by all runs: <code>{escape(shared_settings(frame))}</code></p>\n")
                 + table(display_frame(frame), classes="runs"))]
    if STEP_SIZE in frame and B2 in frame:
        sections.append(("b² against step size", image(plot_b2(frame), "b² against step size")))
    else:
        sections.append(("b² against step size",
                         Markup("<p>No b² against step size for these runs (no step size or no truth).</p>")))
    running = plot_running_b2(frame) if "curves" in frame else None
    if running is not None:
        sections.append(("Running b² against gradient evaluations",
                         image(running, "running b² against gradient evaluations")))
    sections += [("How to read this", Markup(HOW_TO_READ)), ("Provenance", Markup(_provenance(frame)))]
    note = no_truth_note(frame)
    runs = f"{len(frame)} run{'s' if len(frame) != 1 else ''}"
    note = re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(f" {note[0].upper()}{note[1:]}."))) if note else ""
    intro = Markup(f"{runs} from {source}.{note}")
    return render_page(path, "sgmcmc-bench report", sections, intro=intro)
