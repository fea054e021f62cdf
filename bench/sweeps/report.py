"""Reports of a results store: a terminal table and a self-contained HTML page.

Both open with a headline: per line of runs (one sampler on one target with its settings, over
step sizes) the step size of lowest b^2 and that b^2 +- 1 bootstrap std over chains, or in words
why there is none. The page then says what was run, shows the best step size per line (when there
are several), a log-log plot of b^2 against step size (one line per setting, bootstrap error bars,
diverged points marked), the table of runs (only the settings that vary, per row only those that
apply), the running b^2 of each run, a note on how to read them and the provenance of the runs.
The terminal table keeps to 120 columns.
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
TERMINAL_WIDTH = 120
STD_MEANING = "± 1 bootstrap std over chains"
_CONFIG_COLUMNS = [f.name for f in dataclasses.fields(RunConfig) if f.name != "seed"]
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", ":", "-.")

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


def _missing(value) -> bool:
    """A setting that does not apply to a row (None or NaN in a mixed frame)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _present(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without the setting columns that no row has (a subset of a mixed store)."""
    empty = [c for c in frame.columns if c.startswith(("param_", "target_")) and c != "target_params"
             and frame[c].map(_missing).all()]
    return frame.drop(columns=empty)


def _varying(frame: pd.DataFrame, columns) -> list[str]:
    """The ``columns`` of ``frame`` that take more than one value (missing counts as a value)."""
    return [c for c in columns if c in frame and frame[c].map(lambda v: "" if _missing(v) else str(v)).nunique() > 1]


def _settings(frame: pd.DataFrame, columns) -> pd.Series:
    """Per row, "name=value" of the varying ``columns`` that apply to it (prefixes stripped)."""
    varying = _varying(frame, columns)
    if not varying or frame.empty:
        return pd.Series("", index=frame.index, dtype=object)
    return frame.apply(lambda row: ", ".join(f"{_short(c)}={_number(row[c])}" for c in varying
                                             if not _missing(row[c])), axis=1).astype(object)


def _distinguishing(frame: pd.DataFrame, columns, by: pd.Series) -> pd.Series:
    """Per row, the settings of ``columns`` that vary among the rows with its value of ``by``."""
    text = pd.Series("", index=frame.index, dtype=object)
    for _, rows in frame.groupby(by, sort=False):
        text[rows.index] = _settings(rows, columns)
    return text


def shared_settings(frame: pd.DataFrame) -> str:
    """"name=value" of the run settings (target and sampler params, RunConfig fields, seed) that
    all rows of ``frame`` share, comma-separated."""
    if frame.empty:
        return ""
    frame = _present(frame)
    columns = [c for c in _line_columns(frame) if c not in ("sampler", "target")]
    varying = set(_varying(frame, columns))
    first = frame.iloc[0]
    return ", ".join(f"{_short(c)}={_number(first[c])}" for c in columns if c not in varying
                     and not _missing(first[c]))


def _short(column: str) -> str:
    return column.split("_", 1)[1] if column.startswith(("param_", "target_")) else column


def _number(value, spec: str = ".3g") -> str:
    if isinstance(value, dict) and "kind" in value:  # a step-size schedule
        fields = ", ".join(f"{k}={_number(v)}" for k, v in value.items() if k != "kind")
        return f"{value['kind']}({fields})" if fields else str(value["kind"])
    if isinstance(value, list):  # a vector hyperparameter (a control-variate centre)
        return f"[{len(value)} values]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return "—" if not math.isfinite(value) else format(value, spec)


def _count(n) -> str:
    """A count of steps: 10⁶ for a power of ten from 10⁴ up, else with thousands separators."""
    n = int(n)
    exponent = round(math.log10(n)) if n > 0 else 0
    if exponent >= 4 and n == 10 ** exponent:
        return "10" + str(exponent).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{n:,}"


def _target_columns(frame):
    return [c for c in frame.columns if c.startswith("target_") and c != "target_params"]


def _line_columns(frame):
    """Columns that identify one line of runs: everything of a run but its step size."""
    params = [c for c in frame.columns if c.startswith("param_") and c != STEP_SIZE]
    return ["sampler", "target", *_target_columns(frame), *params,
            *[c for c in _CONFIG_COLUMNS if c in frame], "seed"]


def _other_columns(frame):
    """Sampler params and RunConfig fields of a line (not sampler, target or target params)."""
    return [c for c in _line_columns(frame) if c not in ("sampler", "target") and not c.startswith("target_")]


def _line_keys(frame: pd.DataFrame) -> pd.Series:
    return frame[[c for c in _line_columns(frame) if c in frame]].apply(lambda c: c.map(str)).agg("|".join, axis=1)


def _metric(frame: pd.DataFrame, name: str) -> pd.Series:
    return frame[name].astype(float) if name in frame else pd.Series(np.nan, index=frame.index)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in _line_columns(frame) + [STEP_SIZE] if c in frame]
    return frame.sort_values(keys, kind="stable", key=lambda s: s.map(str) if s.dtype == object else s)


def _named(names: pd.Series, settings: pd.Series) -> pd.Series:
    """Per row, "name (settings)", or the name alone."""
    return names.astype(object) + settings.map(lambda s: f" ({s})" if s else "")


def _target_settings(frame: pd.DataFrame) -> pd.Series:
    """Per row, the target settings that vary among runs of its target name."""
    return _distinguishing(frame, _target_columns(frame), frame["target"])


def _sampler_settings(frame: pd.DataFrame) -> pd.Series:
    """Per row, the sampler settings and RunConfig fields (chains and steps apart: columns of their
    own) that vary among runs of its sampler."""
    return _distinguishing(frame, [c for c in _other_columns(frame) if c not in ("num_chains", "num_steps")],
                           frame["sampler"])


def group_settings(frame: pd.DataFrame) -> dict[str, str]:
    """The settings that all runs of one target name or of one sampler share but not all runs of
    ``frame``: {"target icg": "dim=10, ...", "sampler psgld": "epsilon=1e-05, ..."}, "name=value"
    comma-separated; with :func:`shared_settings` and the table's columns they give every setting."""
    frame = _present(frame)
    groups = {}
    for kind, columns in (("target", _target_columns(frame)),
                          ("sampler", [c for c in _other_columns(frame) if c not in ("num_chains", "num_steps")])):
        shared = set(columns) - set(_varying(frame, columns))
        for name, rows in frame.groupby(kind, sort=True):
            within = set(_varying(rows, columns))
            first = rows.iloc[0]
            text = ", ".join(f"{_short(c)}={_number(first[c])}" for c in columns
                             if c not in shared and c not in within and not _missing(first[c]))
            if text:
                groups[f"{kind} {name}"] = text
    return groups


def _line_labels(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per row, the shortest names of its sampler and its target: the sampler with the settings that
    tell apart lines of one sampler on one target, the target with the settings that tell apart
    targets of one name."""
    target = _named(frame["target"], _target_settings(frame))
    return _named(frame["sampler"], _distinguishing(frame, _other_columns(frame), frame["sampler"] + "|" + target)), \
        target


@dataclasses.dataclass
class _Line:
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


def _lines(frame: pd.DataFrame) -> list[_Line]:
    """The lines of runs of ``frame`` (sorted, without absent settings), each with its best run: the
    lowest b² among runs with a b², preferring those where no chain diverged."""
    frame = _sorted(_present(frame))
    keys = _line_keys(frame)
    sampler, target = _line_labels(frame)
    named_target = target.nunique() > 1 or keys.nunique() == 1  # the label names the target
    lines = []
    for key in dict.fromkeys(keys):
        runs = frame[keys == key]
        ok = runs[np.isfinite(_metric(runs, B2))]
        best = None
        if len(ok):
            order = np.lexsort((_metric(ok, B2).to_numpy(), (ok["num_diverged_chains"] > 0).to_numpy()))
            best = ok.iloc[order[0]]
        first = runs.index[0]
        label = f"{sampler[first]} on {target[first]}" if named_target else sampler[first]
        lines.append(_Line(label, sampler[first], target[first], runs, best))
    return lines


def _b2_text(value, std) -> str:
    return f"{value:.3g}" + (f" ± {std:.2g}" if math.isfinite(std) else "")


def _result(line: _Line, meaning: bool = False, brief: bool = False) -> str:
    """"h = 0.001, b² = 0.049 ± 0.018" of the line's best run (with what ± means if ``meaning``), its
    diverged chains if any, and whether it is at the edge of the grid (in a few words if ``brief``)."""
    best = line.best
    text = f"h = {_number(best.get(STEP_SIZE, math.nan))}, b² = {_b2_text(best[B2], best.get(B2_STD, math.nan))}"
    text += f" ({STD_MEANING})" if meaning else ""
    if best["num_diverged_chains"] > 0:
        text += f", {best['num_diverged_chains']:.0f}/{best['num_chains']} chains diverged"
    if line.edge and brief:
        text += f", the {line.edge} step size run"
    elif line.edge:
        text += f"; the {line.edge} step size run: a {'smaller' if line.edge == 'smallest' else 'larger'} one " \
                "may do better"
    return text


def _ties(line: _Line) -> str:
    """The step sizes of ``line`` whose b² is within 1 std (combined) of the best's, as a clause."""
    best, runs = line.best, line.runs
    b2, std = _metric(runs, B2), _metric(runs, B2_STD).fillna(0)
    close = (runs.index != best.name) & np.isfinite(b2) & (
        b2 - best[B2] <= np.hypot(std, 0 if _missing(best.get(B2_STD)) else best[B2_STD]))
    if not close.any():
        return ""
    tied = [f"h = {_number(h)} (b² = {v:.3g})" for h, v in zip(runs.loc[close, STEP_SIZE], b2[close])][:3]
    return f"; within 1 std of it: {', '.join(tied)}"


def headline(frame: pd.DataFrame) -> list[str]:
    """The report's headline sentences: per target, the best step size of its line of runs (its b²
    ± 1 bootstrap std over chains), or the line of lowest b² when there are several; in words when
    no run has a b²."""
    lines = _lines(frame)
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
    for line in sorted(_lines(frame), key=lambda line: math.inf if line.best is None else line.best[B2]):
        sizes, best = line.step_sizes, line.best
        rows.append({
            "line": line.label,
            "best step size": "—" if best is None else _number(best.get(STEP_SIZE, math.nan)),
            "b² (± 1 bootstrap std)": "—" if best is None else _b2_text(best[B2], best.get(B2_STD, math.nan)),
            "diverged": "—" if best is None else f"{best['num_diverged_chains']:.0f}/{best['num_chains']}",
            "step sizes run": f"{len(sizes)}: {_number(sizes[0])} to {_number(sizes[-1])}" if len(sizes) > 1
            else "".join(map(_number, sizes)),
            "note": line.why_none if best is None else f"{line.edge} step size run" if line.edge else "",
        })
    return pd.DataFrame(rows)


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of ``frame`` as a table of formatted strings, one row per run: the target, chains and
    steps only when they vary, settings only where they vary among runs of one target name or one
    sampler (the others are in :func:`shared_settings` and :func:`group_settings`), metric columns
    only where some run has them."""
    frame = _sorted(_present(frame))
    b2, std = _metric(frame, B2), _metric(frame, B2_STD)
    diverged = _metric(frame, "num_diverged_chains")
    b2_text = ["diverged" if not math.isfinite(v) and d >= n else
               "—" if not math.isfinite(v) else f"{_number(v, '.2e')} ± {_number(s, '.1e')}"
               for v, s, d, n in zip(b2, std, diverged, frame["num_chains"])]
    metrics = {
        "b² mean (chain avg ± boot. std)": b2_text,
        "b² mean pooled": _metric(frame, "b2_mean_pooled").map(lambda v: _number(v, ".2e")),
        "b² max (chain avg)": _metric(frame, "b2_max_chain_average").map(lambda v: _number(v, ".2e")),
        **({"grad evals to b² < 0.01": _metric(frame, THRESHOLD).map(lambda v: "not reached" if v == math.inf
                                                                      else _number(v, ".3g"))}
           if THRESHOLD in frame else {}),
    }
    columns = {
        "sampler": frame["sampler"],
        "target": _named(frame["target"], _target_settings(frame)),
        "setting": _sampler_settings(frame),
        "step size": frame[STEP_SIZE].map(_number) if STEP_SIZE in frame else "—",
        "chains": frame["num_chains"].map(_number),
        "steps": frame["num_steps"].map(_number),
        **{name: values for name, values in metrics.items()
           if any(text not in ("—", "diverged") for text in values)},
        "diverged": [f"{_number(d, '.0f')}/{n}" for d, n in zip(diverged, frame["num_chains"])],
        "grad evals": frame["grad_evals"].map(_number),
        "wall s": frame["wall_seconds"].map(lambda v: _number(v, ".2f")),
        "chain-steps/s": frame["chain_steps_per_second"].map(lambda v: _number(v, ".3g")),
    }
    shown = pd.DataFrame({name: list(values) if not isinstance(values, str) else values
                          for name, values in columns.items()})
    constant = [c for c in ("target", "chains", "steps") if len(shown) > 1 and shown[c].nunique() == 1]
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
    columns: long settings move to a key under the table), and why metrics are missing."""
    if frame.empty:
        return "(no runs)"
    frame = _sorted(_present(frame))
    best = {line.best.name for line in _lines(frame) if line.best is not None}
    setting = [", ".join(part for part in parts if part)
               for parts in zip(_target_settings(frame), _sampler_settings(frame))]
    b2, std, diverged = _metric(frame, B2), _metric(frame, B2_STD), _metric(frame, "num_diverged_chains")
    columns = {
        "sampler": list(frame["sampler"]),
        "target": list(frame["target"]),
        "setting": setting,
        "chains": list(frame["num_chains"].map(_number)),
        "steps": list(frame["num_steps"].map(_number)),
        "step size": [_number(h) + ("*" if i in best else " ") for h, i in zip(frame[STEP_SIZE], frame.index)]
        if STEP_SIZE in frame else ["—"] * len(frame),
        "b² ± boot. std": ["diverged" if not math.isfinite(v) and d >= n else "—" if not math.isfinite(v)
                           else f"{v:.2e} ± {_number(s, '.1e')}"
                           for v, s, d, n in zip(b2, std, diverged, frame["num_chains"])],
        "diverged": [f"{d:.0f}/{n}" for d, n in zip(diverged, frame["num_chains"])],
        "grad evals": list(frame["grad_evals"].map(_number)),
        "wall s": list(frame["wall_seconds"].map(lambda v: _number(v, ".2f"))),
    }
    for name in ("target", "setting", "chains", "steps"):
        if len(set(columns[name])) == 1 and (len(frame) > 1 or name == "setting"):
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


def _styles(n: int) -> list[dict]:
    """``n`` distinct matplotlib styles: the ten tab10 colours, each with its own marker, then the
    same colours with other line styles and markers."""
    from matplotlib import colormaps

    colors = colormaps["tab10"].colors
    return [{"color": colors[i % 10], "marker": _MARKERS[(i + i // 10) % 10],
             "linestyle": _LINESTYLES[(i // 10) % len(_LINESTYLES)]} for i in range(n)]


def _figure(width: float, height: float):
    """An Agg figure with constrained layout (no pyplot: the caller's matplotlib backend is left alone)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _legend_layout(labels, width_inches: float) -> tuple[int, list[str], int]:
    """Columns, wrapped labels and text rows of a legend of ``labels`` across a figure's width
    (about 20 characters of 8-point text per inch, 8 of them for the handle)."""
    chars = int(20 * width_inches)
    ncol = max(1, min(5, len(labels), chars // (max(map(len, labels)) + 8)))
    wrapped = [textwrap.fill(label, chars // ncol - 8) for label in labels]
    rows = math.ceil(len(labels) / ncol) * max(label.count("\n") + 1 for label in wrapped)
    return ncol, wrapped, rows


def _legend(fig, ax, handles, labels) -> None:
    """The legend inside ``ax`` when it has at most three short entries, else in rows of its own under
    the axes (the figure grows to hold them): never outside the figure."""
    if len(labels) <= 3 and max(map(len, labels)) <= 45:
        ax.legend(handles, labels, fontsize=8, loc="best")
        return
    width, height = fig.get_size_inches()
    ncol, wrapped, rows = _legend_layout(labels, width)
    fig.set_size_inches(width, height + 0.17 * (rows + 1))
    fig.legend(handles, wrapped, fontsize=8, loc="outside lower center", ncol=ncol, frameon=False)


def _log_limits(low: float, high: float, top_room: float = 0.0) -> tuple[float, float]:
    """Log-axis limits around [low, high] with a margin, at least a factor 4 wide, and
    ``top_room`` (a fraction of the height) left free above."""
    lo, hi = math.log10(low), math.log10(high)
    if hi - lo < math.log10(4):
        middle = (lo + hi) / 2
        lo, hi = middle - math.log10(2), middle + math.log10(2)
    margin = 0.08 * (hi - lo)
    lo, hi = lo - margin, hi + margin
    hi += top_room * (hi - lo) / (1 - top_room)
    return 10 ** lo, 10 ** hi


def _log_ticks(axis) -> None:
    """Ticks at 1, 2 and 5 times the powers of ten, labelled plainly, on a log ``axis`` that spans
    less than three decades (matplotlib's own would be two or three labels, or crowded minor ones)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(axis.get_view_interval())
    if math.log10(high / low) >= 3:
        return
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}" if 1e-3 <= v < 1e5 else f"{v:.0e}"))
    axis.set_minor_formatter(NullFormatter())


def b2_figure(frame: pd.DataFrame):
    """The figure of :func:`plot_b2` (None when no run has a b² or a step size)."""
    from matplotlib.lines import Line2D

    frame = _sorted(_present(frame))
    b2, std, diverged = _metric(frame, B2), _metric(frame, B2_STD), _metric(frame, "num_diverged_chains")
    points = np.isfinite(b2) & (b2 > 0)
    if STEP_SIZE not in frame or not points.any():
        return None
    lines = _lines(frame)
    handles, labels = [], []
    fig = _figure(8, 5)
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    top = ax.get_xaxis_transform()  # x in data coordinates, y in axes coordinates
    any_all_diverged = False
    for index, (line, style) in enumerate(zip(lines, _styles(len(lines)))):
        rows = frame.index.isin(line.runs.index)
        ok = rows & points
        lost = rows & ~np.isfinite(b2) & (diverged >= frame["num_chains"])
        if ok.any():
            handles.append(ax.errorbar(frame.loc[ok, STEP_SIZE], b2[ok], yerr=std[ok].fillna(0), ms=5, capsize=3,
                                       **style))
        elif lost.any():
            handles.append(Line2D([], [], **style))
        if ok.any() or lost.any():  # a line without truth draws nothing: the headline says so
            labels.append(line.label)
        if lost.any():
            any_all_diverged = True
            height = 0.96 - 0.04 * (index % 5)  # lines diverging at one step size stay apart
            ax.plot(frame.loc[lost, STEP_SIZE], np.full(lost.sum(), height), "x", color=style["color"], ms=9,
                    mew=2, transform=top, clip_on=False)
        for x, y, d, n in zip(frame.loc[ok, STEP_SIZE], b2[ok], diverged[ok], frame.loc[ok, "num_chains"]):
            if d > 0:
                ax.annotate(f"{d:.0f}/{n} diverged", (x, y), textcoords="offset points", xytext=(5, 5),
                            fontsize=7, color=style["color"])
    low = np.where(b2 - std > 0, b2 - std, b2)[points].min()
    high = (b2 + std.fillna(0))[points].max()
    for n in sorted(set(frame["num_steps"] // frame["thin"]))[:3]:
        if 1 / n >= low / 3 and 1 / n <= high * 3:  # near the points: drawn, and the axis widened to it
            low, high = min(low, 1 / n), max(high, 1 / n)
            handles.append(ax.axhline(1 / n, color="grey", linestyle=":", linewidth=1))
            labels.append(f"1/n: exact i.i.d. sampling, n = {_count(n)} draws per chain")
        else:
            handles.append(Line2D([], [], color="grey", linestyle=":", linewidth=1))
            side = "below" if 1 / n < low else "above"
            labels.append(f"1/n = {1 / n:.0e} (exact i.i.d. sampling, n = {_count(n)}): {side} the plot")
    ax.set_ylim(*_log_limits(low, high, top_room=0.22 if any_all_diverged else 0.0))
    step_sizes = frame[STEP_SIZE].astype(float).unique()
    if len(step_sizes) == 1:  # a single step size: give the log axis a width
        ax.set_xlim(step_sizes[0] / 3, step_sizes[0] * 3)
    if any_all_diverged:
        handles.append(Line2D([], [], marker="x", color="black", linestyle="", ms=9, mew=2))
        labels.append("every chain diverged (no b²)")
    _log_ticks(ax.xaxis)
    _log_ticks(ax.yaxis)
    ax.set_xlabel("step size h")
    ax.set_ylabel("b² (mean over dims, chain average ± 1 bootstrap std)")
    targets = {line.target for line in lines}
    ax.set_title("Second-moment bias against step size" + (f" on {targets.pop()}" if len(targets) == 1 else ""))
    ax.grid(True, which="major", alpha=0.3)
    _legend(fig, ax, handles, labels)
    return fig


def plot_b2(frame: pd.DataFrame) -> bytes:
    """PNG (Agg) of b^2 (mean over dims, chain average) against step size, log-log, one line per
    setting, y axis fitted to the points; points where every chain diverged are drawn as x at the
    top. Raises ValueError when no run has a b² or a step size."""
    fig = b2_figure(frame)
    if fig is None:
        raise ValueError("no run has a b² and a step size to plot")
    return _png(fig)


def running_b2_figure(frame: pd.DataFrame):
    """The figure of :func:`plot_running_b2` (None when no run recorded checkpoints)."""
    from matplotlib.lines import Line2D

    frame = _sorted(_present(frame))
    curves = {index: json.loads(text).get("b2_mean_pooled") for index, text in frame["curves"].items()}
    curves = {index: c for index, c in curves.items() if c and c["value"]}
    if not curves:
        return None
    lines = [line for line in _lines(frame) if any(i in curves for i in line.runs.index)]
    # Step sizes to 12 digits: 10 * 3e-4 and 3e-3 are one step size.
    step_size = frame[STEP_SIZE].astype(float).map(lambda h: float(f"{h:.12g}")) if STEP_SIZE in frame else \
        pd.Series(math.nan, index=frame.index)
    sizes = sorted(step_size[list(curves)].unique())
    styles = dict(zip(sizes, _styles(len(sizes))))
    ncols = 1 if len(lines) == 1 else 2
    nrows = math.ceil(len(lines) / ncols)
    fig = _figure(8 if ncols == 1 else 10, 5 if nrows == 1 else 2.6 * nrows + 0.6)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    values = []
    for ax, line in zip(axes, lines):
        for index in line.runs.index:
            if index in curves:
                value = np.array(curves[index]["value"], dtype=float)
                values.append(value[np.isfinite(value) & (value > 0)])
                ax.loglog(curves[index]["grad_evals"], value, ms=3, **styles[step_size[index]])
        if len(lines) > 1:
            ax.set_title(line.label, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    for index, ax in enumerate(axes):
        ax.set_visible(index < len(lines))
        if index + ncols >= len(lines):  # the lowest panel of its column
            ax.set_xlabel("gradient evaluations per chain")
            ax.xaxis.set_tick_params(labelbottom=True)
        if index % ncols == 0:
            ax.set_ylabel("running b² (mean over dims, pooled)", fontsize=9 if nrows > 1 else 10)
    values = np.concatenate(values)
    reference = "b² = 0.01 (Hoffman & Sountsov)"
    if len(values):
        low, high = values.min(), values.max()
        if low / 3 <= 0.01 <= high * 3:  # near the curves: drawn, and the axis widened to it
            low, high = min(low, 0.01), max(high, 0.01)
            for ax in axes[:len(lines)]:
                ax.axhline(0.01, color="grey", linestyle=":", linewidth=1)
        else:
            reference += f": {'below' if 0.01 < low else 'above'} the plot"
        axes[0].set_ylim(*_log_limits(low, high))
    _log_ticks(axes[0].xaxis)
    _log_ticks(axes[0].yaxis)
    handles = [Line2D([], [], ms=4, **styles[h]) for h in sizes]
    handles.append(Line2D([], [], color="grey", linestyle=":", linewidth=1))
    fig.suptitle("Running second-moment bias" + (f": {lines[0].label}" if len(lines) == 1 else ", per line of runs"))
    _legend(fig, axes[0], handles, [f"h = {_number(h)}" for h in sizes] + [reference])
    return fig


def plot_running_b2(frame: pd.DataFrame) -> bytes | None:
    """PNG of the pooled running b^2 (mean over dims) against gradient evaluations per chain,
    log-log: one panel per line of runs, one curve per step size (one colour and marker per step
    size across panels); None if no run recorded checkpoints."""
    fig = running_b2_figure(frame)
    return None if fig is None else _png(fig)


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


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
    frame = _present(frame)
    samplers, targets = sorted(frame["sampler"].unique()), sorted(frame["target"].unique())
    text = f"{len(frame)} run{'s' if len(frame) != 1 else ''} of "
    text += samplers[0] if len(samplers) == 1 else f"{len(samplers)} samplers ({', '.join(samplers)})"
    if len(targets) == 1:
        target_settings = [c for c in _target_columns(frame) if c not in _varying(frame, _target_columns(frame))]
        shared = ", ".join(f"{_short(c)}={_number(frame[c].iloc[0])}" for c in target_settings)
        text += f" on {targets[0]}" + (f" ({shared})" if shared else "")
    else:
        text += f" on {len(targets)} targets ({', '.join(targets)})"
    if STEP_SIZE in frame:
        counts = frame.groupby(_line_keys(frame))[STEP_SIZE].nunique()
        sizes = frame[STEP_SIZE].astype(float)
        each = "" if len(counts) == 1 else " per sampler" if len(counts) == len(samplers) else " per line"
        many = counts.max() > 1
        text += (f": {_either(counts)} step size{'s' if many else ''}{each}"
                 + (f" from {_number(sizes.min())} to {_number(sizes.max())}" if many else f" {_number(sizes.min())}"))
    text += f", {_either(frame['num_chains'])} chains × {_either(frame['num_steps'], _count)} steps"
    if "num_burnin" in frame and (frame["num_burnin"] > 0).any():
        text += f" after {_either(frame['num_burnin'], _count)} burn-in steps"
    if "dtype" in frame:
        text += f", {_either(frame['dtype'])}"
    return text


def _source(frame: pd.DataFrame, store: ResultsStore | None) -> Markup:
    """Where the runs come from: their suites (or ad-hoc runs) and the results store."""
    suites = frame["suite"] if "suite" in frame else pd.Series([None] * len(frame))
    named = sorted({s for s in suites if not _missing(s)})
    parts = [f"suite{'s' if len(named) > 1 else ''} {', '.join(named)}"] if named else []
    parts += ["ad-hoc runs"] if suites.map(_missing).any() else []
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
    lines = _lines(frame)
    if len(lines) > 1:
        per = "sampler" if len(lines) == frame["sampler"].nunique() else "line of runs"
        sections.append((f"Best step size per {per}", _html_table(best_table(frame))))
    figure = b2_figure(frame)
    sections.append(("b² against step size", image(_png(figure), "b² against step size") if figure is not None
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
