r"""How often something happened, with a bound: the one-sided Clopper-Pearson (1934) upper bound on a
binomial rate. With :math:`k` events in :math:`n` runs, the upper bound at confidence :math:`1 - a` is the
:math:`1 - a` quantile of :math:`\mathrm{Beta}(k + 1, n - k)` (1 when :math:`k = n`): the largest rate under
which :math:`k` or fewer events still have probability at least :math:`a`. Used for measured false-failure
rates (``sgbench gate --reseed``, ``sgbench validate --reseed``)."""

from __future__ import annotations

import scipy.stats

from sgbench.base.arguments import integer_at_least


def rate_upper_bound(events: int, runs: int, confidence: float = 0.95) -> float:
    """The one-sided Clopper-Pearson upper bound on a rate (module docstring).

    Args:
        events: k, in [0, runs].
        runs: n >= 1.
        confidence: 1 - a, in (0, 1).

    Returns:
        The bound, in (0, 1].
    """
    runs = integer_at_least("runs", runs, 1)
    events = integer_at_least("events", events, 0, runs)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return 1.0 if events >= runs else float(scipy.stats.beta.ppf(confidence, events + 1, runs - events))
