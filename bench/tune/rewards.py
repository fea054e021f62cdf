r"""MAMBA's rewards: :math:`\nu_s = -\mathrm{KSD}(\tilde\pi_s, \pi)` or :math:`-\mathrm{FSSD}(\tilde\pi_s, \pi)`
(MAMBA paper, section 3.2 "Evaluate and Prune", eqs. (3) and (4)), computed as in
section 4.1 on the arm's thinned draws with full-batch gradients (section 3.3 "Estimating KSD/FSSD").

- ``ksd``: the V-statistic of :func:`sgbench.reference.metrics.ksd.ksd` with the IMQ kernel
  :math:`(c^2 + \lVert x - y\rVert^2)^\beta`, :math:`c = 1`, :math:`\beta = -1/2` (Gorham & Mackey 2017,
  whom the paper follows), the chains pooled; the reward is :math:`-\sqrt{\mathrm{KSD}^2}`.
- ``fssd``: FSSD-opt (appendix C.1.3): :math:`J = 10` test locations drawn from a Gaussian fit to the
  draws and optimised with Adam (:func:`sgbench.reference.metrics.fssd.fssd_test`, its defaults), the unbiased
  :math:`\widehat{\mathrm{FSSD}}^2_U` on the held-out draws; the reward is
  :math:`-\operatorname{sign}(F)\sqrt{|F|}` of that estimate :math:`F` (monotone in it; it may be negative).

An arm with a non-finite draw has diverged: its reward is :math:`-\infty`, below every finite arm.
"""

from __future__ import annotations

import math

import numpy as np

from sgbench.base.arguments import one_of
from sgbench.reference.metrics.fssd import fssd_test
from sgbench.reference.metrics.ksd import ksd
from sgbench.reference.metrics.scores import target_scores

METRICS = ("ksd", "fssd")
KSD_C, KSD_BETA = 1.0, -0.5
FSSD_LOCATIONS = 10


def discrepancy(metric: str, samples, target, seed: int = 0) -> float:
    """KSD or FSSD (not squared; FSSD signed as in the module docstring) of ``samples`` (chains, draws, dim)
    against ``target``, with full-batch scores; ``inf`` if a draw is not finite.

    Args:
        metric: one of ``METRICS``.
        samples: the arm's kept draws, (chains, draws, dim).
        target: the Target.
        seed: the FSSD's split and initial locations.

    Returns:
        the discrepancy, >= 0 for KSD.
    """
    one_of("metric", metric, METRICS)
    samples = np.asarray(samples, dtype=np.float64)
    if not np.all(np.isfinite(samples)):
        return math.inf
    x, s = target_scores(samples, target)
    if not np.all(np.isfinite(s)):
        return math.inf
    if metric == "ksd":
        return math.sqrt(max(ksd(x, s, c=KSD_C, beta=KSD_BETA, statistic="v"), 0.0))
    squared = fssd_test(x, s, num_locations=FSSD_LOCATIONS, seed=seed).fssd_squared
    return math.copysign(math.sqrt(abs(squared)), squared)


def reward(metric: str, samples, target, seed: int = 0) -> float:
    """:math:`\\nu_s`: minus :func:`discrepancy` (``-inf`` for a diverged arm)."""
    return -discrepancy(metric, samples, target, seed)
