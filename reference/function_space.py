r"""A run scored on predictive moments against a function-space reference: a stored NUTS reference of a target
whose ``reference_quantities`` are predictions (``bnn``'s predictive means at fixed test points) rather than
parameters.

For each kept quantity :math:`k` (a test point), with the run's mean :math:`m_k` and sd :math:`s_k` over its kept
draws and the reference's :math:`\bar m_k`, :math:`\bar s_k` from its header moments:

- ``predictive_mean_max_abs_z``: :math:`\max_k |m_k - \bar m_k| / \sqrt{se_k^2 + \overline{se}_k^2}`, the run's
  Monte Carlo error :math:`se_k = s_k / \sqrt{\mathrm{ESS}_k}` (bulk ESS over its chains) and the reference's
  stored one; a correct sampler gives about the maximum of K standard normals;
- ``predictive_mean_error_sd``: :math:`\sqrt{\frac1K\sum_k ((m_k - \bar m_k)/\bar s_k)^2}`, the error of the
  predictive means in posterior standard deviations;
- ``predictive_std_relative_error``: :math:`\|s - \bar s\| / \|\bar s\|`, the MAMBA paper's
  :math:`\xi(\sigma)` taken on the predictions.
"""

from __future__ import annotations

import numpy as np

from sgbench.reference import store


def has_reference(target, directory=None) -> bool:
    """Whether ``target`` keeps ``reference_quantities`` and a reference of it is stored in ``directory``."""
    return hasattr(target, "reference_quantities") and all(p.is_file() for p in store.paths(target, directory))


def predictive_moment_scores(target, samples, directory=None) -> dict[str, float]:
    """The scores of the module docstring for a run's kept ``samples`` (chains, draws, dim; finite) against
    ``target``'s stored reference (``sgbench.reference.store``; an error naming the build command when none is stored).

    Args:
        target: a target with ``reference_quantities``.
        samples: the run's kept draws, shape (chains, draws, dim), at least 4 draws per chain.
        directory: the reference folder (default ``reference/data``).

    Returns:
        ``{"predictive_mean_max_abs_z", "predictive_mean_error_sd", "predictive_std_relative_error"}``.
    """
    from sgbench.reference.metrics import ess

    header = store.read_header(target, directory)
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim != 3 or x.shape[1] < 4 or not np.all(np.isfinite(x)):
        raise ValueError(f"samples must be finite draws of shape (chains, draws >= 4, dim), got shape {x.shape}")
    quantities = target.reference_quantities(x)
    mean, sd = quantities.mean(axis=(0, 1)), quantities.std(axis=(0, 1), ddof=1)
    se = sd / np.sqrt(np.maximum(ess(quantities, method="bulk"), 1.0))
    moments = {key: np.asarray(value, dtype=np.float64) for key, value in header["moments"].items()}
    ref_mean, ref_se = moments["mean"], moments["mean_se"]
    ref_sd = np.sqrt(np.maximum(moments["second_moment"] - ref_mean**2, 0.0))
    z = (mean - ref_mean) / np.sqrt(se**2 + ref_se**2)
    return {"predictive_mean_max_abs_z": float(np.max(np.abs(z))),
            "predictive_mean_error_sd": float(np.sqrt(np.mean(((mean - ref_mean) / ref_sd) ** 2))),
            "predictive_std_relative_error": float(np.linalg.norm(sd - ref_sd) / np.linalg.norm(ref_sd))}
