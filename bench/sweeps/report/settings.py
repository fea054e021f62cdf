"""The run settings of a results frame: which columns make a line of runs, which settings vary and
which all runs share, and their "name=value" text."""

from __future__ import annotations

import dataclasses

import pandas as pd

from sgbench.bench.running.config import RunConfig
from sgbench.bench.sweeps.report.values import STEP_SIZE, is_missing, number_text

_CONFIG_COLUMNS = [f.name for f in dataclasses.fields(RunConfig) if f.name != "seed"]


def without_absent_settings(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without the setting columns that no row has (a subset of a mixed store)."""
    empty = [c for c in frame.columns if c.startswith(("param_", "target_")) and c != "target_params"
             and frame[c].map(is_missing).all()]
    return frame.drop(columns=empty)


def varying(frame: pd.DataFrame, columns) -> list[str]:
    """The ``columns`` of ``frame`` that take more than one value (missing counts as a value)."""
    return [c for c in columns if c in frame and frame[c].map(lambda v: "" if is_missing(v) else str(v)).nunique() > 1]


def _settings(frame: pd.DataFrame, columns) -> pd.Series:
    """Per row, "name=value" of the varying ``columns`` that apply to it (prefixes stripped)."""
    columns = varying(frame, columns)
    if not columns or frame.empty:
        return pd.Series("", index=frame.index, dtype=object)
    return frame.apply(lambda row: ", ".join(f"{short_name(c)}={number_text(row[c])}" for c in columns
                                             if not is_missing(row[c])), axis=1).astype(object)


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
    frame = without_absent_settings(frame)
    columns = [c for c in _line_columns(frame) if c not in ("sampler", "target")]
    different = set(varying(frame, columns))
    first = frame.iloc[0]
    return ", ".join(f"{short_name(c)}={number_text(first[c])}" for c in columns if c not in different
                     and not is_missing(first[c]))


def short_name(column: str) -> str:
    """A setting column's name without its "param_" or "target_" prefix."""
    return column.split("_", 1)[1] if column.startswith(("param_", "target_")) else column


def target_columns(frame):
    """The target's settings columns of ``frame``."""
    return [c for c in frame.columns if c.startswith("target_") and c != "target_params"]


def _line_columns(frame):
    """Columns that identify one line of runs: everything of a run but its step size."""
    params = [c for c in frame.columns if c.startswith("param_") and c != STEP_SIZE]
    return ["sampler", "target", *target_columns(frame), *params,
            *[c for c in _CONFIG_COLUMNS if c in frame], "seed"]


def _other_columns(frame):
    """Sampler params and RunConfig fields of a line (not sampler, target or target params)."""
    return [c for c in _line_columns(frame) if c not in ("sampler", "target") and not c.startswith("target_")]


def _sampler_columns(frame):
    """Sampler params and RunConfig fields but chains and steps (columns of their own in the tables)."""
    return [c for c in _other_columns(frame) if c not in ("num_chains", "num_steps")]


def line_keys(frame: pd.DataFrame) -> pd.Series:
    """Per row, a key of its line of runs (the same for runs that differ only in step size)."""
    return frame[[c for c in _line_columns(frame) if c in frame]].apply(lambda c: c.map(str)).agg("|".join, axis=1)


def sorted_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` sorted by line of runs, then step size."""
    keys = [c for c in _line_columns(frame) + [STEP_SIZE] if c in frame]
    return frame.sort_values(keys, kind="stable", key=lambda s: s.map(str) if s.dtype == object else s)


def name_with_settings(names: pd.Series, settings: pd.Series) -> pd.Series:
    """Per row, "name (settings)", or the name alone."""
    return names.astype(object) + settings.map(lambda s: f" ({s})" if s else "")


def target_settings(frame: pd.DataFrame) -> pd.Series:
    """Per row, the target settings that vary among runs of its target name."""
    return _distinguishing(frame, target_columns(frame), frame["target"])


def sampler_settings(frame: pd.DataFrame) -> pd.Series:
    """Per row, the sampler settings and RunConfig fields (chains and steps apart: columns of their
    own) that vary among runs of its sampler."""
    return _distinguishing(frame, _sampler_columns(frame), frame["sampler"])


def group_settings(frame: pd.DataFrame) -> dict[str, str]:
    """The settings that all runs of one target name or of one sampler share but not all runs of
    ``frame``: {"target icg": "dim=10, ...", "sampler psgld": "epsilon=1e-05, ..."}, "name=value"
    comma-separated; with :func:`shared_settings` and the table's columns they give every setting."""
    frame = without_absent_settings(frame)
    groups = {}
    for kind, columns in (("target", target_columns(frame)), ("sampler", _sampler_columns(frame))):
        shared = set(columns) - set(varying(frame, columns))
        for name, rows in frame.groupby(kind, sort=True):
            within = set(varying(rows, columns))
            first = rows.iloc[0]
            text = ", ".join(f"{short_name(c)}={number_text(first[c])}" for c in columns
                             if c not in shared and c not in within and not is_missing(first[c]))
            if text:
                groups[f"{kind} {name}"] = text
    return groups


def line_labels(frame: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per row, the shortest names of its sampler and its target: the sampler with the settings that
    tell apart lines of one sampler on one target, the target with the settings that tell apart
    targets of one name."""
    target = name_with_settings(frame["target"], target_settings(frame))
    sampler = _distinguishing(frame, _other_columns(frame), frame["sampler"] + "|" + target)
    return name_with_settings(frame["sampler"], sampler), target
