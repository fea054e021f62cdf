"""Discrepancies between samples (or streamed moments) and a target's truth.

Each metric is a pure function, registered by name with :func:`register`, its definition and
source in its docstring, and tested against a closed form. ``names()`` lists them.
"""

from sgbench.base.registry import Registry

_REGISTRY = Registry("metric", __name__)


def register(name: str):
    """Function decorator: register a metric under ``name``.

    Args:
        name: the metric's registry name.

    Returns:
        the decorator: it registers the function under ``name`` and returns it unchanged; it raises ValueError
        where ``name`` is registered already.
    """

    def decorate(fn):
        return _REGISTRY.register(name, fn)

    return decorate


def get(name: str):
    """The metric function registered as ``name``.

    Args:
        name: a registered metric's name.

    Returns:
        the metric function.

    Raises:
        UnknownNameError: no metric is registered as ``name`` (a ValueError; the message lists the names).
    """
    return _REGISTRY.get(name)


def names() -> list[str]:
    """Names of all registered metrics, sorted.

    Returns:
        list of str: the registered names, sorted.
    """
    return _REGISTRY.names()


from sgbench.reference.metrics.b2 import B2Summary, b2, b2_summary  # noqa: E402
from sgbench.reference.metrics.b2_curve import B2Curve, b2_curve, gradient_evaluations_to_threshold  # noqa: E402
from sgbench.reference.metrics.chainwise_rhat import chainwise_split_rhat  # noqa: E402
from sgbench.reference.metrics.classic_rhat import gelman_rubin_from_moments  # noqa: E402
from sgbench.reference.metrics.classification import (  # noqa: E402
    accuracy,
    aurc,
    auroc,
    brier_score,
    categorical_lppd,
    ece,
    mce,
    nll,
    ood_auroc,
    perplexity,
)
from sgbench.reference.metrics.covariance_error import (  # noqa: E402
    covariance_difference,
    covariance_frobenius_error,
    covariance_mse,
)
from sgbench.reference.metrics.ensemble_diversity import ensemble_ambiguity, prediction_variance  # noqa: E402
from sgbench.reference.metrics.ess import ess  # noqa: E402
from sgbench.reference.metrics.fssd import FSSDTest, fssd, fssd_test  # noqa: E402
from sgbench.reference.metrics.gaussian_fit import GaussianFit  # noqa: E402
from sgbench.reference.metrics.gaussian_kl import (  # noqa: E402
    exact_sampling_kl,
    gaussian_kl,
    kl_diagonal_fit_from_moments,
    kl_to_fit,
)
from sgbench.reference.metrics.ksd import ksd, ksd_of_target  # noqa: E402
from sgbench.reference.metrics.ksd_test import KSDTest, ksd_test  # noqa: E402
from sgbench.reference.metrics.lppd import lppd  # noqa: E402
from sgbench.reference.metrics.mcse import MomentMCSE, moment_mcse  # noqa: E402
from sgbench.reference.metrics.moments import Moments  # noqa: E402
from sgbench.reference.metrics.parameter_diversity import consecutive_distances  # noqa: E402
from sgbench.reference.metrics.regression import (  # noqa: E402
    coverage_calibration_error,
    credible_interval_calibration_error,
    credible_interval_coverage,
    gaussian_lppd,
    rmse,
)
from sgbench.reference.metrics.scores import target_scores  # noqa: E402
from sgbench.reference.metrics.split_rhat import split_rhat  # noqa: E402
from sgbench.reference.metrics.std_error import std_relative_error  # noqa: E402

__all__ = [
    "B2Curve", "B2Summary", "FSSDTest", "GaussianFit", "KSDTest", "MomentMCSE", "Moments", "accuracy", "aurc", "auroc",
    "b2", "b2_curve", "b2_summary", "brier_score", "categorical_lppd", "chainwise_split_rhat",
    "consecutive_distances", "covariance_difference", "covariance_frobenius_error", "covariance_mse",
    "coverage_calibration_error",
    "credible_interval_calibration_error", "credible_interval_coverage", "ece", "ensemble_ambiguity", "ess",
    "exact_sampling_kl", "fssd", "fssd_test", "gaussian_kl", "gaussian_lppd", "gelman_rubin_from_moments",
    "get", "gradient_evaluations_to_threshold", "kl_diagonal_fit_from_moments", "kl_to_fit", "ksd",
    "ksd_of_target", "ksd_test", "lppd", "mce", "moment_mcse", "names", "nll", "ood_auroc", "perplexity",
    "prediction_variance", "register", "rmse", "split_rhat", "std_relative_error", "target_scores",
]
