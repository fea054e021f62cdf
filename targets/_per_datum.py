r"""Posteriors whose likelihood is a sum over data: the interface the minibatch gradient reads.

.. math:: \log p(x \mid \mathcal D) = \log p(x) + \sum_{i=1}^N \log p(y_i \mid x) - \log p(\mathcal D),

the evidence :math:`\log p(\mathcal D)` subtracted where it is known (else 0). The minibatch gradient, eq. (6) of
the SGLRW paper, scales the likelihood part by :math:`N/B` (``sgbench.targets.noise.minibatch``). A target whose
model has no such split (a time series, a latent field) sets ``num_data`` to 0 and takes no minibatch noise.
"""

from __future__ import annotations

import abc

from sgbench.base.backend import namespace
from sgbench.targets._contract import Target


class PerDatumTarget(Target):
    """The per-datum contract: subclasses implement the log prior, the per-datum log likelihood and the gradients
    for data ``indices`` (an integer array, repeats counted; None means all N data)."""

    log_evidence = 0.0

    @property
    @abc.abstractmethod
    def num_data(self) -> int:
        """N, the number of data the likelihood sums over (0: the model has no per-datum likelihood)."""

    @abc.abstractmethod
    def log_prior(self, x):
        """The log prior density (the log Jacobian of an unconstrained parameterisation included).

        Args:
            x: one position, shape (dim,).

        Returns:
            a number.
        """

    @abc.abstractmethod
    def grad_log_prior(self, x):
        """The gradient of :meth:`log_prior`.

        Args:
            x: one position, shape (dim,).

        Returns:
            shape (dim,).
        """

    @abc.abstractmethod
    def log_likelihood_terms(self, x, indices=None):
        r""":math:`\log p(y_i \mid x)` for each ``i`` in ``indices``.

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            shape (len(indices),), or (N,) for None.
        """

    @abc.abstractmethod
    def grad_log_likelihood(self, x, indices=None):
        r""":math:`\sum_{i \in \text{indices}} \nabla_x \log p(y_i \mid x)`.

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            shape (dim,).
        """

    @abc.abstractmethod
    def grad_log_likelihood_terms(self, x, indices=None):
        r"""Per-datum gradients :math:`\nabla_x \log p(y_i \mid x)`.

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            shape (len(indices), dim), or (N, dim) for None.
        """

    def log_likelihood(self, x, indices=None):
        """The sum of :meth:`log_likelihood_terms` (repeats counted).

        Args:
            x: one position, shape (dim,).
            indices: data indices (an integer array, repeats counted), or None for all N data.

        Returns:
            the log likelihood of those data, a number.
        """
        return namespace(x).sum(self.log_likelihood_terms(x, indices), axis=-1)
