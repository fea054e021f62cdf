r"""Kullback-Leibler divergence between a reference Gaussian and the Gaussian fit of samples,
in closed form, as in the SGLRW paper (section 5.2 and Table 1:
"the analytic Kullback-Leibler divergence between the true posterior :math:`N(\mu, \Sigma)` and
the empirical Gaussian fit to the samples, computed from their estimated mean and covariance";
appendix A.5 and Table 2: the reference is itself the Gaussian fit of gold-standard NUTS draws).

For :math:`p = N(m_0, S_0)`, :math:`q = N(m_1, S_1)` in :math:`d` dimensions,

.. math:: KL(p\,\|\,q) = \tfrac12\Big[\operatorname{tr}(S_1^{-1} S_0)
          + (m_1 - m_0)^\top S_1^{-1} (m_1 - m_0) - d + \log\det S_1 - \log\det S_0\Big],

evaluated through Cholesky factors :math:`S_i = L_i L_i^\top`:
:math:`\operatorname{tr}(S_1^{-1} S_0) = \lVert L_1^{-1} L_0\rVert_F^2`, the quadratic form is
:math:`\lVert L_1^{-1}(m_1 - m_0)\rVert^2` and :math:`\log\det S_i = 2\sum_j \log (L_i)_{jj}`.
The fit of samples pools all chains (``GaussianFit.of_samples``). KL is not symmetric; SGLRW
reports KL(truth || fit) ("truth_to_fit"), the default here.

Even exact sampling leaves a floor of order :math:`d^2/N`: ``exact_sampling_kl`` gives the
expected KL of the fit of :math:`N` independent draws of a Gaussian target.
"""

from __future__ import annotations

import numpy as np
import scipy.special

from sgbench.base.arguments import integer_at_least, one_of
from sgbench.reference.metrics import register
from sgbench.reference.metrics._chains import check_dim
from sgbench.reference.metrics.gaussian_fit import GaussianFit
from sgbench.reference.metrics.moments import Moments

DIRECTIONS = ("truth_to_fit", "fit_to_truth")


def _cholesky(covariance: np.ndarray, name: str) -> np.ndarray:
    try:
        return np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        raise ValueError(f"the covariance of {name} is not positive definite (a singular fit: too few "
                         "draws, or a constant or collinear coordinate)") from None


def gaussian_kl(p: GaussianFit, q: GaussianFit, p_name: str = "p", q_name: str = "q") -> float:
    """KL(p || q) of two Gaussians in closed form (formula in the module docstring); diagonal fits
    (variance vectors) stay O(dim).

    Args:
        p: the first Gaussian (full or diagonal).
        q: the second Gaussian, of the same dimension.
        p_name: ``p``'s name, for the messages.
        q_name: ``q``'s name, for the messages.

    Returns:
        float: KL(p || q), >= 0.

    Raises:
        ValueError: the dimensions differ, or a covariance is not positive definite (a variance <= 0).
    """
    check_dim(p_name, p.dim, q.dim, q_name)
    if p.diagonal and q.diagonal:
        for fit, name in ((p, p_name), (q, q_name)):
            if not np.all(fit.covariance > 0):
                raise ValueError(f"the variances of {name} must all be > 0 (a singular fit)")
        ratio = p.covariance / q.covariance
        quad = (q.mean - p.mean) ** 2 / q.covariance
        return float(0.5 * np.sum(ratio + quad - 1.0 - np.log(ratio)))
    full = lambda fit: np.diag(fit.covariance) if fit.diagonal else fit.covariance
    l_p, l_q = _cholesky(full(p), p_name), _cholesky(full(q), q_name)
    # One solve with both right-hand sides (NumPy's LAPACK solve: cheap for small dim).
    solved = np.linalg.solve(l_q, np.column_stack([l_p, q.mean - p.mean]))
    trace, quad = np.sum(solved[:, :-1] ** 2), np.sum(solved[:, -1] ** 2)
    logdet_ratio = 2.0 * (np.sum(np.log(np.diag(l_q))) - np.sum(np.log(np.diag(l_p))))
    return float(0.5 * (trace + quad - p.dim + logdet_ratio))


def _directed(reference: GaussianFit, fit: GaussianFit, direction: str) -> float:
    one_of("direction", direction, set(DIRECTIONS))
    if direction == "truth_to_fit":
        return gaussian_kl(reference, fit, "reference", "the samples' fit")
    return gaussian_kl(fit, reference, "the samples' fit", "reference")


