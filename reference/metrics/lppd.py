r"""Log pointwise predictive density (Gelman, Hwang & Vehtari 2014), as defined in the SMILE paper,
appendix B.3, eq. (23), and the MILE paper, appendix A.4, eq. (4):

.. math:: \mathrm{LPPD} = \frac{1}{n} \sum_{i=1}^{n} \log \Big( \frac{1}{KS} \sum_{k=1}^{K} \sum_{s=1}^{S}
          p(y_i \mid \theta^{(k,s)}, x_i) \Big),

pooled over all :math:`K` chains and :math:`S` draws (flatten chains x draws into one samples axis;
pass one chain's draws for a per-chain value). The inner mean is computed as a logsumexp. By Jensen's
inequality it is at least the average per-sample log density.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference.metrics import register
from sgbench.reference.metrics._predictive import finite_array, log_sample_mean


@register("lppd")
def lppd(log_densities) -> float:
    r"""LPPD of per-sample log predictive densities ``log_densities`` (samples, points),
    :math:`\log p(y_i \mid \theta_s, x_i)`; higher is better.

    Args:
        log_densities: per-sample log predictive densities, shape (samples, points), finite.

    Returns:
        float: the LPPD.

    Raises:
        ValueError: another shape, or a non-finite entry.
    """
    return float(np.mean(log_sample_mean(finite_array("log_densities", log_densities, "(samples, points)", 2))))
