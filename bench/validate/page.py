"""The page ``sgbench validate`` writes (``validate_<name>.html``) from a :class:`Validation` (what
``sgbench.bench.validate.validate.validate`` computed): the verdict (green PASSED, red FAILED, black INCONCLUSIVE),
each target's outcome, what it was held to and what it cost (the remedies' runs included), how far the chains
travelled, every check with a legend in words, the metrics beside the reference's, and each target's relative
variance error per coordinate against what the candidate is compared with."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.validate.result import Validation

CHECK_COLUMNS = {"target": "target", "of": "against", "name": "check", "passed": "passed",
                 "statistic": "statistic", "threshold": "threshold", "estimate": "estimate",
                 "standard_error": "se", "expected": "expected", "largest_detectable": "detects (90 %)",
                 "worst_coordinate": "coordinate", "outcome": "ladder", "order": "weak order", "rungs": "rungs"}
CHECK_LEGEND = {
    "against": "what the candidate (or the reference) is compared with: truth, the suite's sampler, its exact "
               "discrete-time law or stored design bias, or its own runs at smaller steps (its step ladder)",
    "check": "finite: no chain diverged; mean: standardised mean error; second_moment: relative variance error r; "
             "b2: mean over coordinates of r squared; step_ladder: the error extrapolated to a vanishing step "
             "(estimate) from the runs at h, h/2, h/4, ...",
    "passed": "whether the check passed at the step it ran; False on a PASSED target is a check the outcome's "
              "reason sets aside: a discretisation bias its step ladder shows to vanish, or a bias shared with the "
              "claimed reference, which is held to truth",
    "statistic": "the check's standardised statistic at its worst coordinate (t, z or chi-square); it fails above "
                 "the threshold",
    "threshold": "the critical value at the check's false-failure rate, split over coordinates (Bonferroni)",
    "estimate": "the estimate at the worst coordinate, ± its standard error over independent chains",
    "expected": "what it is compared with at that coordinate (the reference's estimate, the law's value, or 0)",
    "detects (90 %)": "the smallest deviation the check finds with probability 0.9, largest over coordinates "
                      "(compared with --detect)",
    "coordinate": "the worst coordinate's index",
    "ladder": "step_ladder rows: whether the error vanishes as the step shrinks (vanishes), does not (persists), or "
              "cannot yet be told (undecided)",
    "weak order": "step_ladder rows: the order p of the error's leading term c h^p that fits the finest rungs best",
    "rungs": "step_ladder rows: the steps run, h, h/2, h/4, ...",
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


def figures(validation: Validation) -> dict[str, bytes]:
    """The page's figure: per target, the relative variance error per coordinate (± 2 se) of each run, against the
    target at its temperature.

    Args:
        validation: what the validation computed.

    Returns:
        ``{heading: PNG}``; empty when no run kept healthy chains.
    """
    from sgbench.bench.html import error_bar_figure

    if not validation.series:
        return {}
    verdict, temperatures = validation.verdict, list(validation.temperatures)
    tempered = f" at temperature {temperatures[0]:g} (tempered Gaussian targets)" if temperatures != [1.0] else ""
    return {"Relative variance error per target": error_bar_figure(
        dict(validation.series), f"{verdict.name}: {verdict.outcome.name}",
        xlabel=f"relative variance error r per coordinate against the target{tempered} (± 2 se)")}


def _unused(path: Path) -> Path:
    """``path``, or where a file is already there, the first of ``NAME-2.html``, ``NAME-3.html``, ... that is not."""
    candidate, k = path, 2
    while candidate.exists():
        candidate, k = path.with_name(f"{path.stem}-{k}{path.suffix}"), k + 1
    return candidate


def write(validation: Validation, overwrite: bool = False) -> Path:
    """Write ``validation``'s page (module docstring) at its verdict's ``report`` path, or, where an earlier run's
    page is there, beside it (``validate_NAME-2.html``, ...; the verdict's ``report`` says which) unless
    ``overwrite``.

    Args:
        validation: what the validation computed.
        overwrite: replace a page already at the path (the runs of ``--reseed``, each a seed's page).

    Returns:
        the page's path.
    """
    from sgbench.bench.html import write_page

    if not overwrite:
        validation.verdict.report = _unused(Path(validation.verdict.report))

    verdict, resolution = validation.verdict, validation.resolution
    outcomes = pd.DataFrame({"target": list(verdict.outcomes), "outcome": [o.name for o in verdict.outcomes.values()],
                             "reason": [verdict.reasons[k] for k in verdict.outcomes],
                             "held to": [verdict.basis[k] for k in verdict.outcomes],
                             "seconds": [verdict.costs.get(k, (float("nan"),) * 2)[0] for k in verdict.outcomes],
                             "gradient evaluations": [verdict.costs.get(k, (float("nan"),) * 2)[1]
                                                      for k in verdict.outcomes]})
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
    passed = None if verdict.unfinished else {Outcome.PASSED: True, Outcome.FAILED: False}.get(verdict.outcome)
    detect = (f"detect r >= {resolution.relative_variance:g} (mean error >= {resolution.threshold('mean'):.2g} "
              "sd)")
    notes = (f"Hyperparameters {validation.params}; per-check false-failure rate {validation.alpha:.2g} over all "
             f"its looks; {detect}; budget {validation.budget}; seed {validation.seed}. " + validation.differences)
    return write_page(verdict.report, f"Validation of {verdict.name}", verdict.headline(), passed, tables,
                      figures(validation), notes=notes, legends=legends, errors=errors)
