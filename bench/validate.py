r"""``sgbench validate MODULE:OBJECT``: is a sampler someone wrote correct, and how fast is it?

The object is a :class:`samplers.Sampler` in the suite's contract, or an adapter of another
library's sampler (:mod:`bench.adapters`). It runs on the gate's targets (``icg4``: 4-d ICG with
isotropic gradient noise; ``linreg``: a 2-d Bayesian linear regression with minibatches of 8 of
40 points) with the gate's chains and steps, from exact draws, and is checked with the gate's
tier-2 checks (``bench.gate.truth``) at the gate's per-check rate (1e-3 over all of a validation's
checks):

- If it *claims* a suite sampler (``--claims``, an adapter's claim, or its own name when that is
  registered), the suite's implementation runs with the same hyperparameters (translated by the
  adapter's ``to_reference``) on 8 times the chains, and its estimate of the method's bias at
  this step is the allowed bias: the candidate must agree with truth shifted by the reference's
  bias, per coordinate, within both standard errors, and its b^2 may not exceed the reference's.
- Otherwise no bias is allowed beyond Monte Carlo error: run it at a step small enough.

The HTML report (``validate_<name>.html``, characters other than letters, digits, ``_.-`` in
the name made ``_``) gives the verdict, every check, b^2, the KL of the
diagonal Gaussian fit and the KSD (of 1000 thinned draws) beside the reference's, and the time per
gradient evaluation of both. Exit status 0 only on a pass.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

import samplers
from bench.gate import cells as gate_cells
from bench.gate.replicates import run_replicates
from bench.gate.runner import ALPHA_RUN, TRUTH_CHECKS
from bench.gate.truth import truth_checks
from reference.metrics import ksd_of_target

REFERENCE_GROUPS = 8  # the reference runs 8 x 64 chains: its bias estimate has 1/sqrt(8) of the candidate's se
KSD_DRAWS = 1000
TARGETS = {"icg": ("icg", gate_cells.ICG4), "linreg": ("linreg", gate_cells.LINREG)}


@dataclasses.dataclass
class Verdict:
    """What validation found: every check, the metrics beside the reference's, the report."""

    name: str
    claims: str | None
    checks: pd.DataFrame
    metrics: pd.DataFrame
    report: Path

    @property
    def passed(self) -> bool:
        return bool(self.checks["passed"].all())

    def summary(self) -> str:
        failed = self.checks[~self.checks["passed"]]
        head = (f"{self.name}: {'PASSED' if self.passed else 'FAILED'} "
                f"({len(self.checks) - len(failed)} of {len(self.checks)} checks passed"
                + (f"; compared with the suite's {self.claims!r})" if self.claims else "; no reference claimed)"))
        lines = [head, self.metrics.to_string(index=False)]
        if len(failed):
            lines.append("failed checks:\n" + failed.to_string(index=False))
        return "\n".join(lines + [f"report: {self.report}"])


