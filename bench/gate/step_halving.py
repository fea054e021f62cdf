r"""Is a claimed reference configuration consistent, i.e. does its bias shrink with the step?

``sgbench validate`` (``bench.gate.validate``) compares a candidate with the suite's sampler it claims,
allowing the reference's bias at the claimed configuration. That is sound only if the reference
itself samples the target there. Where no stored design bias covers the configuration, the
reference is held to truth by its order in the step: a method whose bias comes from the step
with order :math:`p \ge 1` has :math:`\beta(h/2) \approx \beta(h)/2^p`.

The reference runs at step :math:`h` and again at :math:`h/2` for twice the steps (every other
hyperparameter as claimed; :func:`halved`). Per statistic :math:`s` (the standardised mean error
and the relative second-moment error :math:`r`, both against the law the reference samples) and
coordinate :math:`i`, with :math:`\hat\beta_{si}`, :math:`\hat\beta'_{si}` the means over the
independent chains of the two runs and :math:`se`, :math:`se'` their standard errors,

.. math:: z_{si} = \operatorname{sign}(\hat\beta_{si})\,(\hat\beta'_{si} - \hat\beta_{si}/2)
          \big/ \sqrt{se'^2_{si} + se^2_{si}/4}.

The check fails when :math:`\max_{si} z_{si}` exceeds the one-sided Student critical value
:math:`t_\nu(1 - \alpha/(2d))` (Bonferroni over the :math:`2d` statistics and coordinates;
:math:`\nu = \min(n, n') - 1`, the conservative degrees of freedom of a two-sample difference with
unequal variances). Under :math:`|\beta'| \le |\beta|/2` (same sign) its false-failure rate is at most
:math:`\alpha`; where the true :math:`\beta_{si} = 0` the estimated sign makes the numerator's mean
:math:`-E|\hat\beta_{si}|/2 \le 0` (conservative). It detects, with probability 0.9, an excess
:math:`\operatorname{sign}(\beta)(\beta' - \beta/2)` of :math:`\delta_{0.9}\sqrt{se'^2 + se^2/4}`
(``detectable``; :math:`\delta_{0.9}` the noncentral-t quantile, ``reference.checks.result``).

What it catches: a bias that does not shrink with the step. A gradient-free random walk started at
exact draws has :math:`r \propto h\,n` (:math:`n` steps), so :math:`\beta' = \beta`; PX's prior bias
and any bias that stays at fixed per-step parameters (a per-step friction or diffusion, a momentum
refresh every :math:`L` steps, Chen's form of SGHMC and SGNHT) do not halve either. What it cannot
see: a bias of the right order but wrong size (that is the candidate's checks' job, and the stored
design biases'). The gate's chains start at exact draws of the untempered target, so at a
temperature :math:`T \ne 1` the run also carries a transient of the relaxation from
:math:`\Sigma` to :math:`T\Sigma`, the same in both runs (same simulated time for a first-order
method): it adds about half of itself to the numerator.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.special

from bench.gate.cells import Cell
from reference.checks import POWER, CheckResult, detection_quantile, standard_error
from reference.checks._validate import check_alpha, replicates

STEP = "step_size"
STATISTICS = {"mean_error": "mean error", "second_moment_error": "r"}


def halved(cell: Cell) -> Cell:
    """``cell`` at half its ``step_size`` for twice the steps (and burn-in), every other
    hyperparameter unchanged. ValueError naming ``step_size`` if the cell has none."""
    if STEP not in cell.params:
        raise ValueError(f"{cell.sampler} has no {STEP} hyperparameter to halve, got {sorted(cell.params)}")
    return dataclasses.replace(cell, params={**cell.params, STEP: cell.params[STEP] / 2},
                               num_steps=2 * cell.num_steps, num_burnin=2 * cell.num_burnin)


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
