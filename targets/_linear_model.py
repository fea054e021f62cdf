r"""Data targets whose likelihood reads the parameters through :math:`\eta_i = f_i^\top x`.

.. math:: \log p(y_i \mid f_i, x) = \ell(\eta_i, y_i), \qquad
          \nabla_x \log p(y_i \mid f_i, x) = \ell'(\eta_i, y_i)\, f_i,

so the gradient of a sum over data is :math:`F^\top \ell'(\eta, y)` (linear and logistic regression).
"""

from __future__ import annotations

import abc

from sgbench.targets._data import DataTarget


class LinearModelTarget(DataTarget):
    """Subclasses give :math:`\\ell(\\eta, y)` (``link_log_likelihood``) and
    :math:`\\partial\\ell/\\partial\\eta` (``link_slope``), elementwise."""

    @abc.abstractmethod
    def link_log_likelihood(self, eta, y):
        r""":math:`\ell(\eta_i, y_i)` for each datum.

        Args:
            eta: the linear predictors, shape (n,).
            y: the labels, shape (n,).

        Returns:
            shape (n,).
        """

    @abc.abstractmethod
    def link_slope(self, eta, y):
        r""":math:`\partial \ell(\eta_i, y_i) / \partial \eta_i` for each datum.

        Args:
            eta: the linear predictors, shape (n,).
            y: the labels, shape (n,).

        Returns:
            shape (n,).
        """

    def _linear_predictor(self, x, indices):
        features = self.rows(self.features, indices, x)
        return features, self.rows(self.labels, indices, x), features @ x

    def log_likelihood_terms(self, x, indices=None):
        r""":math:`\ell(\eta_i, y_i)`, :math:`\eta_i = f_i^\top x`, for each ``i`` in ``indices``.

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            shape (len(indices),), or (N,) for None.
        """
        _, y, eta = self._linear_predictor(x, indices)
        return self.link_log_likelihood(eta, y)

    def grad_log_likelihood(self, x, indices=None):
        r""":math:`F^\top \ell'(\eta, y)` over the rows ``indices`` of the features F.

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            shape (dim,).
        """
        features, y, eta = self._linear_predictor(x, indices)
        return self.link_slope(eta, y) @ features

    def grad_log_likelihood_terms(self, x, indices=None):
        r"""Per-datum gradients :math:`\ell'(\eta_i, y_i)\, f_i`.

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            shape (len(indices), dim), or (N, dim) for None.
        """
        features, y, eta = self._linear_predictor(x, indices)
        return self.link_slope(eta, y)[:, None] * features
