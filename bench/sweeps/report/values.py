"""The columns of a results frame that the report reads, and how their values are written."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

B2 = "b2_mean_chain_average"
B2_STD = "b2_mean_chain_average_bootstrap_std"
STEP_SIZE = "param_step_size"
THRESHOLD = "grad_evals_to_b2_below_0.01"


def is_missing(value) -> bool:
    """A setting that does not apply to a row (None or NaN in a mixed frame)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def metric(frame: pd.DataFrame, name: str) -> pd.Series:
    """The column ``name`` of ``frame`` as floats, or NaN where the frame has no such column."""
    return frame[name].astype(float) if name in frame else pd.Series(np.nan, index=frame.index)


def number_text(value, spec: str = ".3g") -> str:
    """A setting or metric as text: a schedule as kind(fields), a vector by its length, a float by
    ``spec`` ("—" when not finite), an integer with thousands separators."""
    if isinstance(value, dict) and "kind" in value:  # a step-size schedule
        fields = ", ".join(f"{k}={number_text(v)}" for k, v in value.items() if k != "kind")
        return f"{value['kind']}({fields})" if fields else str(value["kind"])
    if isinstance(value, list):  # a vector hyperparameter (a control-variate centre)
        return f"[{len(value)} values]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return "—" if not math.isfinite(value) else format(value, spec)


def count_text(n) -> str:
    """A count of steps: 10⁶ for a power of ten from 10⁴ up, else with thousands separators."""
    n = int(n)
    exponent = round(math.log10(n)) if n > 0 else 0
    if exponent >= 4 and n == 10 ** exponent:
        return "10" + str(exponent).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{n:,}"
