r"""Inference Gym's ground truth as the suite's :class:`Truth`, on its quantities and on the position.

Inference Gym states, for each quantity of its ``identity`` sample transformation (the model's parameters on the
constrained scale, or, for the stochastic volatility model, the centred log volatilities), the mean :math:`m`,
the standard deviation :math:`s` and, for the NUTS-computed truths, the standard error :math:`e` of the mean
(none for the analytic ones: 0 here). The suite's moments follow: :math:`E[x^2] = m^2 + s^2`, the variance
:math:`s^2` on the diagonal of the covariance (off-diagonals are not stated: NaN). :math:`\mathrm{Var}[x^2]`, which
only b² reads (as its normaliser), is not stated either; it is the Gaussian's of the same moments,
:math:`2 s^4 + 4 m^2 s^2` (exact for Gaussian marginals, an underestimate for heavy-tailed ones such as the funnel's:
its b² is then too large), with an unstated (NaN) standard error.

Standard errors of the other moments are not stated either; they follow from the effective sample size the mean's
error implies, :math:`n_{\mathrm{eff}} = (s/e)^2`, with the moments of a Gaussian of the same mean and variance:
:math:`\mathrm{se}(s^2) = s^2 \sqrt{2 / n_{\mathrm{eff}}}` and
:math:`\mathrm{se}(E[x^2]) = \sqrt{(2 s^4 + 4 m^2 s^2) / n_{\mathrm{eff}}}` (an allowance, exact for Gaussian
marginals; Inference Gym's runs have :math:`n_{\mathrm{eff}}` in the tens of thousands, so these errors are small
beside a sampler's).
"""

from __future__ import annotations

import numpy as np

from sgbench.targets._truth import Truth
from sgbench.targets.inference_gym._structure import coordinate_names, leaves


def flat_values(structure) -> tuple[list[str], np.ndarray]:
    """A truth structure's coordinates, named and flattened (``_structure``'s order).

    Args:
        structure: Inference Gym's mean, standard deviation or standard error structure.

    Returns:
        (coordinate names, float64 vector).
    """
    names, values = [], []
    for name, leaf in leaves(structure):
        leaf = np.asarray(leaf, dtype=np.float64)
        names += coordinate_names(name, leaf.shape)
        values.append(leaf.reshape(-1))
    return names, np.concatenate(values)


def gym_truth(transformation, names: list[str], source: str) -> Truth:
    """The :class:`Truth` of an Inference Gym sample transformation's quantities, in the order of ``names``.

    Args:
        transformation: ``model.sample_transformations["identity"]``.
        names: the quantities' coordinate names, as the suite flattens them.
        source: where the truth comes from, in words.

    Returns:
        the Truth (see the module docstring for what is stated and what is NaN).

    Raises:
        ValueError: the truth's coordinates are not the quantities' (a layout mismatch; a truth given as one bare
            array is taken in the quantities' order, and only its length is checked).
    """
    mean_names, mean = flat_values(transformation.ground_truth_mean)
    _, sd = flat_values(transformation.ground_truth_standard_deviation)
    if mean_names == coordinate_names("", np.shape(mean)):  # one bare array: positional, in the quantities' order
        mean_names = names if len(names) == len(mean_names) else mean_names
    if mean_names != names:
        raise ValueError(f"Inference Gym's truth has coordinates {mean_names[:5]}... where the quantities have "
                         f"{names[:5]}...")
    var = sd**2
    if transformation.ground_truth_mean_standard_error is None:
        mean_se = var_se = second_se = np.zeros_like(mean)
    else:
        mean_se = flat_values(transformation.ground_truth_mean_standard_error)[1]
        ess = (sd / mean_se) ** 2
        var_se = var * np.sqrt(2 / ess)
        second_se = np.sqrt((2 * var**2 + 4 * mean**2 * var) / ess)
    dim = mean.shape[0]
    covariance, covariance_se = np.full((dim, dim), np.nan), np.full((dim, dim), np.nan)
    np.fill_diagonal(covariance, var)
    np.fill_diagonal(covariance_se, var_se)
    return Truth(mean=mean, second_moment=mean**2 + var, second_moment_var=2 * var**2 + 4 * mean**2 * var,
                 covariance=covariance, mean_se=mean_se, second_moment_se=second_se,
                 second_moment_var_se=np.full(dim, np.nan), covariance_se=covariance_se, source=source)


def restricted(truth: Truth, source_index: np.ndarray, source: str) -> Truth:
    """``truth`` carried to other coordinates: coordinate ``i`` takes quantity ``source_index[i]`` (-1: not
    stated, NaN).

    Args:
        truth: the quantities' Truth.
        source_index: for each new coordinate, the quantity it equals, or -1.
        source: the new Truth's source, in words.

    Returns:
        the Truth on the new coordinates.
    """
    known = source_index >= 0
    pick = np.where(known, source_index, 0)

    def vector(values):
        return np.where(known, values[pick], np.nan)

    def matrix(values):
        out = values[np.ix_(pick, pick)].copy()
        out[~known, :] = np.nan
        out[:, ~known] = np.nan
        return out

    return Truth(mean=vector(truth.mean), second_moment=vector(truth.second_moment),
                 second_moment_var=vector(truth.second_moment_var), covariance=matrix(truth.covariance),
                 mean_se=vector(truth.mean_se), second_moment_se=vector(truth.second_moment_se),
                 second_moment_var_se=vector(truth.second_moment_var_se),
                 covariance_se=matrix(truth.covariance_se), source=source)
