"""Statistical assertions with a stated false-failure rate and a stated power.

Every check returns a :class:`CheckResult` (``assert_passed``, ``assert_failed``, ``as_row``):

- ``replicates``: independent replicates (per-chain averages): Johnson's skewness-corrected or
  Student's t, with an allowance, Bonferroni over coordinates (``mean_check``), and power against
  named wrong answers (``law_check``);
- ``moments``: z-tests of moment estimates with their MCSE (``moment_check``, ``moment_law_check``,
  ``expectation_mcse``);
- ``normal_draws``: z- and chi-square tests of iid Gaussian draws (one-step laws);
- ``b2_bound``: the chi-square bound on b^2 with a floor (``b2_check``);
- ``p_values``: Holm or Bonferroni over p-values (``p_value_check``, ``binomial_p_values``);
- ``quantiles``: exact binomial counts below a reference quantile, for heavy-tailed replicates
  (``quantile_check``);
- ``empirical``: thresholds from reseeded runs of a correct sampler (``EmpiricalNull``);
- ``family``: ``bonferroni``, ``holm``, ``all_of``;
- ``rates``: the Clopper-Pearson upper bound on a measured rate (``rate_upper_bound``).
"""

from sgbench.reference.checks.b2_bound import b2_check, b2_noise_bound
from sgbench.reference.checks.empirical import EmpiricalNull
from sgbench.reference.checks.family import all_of, bonferroni, holm
from sgbench.reference.checks.moments import (
    ExpectationMCSE,
    expectation_mcse,
    moment_check,
    moment_law_check,
    z_critical,
)
from sgbench.reference.checks.normal_draws import normal_draws_check
from sgbench.reference.checks.p_values import binomial_p_values, p_value_check
from sgbench.reference.checks.quantiles import quantile_check
from sgbench.reference.checks.rates import rate_upper_bound
from sgbench.reference.checks.replicates import johnson_t, law_check, mean_check, standard_error, student_t, t_critical
from sgbench.reference.checks.result import POWER, Z_POWER, CheckResult, detection_quantile
from sgbench.reference.checks.wrong_answers import wrong_answer_check

__all__ = [
    "rate_upper_bound",
    "POWER", "Z_POWER", "CheckResult", "EmpiricalNull", "ExpectationMCSE", "all_of", "b2_check", "b2_noise_bound",
    "binomial_p_values", "bonferroni", "detection_quantile", "expectation_mcse", "holm", "johnson_t", "law_check",
    "mean_check", "moment_check", "moment_law_check", "normal_draws_check", "p_value_check", "standard_error",
    "quantile_check", "student_t", "t_critical", "wrong_answer_check", "z_critical",
]