@register("kl_to_fit")
def kl_to_fit(reference, samples, direction: str = "truth_to_fit") -> float:
    """KL between ``reference`` (a Truth, reference draws, or a GaussianFit) and the full-covariance
    Gaussian fit of ``samples`` (draws, dim) or (chains, draws, dim), pooled over chains (or a
    GaussianFit). ``direction``: "truth_to_fit" = KL(reference || fit), "fit_to_truth" = KL(fit ||
    reference). The fit of N draws in d dimensions is singular unless N >= d + 1.

    Args:
        reference: a Truth, reference draws or a GaussianFit.
        samples: draws, shape (draws, dim) or (chains, draws, dim), at least dim + 1 in all, or a GaussianFit.
        direction: ``"truth_to_fit"`` or ``"fit_to_truth"``.

    Returns:
        float: the KL, >= 0.

    Raises:
        TypeError: ``samples`` or ``reference`` is Moments.
        ValueError: too few draws, invalid draws, the dimensions differ, a singular fit, or an unknown
            ``direction``.
    """
    if isinstance(samples, Moments) or isinstance(reference, Moments):
        raise TypeError("streamed Moments hold no cross products, so they have no full-covariance fit: "
                        "use kl_diagonal_fit_from_moments")
    ref = GaussianFit.of(reference, "reference")
    if not isinstance(samples, GaussianFit):
        x = np.asarray(samples)
        total = int(np.prod(x.shape[:-1])) if x.ndim >= 2 else 0
        if x.ndim >= 2 and total < x.shape[-1] + 1:
            raise ValueError(f"samples hold {total} draws in all; a full-covariance fit in dimension "
                             f"{x.shape[-1]} needs at least dim + 1 = {x.shape[-1] + 1} draws")
    fit = GaussianFit.of(samples, "samples")
    return _directed(ref, fit, direction)


@register("kl_diagonal_fit_from_moments")
def kl_diagonal_fit_from_moments(reference, moments: Moments, direction: str = "truth_to_fit") -> float:
    r"""KL between the diagonal Gaussians of ``reference``'s marginals (Truth, draws or GaussianFit)
    and of per-chain streamed ``moments`` (pooled over chains, unbiased variances):
    :math:`\sum_i KL(N(\mu_i, \Sigma_{ii})\,\|\,N(m_i, s_i^2))` for "truth_to_fit".

    A streaming proxy, not SGLRW's KL: it is 0 whenever the means and marginal variances match,
    however wrong the correlations. The full-covariance KL needs streamed cross moments.

    Args:
        reference: a Truth, reference draws or a GaussianFit (its marginal variances are used).
        moments: per-chain Moments, counting at least 2 draws in all.
        direction: ``"truth_to_fit"`` or ``"fit_to_truth"``.

    Returns:
        float: the KL of the diagonal Gaussians, >= 0.

    Raises:
        TypeError: ``moments`` is not a Moments.
        ValueError: invalid moments, the dimensions differ, a variance <= 0, or an unknown ``direction``.
    """
    ref = GaussianFit.of(reference, "reference").to_diagonal()
    return _directed(ref, GaussianFit.of_moments(moments), direction)


def exact_sampling_kl(dim: int, num_draws: int, direction: str = "truth_to_fit") -> float:
    r"""E[KL] between a Gaussian target and the fit of ``num_draws`` = N independent exact draws.

    The fit's covariance is Wishart, :math:`(N-1)S \sim W_d(N-1, \Sigma)`, and its mean
    independent, :math:`m \sim N(\mu, \Sigma/N)`; with
    :math:`\ell = E\log\det(\Sigma^{-1}S) = \sum_{i=1}^d[\psi(\tfrac{N-i}{2}) + \log 2 - \log(N-1)]`:
    "fit_to_truth": :math:`\tfrac12(d/N - \ell)`; "truth_to_fit" (inverse-Wishart mean
    :math:`E S^{-1} = \tfrac{N-1}{N-d-2}\Sigma^{-1}`, needs N > d + 2):
    :math:`\tfrac12\big(\tfrac{(N-1)d}{N-d-2}(1 + \tfrac1N) - d + \ell\big)`.

    Args:
        dim: d, >= 1.
        num_draws: N: >= d + 3 for ``"truth_to_fit"``, >= d + 1 for ``"fit_to_truth"``.
        direction: ``"truth_to_fit"`` or ``"fit_to_truth"``.

    Returns:
        float: the expected KL.

    Raises:
        ValueError: ``dim`` or ``num_draws`` below its minimum, or an unknown ``direction``.
    """
    d = integer_at_least("dim", dim, 1)
    one_of("direction", direction, set(DIRECTIONS))
    n = integer_at_least("num_draws", num_draws, d + 3 if direction == "truth_to_fit" else d + 1)
    i = np.arange(1, d + 1)
    ell = float(np.sum(scipy.special.digamma((n - i) / 2) + np.log(2.0) - np.log(n - 1.0)))
    if direction == "fit_to_truth":
        return 0.5 * (d / n - ell)
    return 0.5 * ((n - 1) * d / (n - d - 2) * (1 + 1 / n) - d + ell)
