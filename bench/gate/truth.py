r"""Tier-2 checks of one gate run against truth (``DESIGN.md``), each with false-failure rate
``alpha``, made with the statistical-assertion layer ``sgbench.reference.checks``:

- ``finite``: no chain diverged (deterministic: a diverged chain fails, rate 0 at the cells'
  stable steps);
- ``mean``: per coordinate, the chains' standardised mean errors :math:`m_{ij}` average to the
  method's design bias :math:`\beta^m_i` (``sgbench.bench.gate.design_bias``), a skewness-corrected t-test
  over the independent chains, Bonferroni over coordinates;
- ``second_moment``: the same for the relative second-moment errors :math:`r_{ij}` and
  :math:`\beta^r_i`;
- ``b2``: the chi-square bound on :math:`b^2 = \operatorname{mean}_i \bar r_i^2` with the floor
  :math:`\operatorname{mean}_i(|\beta^r_i| + t\,s_i)^2`, the largest design b^2 the stored estimate
  allows.

Heavy-tailed cells (``Cell.heavy_tailed``: chains that make rare huge excursions, where the CLT
fails at small rates) replace ``mean`` and ``second_moment`` by the distribution-free
``sgbench.reference.checks.quantiles.quantile_check`` against the stored medians of the design run (exact
binomial counts of chains below the median) and ``b2``, a CLT bound on r, by ``magnitude``: the
t-test of ``mean`` on the log variance ratio :math:`\ell_{ij} = \log(1 + r_{ij})` against its
design mean. A median count alone misses a shift of the whole body of r that is small against
the chains' spread (issue 18: a -0.3 shift in r passed); on the log scale the rare huge excursions
that break the CLT for r are tame, so the t-test's rate holds there.

The design bias is itself an estimate with standard error :math:`s_i`; widening each two-sided
interval by :math:`t\,s_i` (``t`` the check's own critical value) keeps the rate at most
``alpha``, since :math:`t\sqrt{se^2 + s^2} \le t\,se + t\,s`. Each result reports the smallest
deviation it detects with probability 0.9 (``detectable``).
"""

from __future__ import annotations

import numpy as np

from sgbench.bench.gate.replicates import Replicates
from sgbench.reference.checks import CheckResult, b2_check, mean_check, quantile_check, standard_error, t_critical


def finite_check(diverged: np.ndarray) -> CheckResult:
    """Fails if any chain diverged (non-finite position)."""
    count = int(np.sum(diverged))
    return CheckResult(name="finite", passed=count == 0, alpha=0.0, statistic=float(count), threshold=0.0,
                       estimate=float(count), expected=0.0, standard_error=0.0, detectable=1.0,
                       details={"num_chains": int(np.size(diverged))})


def truth_checks(rep: Replicates, design: dict | None, alpha: float, floor_b2: float = 0.0,
                 quadrature: bool = False) -> list[CheckResult]:
    r"""The four checks of one run (``rep`` with one group), each at ``alpha``. ``design``: the
    stored design bias of the cell (None: no bias allowed beyond ``floor_b2`` for b^2, e.g. a
    user's claim in ``sgbench validate``). ``quadrature``: widen by :math:`t(\sqrt{se^2 + s^2} - se)`
    instead of :math:`t\,s` (the two-sample criterion :math:`|d| \le t\sqrt{se^2 + s^2}`, for a design
    estimated from a run of its own whose estimate is about normal, as ``sgbench validate``'s reference)."""
    if rep.groups != 1:
        raise ValueError(f"truth_checks takes one run (one group), got {rep.groups}")
    diverged = rep.diverged[0]
    results = [finite_check(diverged)]
    healthy = ~diverged
    if healthy.sum() < 2:
        return results
    m, r = rep.mean_error[0][healthy], rep.second_moment_error[0][healthy]
    chains, dim = r.shape
    crit = t_critical(chains, dim, alpha)
    if rep.cell.heavy_tailed and design is not None:
        ell = rep.log_variance_ratio[0][healthy]
        return results + [quantile_check(x, design[f"{key}_median"], alpha=alpha, reference_count=design["num_chains"],
                                         name=name)
                          for name, x, key in (("mean", m, "mean_error"), ("second_moment", r, "second_moment_error"))
                          ] + [mean_check(ell, np.asarray(design["log_variance_ratio"]), alpha=alpha, name="magnitude",
                                          allowance=crit * np.asarray(design["log_variance_ratio_se"]))]
    for name, x, key in (("mean", m, "mean_error"), ("second_moment", r, "second_moment_error")):
        bias = np.zeros(dim) if design is None else np.asarray(design[key])
        spread = np.zeros(dim) if design is None else np.asarray(design[f"{key}_se"])
        se = standard_error(x)
        widen = crit * (np.sqrt(se**2 + spread**2) - se if quadrature else spread)
        results.append(mean_check(x, bias, alpha=alpha, allowance=widen, name=name))
    if design is not None:
        floor_b2 = float(np.mean((np.abs(design["second_moment_error"])
                                  + crit * np.asarray(design["second_moment_error_se"])) ** 2))
    results.append(b2_check(r.mean(axis=0), standard_error(r), alpha=alpha, floor=floor_b2, df=chains - 1, name="b2"))
    return results