def load_sampler(spec: str):
    """The object named by ``MODULE:OBJECT``; a MODULE without dots that names a module of
    ``bench.adapters`` is that module (``blackjax:sgld``). ValueError naming what is wrong."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"sampler must be given as MODULE:OBJECT (e.g. bench.adapters.blackjax:sgld), got {spec!r}")
    if "." not in module_name and importlib.util.find_spec(f"bench.adapters.{module_name}") is not None:
        module_name = f"bench.adapters.{module_name}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import module {module_name!r} for {spec!r}: {error}") from error
    try:
        sampler = getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no object {attribute!r}") from None
    if not isinstance(sampler, samplers.Sampler):
        raise ValueError(f"{spec} is a {type(sampler).__name__}, not a samplers.Sampler (the suite's contract; "
                         "see README, 'The sampler contract', or wrap it with an adapter of bench.adapters)")
    return sampler


def _claimed(sampler, claims):
    claims = claims or getattr(sampler, "claims", None) or (sampler.name if sampler.name in samplers.names() else None)
    if claims is not None and claims not in samplers.names():
        raise ValueError(f"claims must name a suite sampler ({', '.join(samplers.names())}), got {claims!r}")
    return claims


def _row(label, rep, target, cell) -> dict:
    result = rep.results[0]
    samples = result.trace.samples
    ksd_value = np.nan
    if samples is not None:
        pooled = samples[~result.trace.diverged].reshape(-1, samples.shape[-1])
        finite = pooled[np.all(np.isfinite(pooled), axis=1)]
        if len(finite) > 1:
            ksd_value = float(ksd_of_target(finite[:: max(1, len(finite) // KSD_DRAWS)][:KSD_DRAWS], target))
    evals = rep.grad_evals_per_chain * result.config.num_chains
    return {"sampler": label, "target": cell.name.split("@")[1], "b2_mean_pooled": result.metrics.get("b2_mean_pooled"),
            "kl_diagonal_truth_to_fit": result.metrics.get("kl_diagonal_truth_to_fit"), "ksd": ksd_value,
            "diverged_chains": int(result.metrics.get("num_diverged_chains", 0)),
            "grad_evals_per_chain": rep.grad_evals_per_chain,
            "microseconds_per_grad_eval": 1e6 * result.trace.run_seconds / evals if evals else np.nan}


def validate(sampler, params: dict | None = None, claims: str | None = None, targets: str = "all", seed: int = 0,
             num_chains: int = gate_cells.NUM_CHAINS, num_steps: int = gate_cells.NUM_STEPS,
             out: Path = Path("reports") / "latest", progress=print) -> Verdict:
    """Validate ``sampler`` with hyperparameters ``params`` (see the module docstring) on
    ``num_chains`` chains of ``num_steps`` steps per target (the gate's by default; fewer for a
    sampler that only the one-chain NumPy driver can run, such as a torch adapter)."""
    from bench.gate.html import error_bar_figure, write_page

    params = dict(params or {})
    claims = _claimed(sampler, claims)
    backend = getattr(sampler, "backend", "jax")
    adapted_claim = getattr(sampler, "claims", None)
    reference_params = sampler.to_reference(params) if claims and claims == adapted_claim else params
    chosen = list(TARGETS) if targets == "all" else [targets]
    if not set(chosen) <= set(TARGETS):
        raise ValueError(f"targets must be one of {', '.join(TARGETS)} or 'all', got {targets!r}")
    alpha = ALPHA_RUN / (len(chosen) * TRUTH_CHECKS)
    keep = dict(keep_samples=True, thin=max(1, num_steps // 100))
    rows, metric_rows, series = [], [], {}
    for key in chosen:
        name, target_params = TARGETS[key]
        wrapper = "single_layer" if (claims or "").startswith("px_") else None
        cell = gate_cells.Cell(sampler.name, params, target=name, target_params=dict(target_params), wrapper=wrapper,
                               heavy_tailed=claims in gate_cells.HEAVY_TAILED, num_chains=num_chains,
                               num_steps=num_steps)
        target = cell.make_target()
        progress(f"{cell.name}: running the candidate ({backend} driver)")
        candidate = run_replicates(cell, seed=seed, sampler=sampler, backend=backend, **keep)
        design = None
        if claims is not None:
            reference_cell = dataclasses.replace(cell, sampler=claims, params=reference_params)
            progress(f"{cell.name}: running the suite's {claims} ({REFERENCE_GROUPS} x {cell.num_chains} chains)")
            reference = run_replicates(reference_cell, groups=REFERENCE_GROUPS, seed=seed + 1000, **keep)
            design = reference.summary()  # the allowed bias
            metric_rows.append(_row(f"suite {claims}", reference, target, cell))
        rows += [{"target": key, **c.as_row()} for c in truth_checks(candidate, design, alpha)]
        metric_rows.append(_row(sampler.name, candidate, target, cell))
        for label, summary in ((sampler.name, candidate.summary()), (f"suite {claims}", design)):
            if summary is not None:
                for store, value in zip(series.setdefault(label, ([], [], [])), (
                        cell.name, summary["second_moment_error"], summary["second_moment_error_se"])):
                    store.append(value)
    checks, metrics = pd.DataFrame(rows), pd.DataFrame(metric_rows)
    passed = bool(checks["passed"].all())
    verdict = (f"{sampler.name} {'passes' if passed else 'FAILS'} validation"
               + (f" as {claims}" if claims else " (no reference claimed: no bias allowed)"))
    figures = {"Relative second-moment error beside the reference": error_bar_figure(
        {label: tuple(v) for label, v in series.items()}, verdict)}
    safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", sampler.name)
    report = write_page(Path(out) / f"validate_{safe_name}.html", f"Validation of {sampler.name}", verdict, passed,
                        {"Checks": checks, "Metrics beside the reference": metrics}, figures,
                        notes=f"hyperparameters {params}; reference hyperparameters {reference_params}; "
                              f"per-check false-failure rate {alpha:.2g}. "
                              + getattr(sampler, "differences", ""))
    return Verdict(sampler.name, claims, checks, metrics, report)

