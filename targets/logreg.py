r"""Bayesian logistic regression: :math:`\log p(y_i \mid f_i, x) = y_i \eta_i - \log(1 + e^{\eta_i})`,
:math:`\eta_i = f_i^\top x`, gradient :math:`\sum_i (y_i - \sigma(\eta_i)) f_i`, prior :math:`\mathcal N(0, v I)`.

Data sets (``dataset``):

- ``"breast_cancer"``: appendix A.5 of the SGLRW paper: the
  569 x 30 breast-cancer data bundled with scikit-learn, features standardised, plus an intercept:
  31 parameters; prior :math:`\mathcal N(0, I)`.
- ``"simulated"``: appendix C.1 of the MAMBA paper: 10-d
  covariates, no intercept, ``num_data`` points (default :math:`10^4`, at most the paper's
  :math:`10^6`); prior :math:`\mathcal N(0, 10 I)`; the laws the paper leaves open are in
  :func:`sgbench.targets.datasets.logistic_regression_data`.
- ``"file"``: a user's ``.csv`` or ``.npz`` file at ``path`` with 0/1 labels named ``label``
  (:func:`sgbench.targets.datasets.load_file`), prepared like the breast-cancer data; prior :math:`\mathcal N(0, I)`.

``prior_variance`` overrides the data set's prior variance. No analytic truth: ``truth`` is None
(reference draws come from the gold-standard NUTS runs) and there is no exact sampler. Chains start
at the posterior mode, found by L-BFGS from zero (MAMBA starts its chains near the MAP).
The log-sigmoid is computed as :math:`-\operatorname{logaddexp}(0, -\eta)` and the sigmoid as
:math:`\tfrac12(1 + \tanh(\eta/2))`: no overflow for any :math:`\eta`.
"""

from __future__ import annotations

import numpy as np

from sgbench import targets
from sgbench.base.arguments import integer_at_least, one_of, positive_finite
from sgbench.base.backend import namespace
from sgbench.targets._linear_model import LinearModelTarget
from sgbench.targets.datasets import load, logistic_regression_data, standardise

DATASETS = ("breast_cancer", "simulated", "file")
PRIOR_VARIANCE = {"breast_cancer": 1.0, "simulated": 10.0, "file": 1.0}
SIMULATED_DIM = 10
DEFAULT_SIMULATED_SIZE = 10_000
MAX_SIMULATED_SIZE = 1_000_000


@targets.register("logreg")
class LogisticRegression(LinearModelTarget):
    """``dataset`` in ``DATASETS``; ``num_data`` (simulated only: 1 to 10^6, default 10^4);
    ``path`` and ``label`` (file only; label default "y"); ``prior_variance`` > 0 (default per data
    set); ``data_seed`` (simulated only, default 0); ``noise`` (default "minibatch") and its ``noise_*``."""

    name = "logreg"

    def __init__(self, dataset="breast_cancer", num_data=None, path=None, label=None, prior_variance=None,
                 data_seed=None, noise="minibatch", **noise_params):
        one_of("dataset", dataset, DATASETS)
        for given, value in (("num_data", num_data), ("data_seed", data_seed)):
            if value is not None and dataset != "simulated":
                raise ValueError(f"{given} is only accepted with dataset='simulated' (the {dataset!r} data set is "
                                 f"fixed), got {given}={value!r}")
        if (path is not None or label is not None) and dataset != "file":
            raise ValueError(f"path and label are only accepted with dataset='file', got dataset={dataset!r}")
        if dataset == "simulated":
            num_data = integer_at_least("num_data", DEFAULT_SIMULATED_SIZE if num_data is None else num_data, 1)
            if num_data > MAX_SIMULATED_SIZE:
                raise ValueError(f"num_data must be an integer in [1, {MAX_SIMULATED_SIZE}], got {num_data!r}")
            data_seed = integer_at_least("data_seed", 0 if data_seed is None else data_seed, 0)
            features, labels, self.theta_star = logistic_regression_data(num_data, SIMULATED_DIM, data_seed)
        else:
            raw, labels, path, label = load(dataset, path, label)
            if not np.all((labels == 0) | (labels == 1)):
                raise ValueError(f"labels of dataset {dataset!r} must be 0 or 1, got values "
                                 f"{np.unique(labels)[:10].tolist()}")
            features = np.column_stack([np.ones(raw.shape[0]), standardise(raw)])
        prior_variance = PRIOR_VARIANCE[dataset] if prior_variance is None else prior_variance
        prior_variance = positive_finite("prior_variance", prior_variance)
        self.dataset = dataset
        self.dim = features.shape[1]
        self.truth = None
        super().__init__(features, labels, prior_variance, noise, **noise_params)
        self._initial = None
        self.params = dict(dataset=dataset, num_data=num_data, path=path, label=label,
                           prior_variance=prior_variance, data_seed=data_seed, **self.noise_params())

    def link_log_likelihood(self, eta, y):
        r""":math:`y\eta + \log\sigma(-\eta) = y\eta - \operatorname{logaddexp}(0, \eta)`.

        Args:
            eta: the linear predictors, shape (n,).
            y: the labels, 0 or 1, shape (n,).

        Returns:
            shape (n,).
        """
        return y * eta - namespace(eta).logaddexp(0.0, eta)

    def link_slope(self, eta, y):
        r""":math:`y - \sigma(\eta)`.

        Args:
            eta: the linear predictors, shape (n,).
            y: the labels, 0 or 1, shape (n,).

        Returns:
            shape (n,).
        """
        return y - 0.5 * (1 + namespace(eta).tanh(0.5 * eta))

    def initial_position(self) -> np.ndarray:
        """The posterior mode (computed once, by :meth:`mode` from 0).

        Returns:
            float64 array of shape (dim,), a copy.
        """
        if self._initial is None:
            self._initial = self.mode(np.zeros(self.dim))
        return self._initial.copy()
