r"""Is a claimed reference configuration consistent, i.e. does its bias shrink with the step?

Where no stored design bias covers a configuration claimed in ``sgbench validate``
(``sgbench.bench.gate.validate``), the reference is held to truth by its order in the step: a method whose bias
comes from the step with order :math:`p \ge 1` has :math:`\beta(h/2) \approx \beta(h)/2^p`. The reference
runs at step :math:`h` and again at :math:`h/2` for twice the steps (:func:`halved`). Per statistic
:math:`s` (the standardised mean error, the relative second-moment error :math:`r`) and coordinate
:math:`i`, with :math:`\hat\beta_{si}`, :math:`\hat\beta'_{si}` the means over the chains of the two runs and
:math:`se`, :math:`se'` their standard errors,

.. math:: z_{si} = \operatorname{sign}(\hat\beta_{si})\,(\hat\beta'_{si} - \hat\beta_{si}/2)
          \big/ \sqrt{se'^2_{si} + se^2_{si}/4}.

The check fails when :math:`\max_{si} z_{si}` exceeds :math:`t_\nu(1 - \alpha/(2d))`,
:math:`\nu = \min(n, n') - 1` (false-failure rate at most :math:`\alpha` under :math:`|\beta'| \le |\beta|/2`).
It catches a bias that does not shrink with the step (a random walk, PX's prior, fixed per-step
parameters), not a bias of the right order but the wrong size.

Derivation and notes: docs/gates_derivations.md, section sgbench.bench.gate.step_halving.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.special

from sgbench.bench.gate.cells import Cell
from sgbench.reference.checks import POWER, CheckResult, detection_quantile, standard_error
from sgbench.reference.checks._validate import check_alpha, replicates

STEP = "step_size"
STATISTICS = {"mean_error": "mean error", "second_moment_error": "r"}


def halved(cell: Cell) -> Cell:
    """``cell`` at half its ``step_size`` for twice the steps (and burn-in, and ``thin``: as many draws read),
    every other hyperparameter unchanged. ValueError naming ``step_size`` if the cell has none."""
    if STEP not in cell.params:
        raise ValueError(f"{cell.sampler} has no {STEP} hyperparameter to halve, got {sorted(cell.params)}")
    return dataclasses.replace(cell, params={**cell.params, STEP: cell.params[STEP] / 2},
                               num_steps=2 * cell.num_steps, num_burnin=2 * cell.num_burnin, thin=2 * cell.thin)


def halving_check(at_step: dict, at_half_step: dict, *, alpha: float, name: str = "step_halving") -> CheckResult:
    """The step-halving check (module docstring).

    Args:
        at_step: per statistic of ``STATISTICS``, the chains' values (chains, dim) at step h,
            against the law the reference samples.
        at_half_step: the same at h/2 with twice the steps.
        alpha: the false-failure rate, in (0, 1).
        name: the check's name.

    Returns:
        A CheckResult on the (statistic, coordinate) grid: ``estimate`` sign(beta) beta',
        ``expected`` sign(beta) beta / 2; ``details`` ``at_step`` and ``at_half_step`` (the means),
        ``statistics`` (the grid's row labels) and a ``note`` naming the worst entry.
    """
    alpha = check_alpha(alpha)
    x = [replicates(f"at_step[{key!r}]", at_step[key]) for key in STATISTICS]
    y = [replicates(f"at_half_step[{key!r}]", at_half_step[key]) for key in STATISTICS]
    beta, beta_half = np.array([v.mean(axis=0) for v in x]), np.array([v.mean(axis=0) for v in y])
    se = np.sqrt(np.array([standard_error(v) for v in y]) ** 2 + np.array([standard_error(v) for v in x]) ** 2 / 4)
    sign = np.where(beta < 0, -1.0, 1.0)
    z = sign * (beta_half - beta / 2) / se
    df = min(x[0].shape[0], y[0].shape[0]) - 1
    critical = float(-scipy.special.stdtrit(df, alpha / z.size))
    worst = int(np.nanargmax(z)) if not np.all(np.isnan(z)) else 0
    s, i = np.unravel_index(worst, z.shape)
    label = list(STATISTICS.values())[s]
    note = (f"worst: {label} {beta[s, i]:.4g} at step h -> {beta_half[s, i]:.4g} at h/2 in coordinate {i} "
            f"(halving the step should at least halve it)")
    return CheckResult(name=name, passed=bool(np.all(z <= critical)), alpha=alpha, statistic=float(z.flat[worst]),
                       threshold=critical, estimate=sign * beta_half, expected=sign * beta / 2, standard_error=se,
                       detectable=detection_quantile(critical, POWER, df) * se,
                       details={"at_step": beta, "at_half_step": beta_half, "statistics": tuple(STATISTICS),
                                "df": df, "comparisons": z.size, "worst": worst, "note": note})
