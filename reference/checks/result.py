r"""The outcome of one statistical check: :class:`CheckResult`.

Every check of :mod:`sgbench.reference.checks` answers with one: whether it passed, the family-wise
false-failure rate ``alpha`` it was designed for (the probability that it fails when the claim
it tests holds), its worst standardized statistic against the critical value, the estimate with
its standard error against the expected value, and the deviation from the expected value that it
detects with probability :data:`POWER` (its power, in the estimate's units). Checks whose
statistic has no standard-error scale (p-values, empirical nulls) leave the fields they cannot
fill NaN.

:func:`detection_quantile` is the standardized deviation at which a one-sided test with a given
critical value rejects with a given probability: :math:`c + z_{p}` for a z statistic, and for a
Student t statistic with :math:`\nu` degrees of freedom the noncentrality :math:`\delta` with
:math:`P(T_{\nu, \delta} > c) = p` (noncentral t; exact for Gaussian replicates, and larger than
:math:`c + z_p` by about the factor :math:`\sqrt{1 + c^2/(2\nu)}` on :math:`z_p`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import scipy.special

POWER = 0.9  # the probability at which ``detectable`` is reported
Z_POWER = float(-scipy.special.ndtri(1 - POWER))  # z_{0.9} = 1.2816


def detection_quantile(critical: float, power: float = POWER, df: float | None = None) -> float:
    """The standardized deviation beyond the allowance that a one-sided test with critical value
    ``critical`` detects with probability ``power``: ``critical + z_power`` (z statistic, ``df``
    None) or the noncentrality of Student's t with ``df`` degrees of freedom at that power."""
    if df is None or not math.isfinite(df):
        return float(critical - scipy.special.ndtri(1 - power))
    return float(scipy.special.nctdtrinc(df, 1 - power, critical))


def _format(value) -> str:
    array = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else value
    if isinstance(array, str):
        return array
    if array.ndim == 0:
        return f"{float(array):.4g}"
    return " ".join(np.array2string(array, precision=4, max_line_width=200, threshold=20).split())


@dataclasses.dataclass(frozen=True, eq=False)
class CheckResult:
    """One check's outcome. ``statistic`` is the worst standardized statistic and ``threshold`` its
    critical value (each check's docstring says which direction fails); ``estimate``,
    ``expected``, ``standard_error`` and ``detectable`` are floats or arrays (per coordinate);
    ``details`` holds what the check computed on the way (per-coordinate statistics, ...)."""

    name: str
    passed: bool
    alpha: float
    statistic: float
    threshold: float
    estimate: Any = math.nan
    expected: Any = math.nan
    standard_error: Any = math.nan
    detectable: Any = math.nan
    details: dict = dataclasses.field(default_factory=dict)

    def message(self) -> str:
        """One paragraph: name, outcome, estimate +- standard error, expected, statistic against
        threshold, alpha, and the detectable deviation; for a family, the parts that failed."""
        parts = self.details.get("components")
        if parts is not None:
            failed = [p for p in parts if not p.passed]
            head = (f"{self.name}: {'passed' if self.passed else 'FAILED'} ({len(failed)} of {len(parts)} parts "
                    f"failed; family-wise false-failure rate alpha = {self.alpha:.3g})")
            return "\n".join([head] + [f"  - {p.message()}" for p in failed])
        known = lambda value: not np.all(np.isnan(np.asarray(value, dtype=np.float64)))  # noqa: E731
        text = f"{self.name}: {'passed' if self.passed else 'FAILED'}. Estimate {_format(self.estimate)}"
        if known(self.standard_error):
            text += f" +- {_format(self.standard_error)} (standard error)"
        if known(self.expected):
            text += f", expected {_format(self.expected)}"
        text += (f"; worst statistic {self.statistic:.4g} against threshold {self.threshold:.4g}; designed "
                 f"false-failure rate alpha = {self.alpha:.3g}")
        if known(self.detectable):
            text += f"; detects a deviation of {_format(self.detectable)} with probability {POWER}"
        note = self.details.get("note")
        return f"{text}. {note.strip()}" if note else f"{text}."

    def assert_passed(self) -> CheckResult:
        """``self``, or AssertionError with :meth:`message`."""
        if not self.passed:
            raise AssertionError(self.message())
        return self

    def assert_failed(self) -> CheckResult:
        """``self`` if the check failed (a planted error or a power test), else AssertionError."""
        if self.passed:
            raise AssertionError(f"expected to fail (planted error or power test), but {self.message()}")
        return self

    def as_row(self) -> dict:
        """A flat dict of scalars for a table: the scalar fields, the array fields at the worst
        coordinate (``worst_coordinate``, flat index) with ``num_coordinates``, and the scalar details."""
        row = {"name": self.name, "passed": bool(self.passed), "alpha": float(self.alpha),
               "statistic": float(self.statistic), "threshold": float(self.threshold)}
        worst = int(self.details.get("worst", 0))
        sizes = [np.size(getattr(self, f)) for f in ("estimate", "expected", "standard_error", "detectable")]
        for field in ("estimate", "expected", "standard_error", "detectable"):
            flat = np.ravel(np.asarray(getattr(self, field), dtype=np.float64))
            row[field] = float(flat[min(worst, flat.size - 1)]) if flat.size else math.nan
        if max(sizes) > 1:
            row["worst_coordinate"], row["num_coordinates"] = worst, int(max(sizes))
        for key, value in self.details.items():
            scalar = isinstance(value, bool | int | float | str | np.bool_ | np.integer | np.floating)
            if scalar and key not in row and key not in ("worst", "note"):
                row[key] = value.item() if isinstance(value, np.generic) else value
        return row
