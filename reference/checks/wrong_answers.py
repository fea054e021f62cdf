r"""Power against a named wrong answer: a check designed to reject it, and seen to.

Given a passing check of an estimate against the expected value (standard errors :math:`se_i`,
allowance :math:`a_i`, critical value :math:`c`) and the same check run against a wrong answer
:math:`w`, the wrong answer counts as rejected when

- by design: :math:`\max_i (|w_i - e_i| - a_i)/se_i > \delta_{1-\beta}`, the standardized deviation
  that the one-sided test detects with probability :math:`1 - \beta` (``sure`` = :math:`\beta`;
  ``result.detection_quantile``): were the estimate correct, the check against :math:`w` would fail
  with probability at least :math:`1 - \beta`;
- by the data: the check against :math:`w` failed.

A correct estimate leaves a wrong answer unrejected with probability at most :math:`\beta`, so this
check's false-failure rate is ``sure``.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.checks._validate import check_alpha, on_coordinates
from sgbench.reference.checks.family import all_of
from sgbench.reference.checks.result import CheckResult, detection_quantile


def wrong_answer_check(null: CheckResult, wrong, against: CheckResult, *, sure: float, name: str) -> CheckResult:
    """Passes iff the wrong answer ``wrong`` is rejected by design (against ``null``'s standard
    errors, allowance and critical value) and by the data (``against``, the same check run against
    ``wrong``, failed). ``statistic``: the largest standardized distance of ``wrong`` beyond the
    allowance; ``threshold``: the distance required (passes iff statistic > threshold)."""
    shape = np.shape(null.expected)
    wrong = on_coordinates("wrong answer", wrong, shape)
    allowance = null.details.get("allowance", 0.0)
    distance = (np.abs(wrong - null.expected) - allowance) / null.standard_error
    index = int(np.argmax(np.ravel(distance)))
    margin = float(np.ravel(distance)[index])
    required = detection_quantile(null.threshold, 1 - sure, null.details.get("df"))
    design, data = margin > required, not against.passed
    return CheckResult(
        name=name, passed=bool(design and data), alpha=float(sure), statistic=margin, threshold=required,
        estimate=null.estimate, expected=wrong, standard_error=null.standard_error, detectable=null.detectable,
        details={"design": bool(design), "rejected_by_data": bool(data), "worst": index,
                 "note": ("" if design else f"Too weak by design: this check rejects it with probability below "
                                            f"{1 - sure:.6g}. ")
                 + ("" if data else "Not rejected by the data. ")})


def law(null: CheckResult, wrong_answers: dict, against, *, sure, name: str) -> CheckResult:
    """``null`` and, for each wrong answer (name -> values on ``null``'s coordinates), a
    :func:`wrong_answer_check` with ``against(wrong, name)``, the same check run against it; passes
    iff all pass (``family.all_of``). ``sure``: None for ``null.alpha``."""
    sure = null.alpha if sure is None else check_alpha(sure, "sure")
    parts = []
    for label, wrong in wrong_answers.items():
        wrong = on_coordinates(f"wrong answer '{label}'", wrong, np.shape(null.expected))
        parts.append(wrong_answer_check(null, wrong, against(wrong, f"{name} against '{label}'"), sure=sure,
                                        name=f"{name}: rejects '{label}'"))
    return all_of([null, *parts], name=name)
