"""The page ``sgbench validate`` writes (``validate_<name>.html``): the verdict (green PASSED, red FAILED, black
INCONCLUSIVE), each target's outcome and what it was held to, how far the chains travelled, every check with a
legend in words, the metrics beside the reference's, and each target's relative variance error per coordinate
against what the candidate is compared with."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.verdict import Verdict

CHECK_COLUMNS = {"target": "target", "of": "against", "name": "check", "passed": "passed",
                 "statistic": "statistic", "threshold": "threshold", "estimate": "estimate",
                 "standard_error": "se", "expected": "expected", "largest_detectable": "detects (90 %)",
                 "worst_coordinate": "coordinate"}
CHECK_LEGEND = {
    "against": "what the candidate (or the reference) is compared with: truth, the suite's sampler, its exact "
               "discrete-time law or stored design bias, or its own run at half the step",
    "check": "finite: no chain diverged; mean: standardised mean error; second_moment: relative variance error r; "
             "b2: mean over coordinates of r squared; step_halving: the error halves with the step",
    "statistic": "the check's standardised statistic at its worst coordinate (t, z or chi-square); it fails above "
                 "the threshold",
    "threshold": "the critical value at the check's false-failure rate, split over coordinates (Bonferroni)",
    "estimate": "the estimate at the worst coordinate, ± its standard error over independent chains",
    "expected": "what it is compared with at that coordinate (the reference's estimate, the law's value, or 0)",
    "detects (90 %)": "the smallest deviation the check finds with probability 0.9, largest over coordinates "
                      "(compared with --detect)",
    "coordinate": "the worst coordinate's index",
}
TRAVEL_LEGEND = {
    "median distance travelled (sd)": "median over chains of the distance from start to last draw, in target "
                                      "standard deviations, in the coordinate where it is least (below 0.01: "
                                      "the chains do not move)",
    "autocorrelation time (steps)": "integrated autocorrelation time from the multi-chain bulk ESS of the scored "
                                    "draws; the chains forgot their start when the warm-up is at least twice it",
}
METRICS_LEGEND = {
    "max |r|": "largest relative variance error over coordinates, against the target at T = 1",
    "b2_mean_pooled": "b^2 of the pooled chains (SMILE appendix C)",
    "ksd": "kernel Stein discrepancy of 1000 thinned draws",
    "microseconds_per_grad_eval": "run time per gradient evaluation, all chains together",
}


def _checks(frame: pd.DataFrame) -> pd.DataFrame:
    """The check rows with the columns a reader needs, named in words."""
    if not len(frame):
        return frame
    kept = [c for c in CHECK_COLUMNS if c in frame]
    return frame[kept].rename(columns=CHECK_COLUMNS)


def write(verdict: Verdict, params: dict, alpha: float, detect: str, figures: dict[str, bytes],
          differences: str = "") -> Path:
    """Write ``verdict``'s page (module docstring).

    Args:
        verdict: the verdict.
        params: the candidate's hyperparameters as given.
        alpha: the per-check false-failure rate.
        detect: the bias to resolve, in words.
        figures: ``{heading: PNG}``.
        differences: what an adapter says still differs from its reference.

    Returns:
        the page's path.
    """
    from sgbench.bench.html import write_page

    outcomes = pd.DataFrame({"target": list(verdict.outcomes), "outcome": [o.name for o in verdict.outcomes.values()],
                             "reason": [verdict.reasons[k] for k in verdict.outcomes],
                             "held to": [verdict.basis[k] for k in verdict.outcomes]})
    travel = verdict.travel.drop(columns=["finding"], errors="ignore")
    tables = {"Outcome per target": outcomes, "How far the chains travelled": travel,
              "Checks of the candidate": _checks(verdict.checks),
              "Checks of the claimed reference against truth": _checks(verdict.reference_checks),
              "Metrics beside the reference": verdict.metrics}
    check_errors = {"estimate": "se"}
    errors = {heading: check_errors for heading in ("Checks of the candidate",
                                                    "Checks of the claimed reference against truth")
              if len(tables[heading])}
    legends = {"How far the chains travelled": TRAVEL_LEGEND, "Checks of the candidate": CHECK_LEGEND,
               "Checks of the claimed reference against truth": CHECK_LEGEND,
               "Metrics beside the reference": METRICS_LEGEND}
    passed = {Outcome.PASSED: True, Outcome.FAILED: False}.get(verdict.outcome)
    return write_page(verdict.report, f"Validation of {verdict.name}", verdict.headline(), passed, tables, figures,
                      notes=f"Hyperparameters {params}; per-check false-failure rate {alpha:.2g}; {detect}. "
                            + differences, legends=legends, errors=errors)
