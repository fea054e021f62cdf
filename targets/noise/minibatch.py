r"""Minibatch gradients of a data target, eq. (6) of the SGLRW paper:

.. math:: \widehat{\nabla \log p}(x) = \nabla \log p(x) + \frac NB \sum_{b=1}^B \nabla \log p(y_{I_b} \mid f_{I_b}, x),

with :math:`I_1, \dots, I_B` independent and uniform on :math:`\{0, \dots, N-1\}` (with replacement).
Unbiased: :math:`E[\frac NB \sum_b g_{I_b}] = \sum_i g_i`. With replacement is chosen because the
indices are then independent: drawing them costs O(B) in JAX (``randint``; without replacement
needs a permutation of N or a sequential rejection), and the estimator's covariance is exact and
simple: :math:`V(x) = \frac{N^2}{B} C(x)`, :math:`C(x) = \frac1N \sum_i (g_i - \bar g)(g_i - \bar g)^\top`
the population covariance of the per-datum gradients :math:`g_i` at :math:`x`.
"""

from __future__ import annotations

import numpy as np

from sgbench.base.arguments import integer_at_least
from sgbench.base.variates import Variate
from sgbench.targets._per_datum import PerDatumTarget
from sgbench.targets.noise import register
from sgbench.targets.noise._base import NoiseModel

DEFAULT_BATCH_SIZE = 32


@register("minibatch")
class MinibatchNoise(NoiseModel):
    """``batch_size`` B in [1, N] (default min(32, N): a middle value of the batch sizes of the
    SGLRW experiments, 8 to 1000 in Table 1 and 1 to 64 in Table 2, whose cost does not grow with N)."""

    def __init__(self, target, batch_size=None):
        if not isinstance(target, PerDatumTarget) or not target.num_data:
            raise ValueError(f"noise model 'minibatch' needs a posterior with a per-datum likelihood (linreg, logreg, "
                             f"bnn, pmf, inference_gym model='item_response_theory', the posteriordb "
                             f"regressions and mixture, ...); this target {target.name!r} has none: use "
                             "noise='none' or an additive noise model")
        super().__init__(target)
        self.num_data = target.num_data
        if batch_size is None:
            batch_size = min(DEFAULT_BATCH_SIZE, self.num_data)
        self.batch_size = integer_at_least("noise_batch_size", batch_size, 1)
        if self.batch_size > self.num_data:
            raise ValueError(f"noise_batch_size must be an integer in [1, N] with N = {self.num_data} data of "
                             f"target {target.name!r}, got {batch_size!r}")

    def draw_spec(self):
        """B data indices per evaluation, uniform on {0, ..., N-1}, with replacement.

        Returns:
            ``{"indices": Variate("index", (batch_size,), high=N)}``.
        """
        return {"indices": Variate("index", (self.batch_size,), high=self.num_data)}

    def stochastic_grad(self, x, draw):
        """The minibatch gradient of eq. (6): the prior's gradient plus N/B times the likelihood gradient of the
        drawn data.

        Args:
            x: one position, shape (dim,).
            draw: this step's draw of :meth:`draw_spec`: ``indices``, B integers in [0, N).

        Returns:
            the stochastic gradient, shape (dim,).
        """
        scale = self.num_data / self.batch_size
        return self.target.grad_log_prior(x) + scale * self.target.grad_log_likelihood(x, draw["indices"])

    def stochastic_logdensity(self, x, draw):
        """The same estimator of the log density: unbiased for ``target.logdensity``.

        Args:
            x: one position, shape (dim,).
            draw: this step's draw of :meth:`draw_spec`: ``indices``, B integers in [0, N).

        Returns:
            log prior + N/B times the log likelihood of the drawn data - ``log_evidence``, a number.
        """
        scale = self.num_data / self.batch_size
        return (self.target.log_prior(x) + scale * self.target.log_likelihood(x, draw["indices"])
                - self.target.log_evidence)

    def covariance(self, x):
        r""":math:`V(x) = \frac{N^2}{B} C(x)`, from the per-datum gradients at ``x`` (float64, NumPy).

        Args:
            x: one position, shape (dim,).

        Returns:
            float64 array of shape (dim, dim).
        """
        per_datum = np.asarray(self.target.grad_log_likelihood_terms(np.asarray(x, dtype=np.float64)))
        centred = per_datum - per_datum.mean(axis=0)
        return self.num_data * centred.T @ centred / self.batch_size

    def params(self):
        """The model's parameters.

        Returns:
            ``{"batch_size": B}``.
        """
        return {"batch_size": self.batch_size}
