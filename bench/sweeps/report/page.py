"""The report page: what was run, the best step sizes, the figures, the table of runs, how to read
them and the provenance of the runs, as one self-contained HTML file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape

from sgbench.base.figures import png_bytes
from sgbench.bench.html import image, render_page, table
from sgbench.bench.sweeps.report.best import best_table, headline, lines_of_runs
from sgbench.bench.sweeps.report.figures import b2_figure, plot_running_b2
from sgbench.bench.sweeps.report.settings import (
    group_settings,
    line_keys,
    shared_settings,
    short_name,
    target_columns,
    varying,
    without_absent_settings,
)
from sgbench.bench.sweeps.report.tables import display_frame, no_truth_note
from sgbench.bench.sweeps.report.values import STEP_SIZE, count_text, is_missing, number_text
from sgbench.bench.sweeps.store import ResultsStore

HOW_TO_READ = """\
<p><b>b&sup2;</b> is the second-moment bias of Hoffman &amp; Sountsov (2022): for dimension
<i>i</i>, b&sup2;<sub>i</sub> = (&Ecirc;[x<sub>i</sub>&sup2;] &minus; E[x<sub>i</sub>&sup2;])&sup2;
/ Var[x<sub>i</sub>&sup2;], where &Ecirc; is a chain's estimate and E, Var are the target's truth.
&ldquo;b&sup2; mean&rdquo; averages it over dimensions, &ldquo;b&sup2; max&rdquo; takes the worst
dimension. Exact independent sampling of <i>n</i> draws gives b&sup2; &asymp; 1/<i>n</i> (the dotted
line, or a legend entry when it lies far below the measured points), so a correct sampler sits near
&tau;<sub>int</sub>/<i>n</i> plus the squared bias of its discretisation: small step sizes mix
slowly, large ones are biased, and beyond the stability limit chains diverge.</p>
<p>The headline gives, per line of runs (a sampler on a target with its settings), the step size of
lowest b&sup2; (chain average, mean over dimensions) among the step sizes run, preferring runs in
which no chain diverged; a best step size at the edge of the grid says a better one may lie beyond
it. &ldquo;Chain average&rdquo; is the mean over chains of each chain's b&sup2;; &ldquo;pooled&rdquo;
is b&sup2; of the chains' averaged second moments. The &plusmn; values and error bars are one
standard deviation of the chain average under a bootstrap over chains (1000 resamples), as in
appendix C of the SMILE paper: two step sizes whose b&sup2; differ by less than that are not told
apart by these runs. Diverged chains (a non-finite position) are left out of b&sup2; and counted; a
point where every chain diverged has no b&sup2; and is drawn as &times; at the top of the plot. Wall
seconds of a grid point are its share of the one compiled call that ran its grid (compilation
included); chain-steps/s leaves compilation out.</p>
"""


def _html_table(shown: pd.DataFrame) -> Markup:
    """``shown`` (formatted strings) as a report table: cells on one line, but for the settings text."""
    cells = shown.map(lambda v: escape(str(v)))
    for name in ("line", "sampler", "target", "setting"):
        if name in cells:
            cells[name] = cells[name].map(Markup('<span class="wrap">{}</span>').format)
    return table(cells, classes="runs report", escape_cells=False)


def _settings_html(frame: pd.DataFrame) -> Markup:
    """The settings shared by all runs, then those of each target name and sampler not in the table."""
    html = Markup("<p>Settings shared by all runs: <code>{}</code></p>\n").format(shared_settings(frame))
    groups = group_settings(frame)
    if groups:
        items = Markup("").join(Markup("<li>{}: <code>{}</code></li>").format(group, text)
                                for group, text in groups.items())
        html += Markup("<p>Settings of one target or sampler (all its runs):</p>\n<ul>{}</ul>\n").format(items)
    return html


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


def _either(values, render=str) -> str:
    """"a", "a or b" or "a to b" (more than two) of the sorted distinct ``values``."""
    values = sorted(set(values))
    if len(values) > 2:
        return f"{render(values[0])} to {render(values[-1])}"
    return " or ".join(map(render, values))


def run_summary(frame: pd.DataFrame) -> str:
    """What ``frame`` ran, in one sentence: samplers, targets, step sizes, chains, steps, dtypes."""
    frame = without_absent_settings(frame)
    samplers, targets = sorted(frame["sampler"].unique()), sorted(frame["target"].unique())
    text = f"{len(frame)} run{'s' if len(frame) != 1 else ''} of "
    text += samplers[0] if len(samplers) == 1 else f"{len(samplers)} samplers ({', '.join(samplers)})"
    if len(targets) == 1:
        constant = [c for c in target_columns(frame) if c not in varying(frame, target_columns(frame))]
        shared = ", ".join(f"{short_name(c)}={number_text(frame[c].iloc[0])}" for c in constant)
        text += f" on {targets[0]}" + (f" ({shared})" if shared else "")
    else:
        text += f" on {len(targets)} targets ({', '.join(targets)})"
    if STEP_SIZE in frame:
        counts = frame.groupby(line_keys(frame))[STEP_SIZE].nunique()
        sizes = frame[STEP_SIZE].astype(float)
        each = "" if len(counts) == 1 else " per sampler" if len(counts) == len(samplers) else " per line"
        many = counts.max() > 1
        text += (f": {_either(counts)} step size{'s' if many else ''}{each}"
                 + (f" from {number_text(sizes.min())} to {number_text(sizes.max())}" if many
                    else f" {number_text(sizes.min())}"))
    text += f", {_either(frame['num_chains'])} chains × {_either(frame['num_steps'], count_text)} steps"
    if "num_burnin" in frame and (frame["num_burnin"] > 0).any():
        text += f" after {_either(frame['num_burnin'], count_text)} burn-in steps"
    if "dtype" in frame:
        text += f", {_either(frame['dtype'])}"
    return text


def _source(frame: pd.DataFrame, store: ResultsStore | None) -> Markup:
    """Where the runs come from: their suites (or ad-hoc runs) and the results store."""
    suites = frame["suite"] if "suite" in frame else pd.Series([None] * len(frame))
    named = sorted({s for s in suites if not is_missing(s)})
    parts = [f"suite{'s' if len(named) > 1 else ''} {', '.join(named)}"] if named else []
    parts += ["ad-hoc runs"] if suites.map(is_missing).any() else []
    text = Markup(escape(" and ".join(parts)))
    if store is not None:
        text += Markup(", results store <code>{}</code>").format(str(store.path))
    return Markup("From ") + text + "." if text else Markup("")


def write_report(store_or_frame, out_dir) -> Path:
    """Write ``out_dir/index.html`` for a :class:`ResultsStore` or its ``to_frame()``; return its path."""
    if isinstance(store_or_frame, ResultsStore):
        store, frame = store_or_frame, store_or_frame.to_frame()
    elif isinstance(store_or_frame, pd.DataFrame):
        store, frame = None, store_or_frame
    else:
        raise TypeError("store_or_frame must be a ResultsStore or a pandas DataFrame, "
                        f"got {type(store_or_frame).__name__}")
    path = Path(out_dir) / "index.html"
    if frame.empty:
        where = Markup(" in results store <code>{}</code>").format(str(store.path)) if store else ""
        return render_page(path, "sgmcmc-bench report", [], intro=Markup("No runs") + where + ".")
    note = no_truth_note(frame)
    note = re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(f" {note[0].upper()}{note[1:]}."))) if note else ""
    intro = escape(run_summary(frame) + ". ") + _source(frame, store) + Markup(note)
    sections = []
    lines = lines_of_runs(frame)
    if len(lines) > 1:
        per = "sampler" if len(lines) == frame["sampler"].nunique() else "line of runs"
        sections.append((f"Best step size per {per}", _html_table(best_table(frame))))
    figure = b2_figure(frame)
    sections.append(("b² against step size", image(png_bytes(figure), "b² against step size") if figure is not None
                     else Markup("<p>No b² against step size for these runs (no step size, no truth, or every "
                                 "chain diverged).</p>")))
    sections.append(("Runs", _settings_html(frame) + _html_table(display_frame(frame))))
    running = plot_running_b2(frame) if "curves" in frame else None
    if running is not None:
        sections.append(("Running b² against gradient evaluations",
                         image(running, "running b² against gradient evaluations")))
    sections += [("How to read this", Markup(HOW_TO_READ)), ("Provenance", Markup(_provenance(frame)))]
    heading = Markup("<br>").join(headline(frame))
    return render_page(path, "sgmcmc-bench report", sections, headline=heading, passed=None, intro=intro)
