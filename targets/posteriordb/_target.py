r"""A posteriordb posterior as a suite target, on Stan's unconstrained space.

The position :math:`u` is the posterior's parameters mapped to :math:`\mathbb R^d` by Stan's transforms (log of
a positive parameter, logit of a bounded one, log-increments of an ordered vector; ``_transforms``); the log
density is the model's on the constrained scale plus the log Jacobian of the map,
:math:`\log p(u) = \log p(\theta(u)) + \log|\det \partial\theta/\partial u|`, written in JAX from the Stan program
(``_models``), its gradient by ``jax.grad``.

Truth is posteriordb's: its reference draws (Stan NUTS, 10 chains of 1000 thinned draws) mapped to the
unconstrained space, their moments with batch-means standard errors (each chain cut into 10 batches of 100:
100 batch means, so a standard error :math:`\mathrm{sd}(\text{batch means})/\sqrt{100}`, valid while the draws'
autocorrelation dies out within a batch; posteriordb's draws have bulk ESS near 10,000, so nearly
independent). ``sample`` resamples those draws; ``quantities`` maps positions back to the constrained scale of
the reference draws, transformed parameters included.
"""

from __future__ import annotations

import os
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from sgbench import targets
from sgbench.base.arguments import one_of
from sgbench.base.backend import constant
from sgbench.targets._jax_density import JaxDensityTarget
from sgbench.targets._jax_likelihood import JaxPerDatumTarget
from sgbench.targets._truth import Truth
from sgbench.targets.noise import make_noise
from sgbench.targets.posteriordb import _files
from sgbench.targets.posteriordb._models import MODELS, Model

BATCHES_PER_CHAIN = 10


def batch_means_se(values: np.ndarray) -> np.ndarray:
    """The batch-means standard error of the mean of ``values``, ``BATCHES_PER_CHAIN`` batches per chain (the
    draws left over by an uneven split are dropped).

    Args:
        values: shape (chains, draws, ...).

    Returns:
        float64 array of shape ``values.shape[2:]``.
    """
    chains, draws = values.shape[:2]
    size = draws // BATCHES_PER_CHAIN
    batches = values[:, : size * BATCHES_PER_CHAIN].reshape(chains * BATCHES_PER_CHAIN, size, *values.shape[2:])
    means = batches.mean(axis=1)
    return means.std(axis=0, ddof=1) / np.sqrt(means.shape[0])


def truth_of_draws(draws: np.ndarray, source: str) -> Truth:
    """Moments of ``draws`` with batch-means standard errors.

    Args:
        draws: shape (chains, draws, dim).
        source: where the draws come from, in words.

    Returns:
        the :class:`Truth`.
    """
    flat = draws.reshape(-1, draws.shape[-1])
    mean, second = flat.mean(0), (flat**2).mean(0)
    centred = draws - mean
    products = centred[..., :, None] * centred[..., None, :]
    return Truth(mean=mean, second_moment=second, second_moment_var=(flat**4).mean(0) - second**2,
                 covariance=np.cov(flat, rowvar=False).reshape(flat.shape[1], flat.shape[1]),
                 mean_se=batch_means_se(draws), second_moment_se=batch_means_se(draws**2),
                 second_moment_var_se=batch_means_se((draws**2 - second) ** 2),
                 covariance_se=batch_means_se(products), source=source)


@targets.register("posteriordb")
class PosteriordbTarget(JaxPerDatumTarget, JaxDensityTarget):
    """``posterior``: one of the ten shipped posteriordb posteriors (``POSTERIORS``; default the non-centred
    eight schools), or with ``model`` any posterior of ``clone`` that has reference draws; ``clone``: a local clone
    of posteriordb to read its data and reference draws from instead of the shipped copies (default None);
    ``model``: a user's :class:`sgbench.targets.posteriordb.Model` of that posterior, its log density written in JAX
    (default None: the suite's); ``noise`` (default ``"none"``: the exact gradient; ``"minibatch"`` where the model
    splits its i.i.d. data: the regressions and the mixture) and its ``noise_*``."""

    name = "posteriordb"

    def __init__(self, posterior="eight_schools-eight_schools_noncentered", clone=None, model=None, noise="none",
                 **noise_params):
        if clone is not None and not (isinstance(clone, str | os.PathLike)
                                      and (Path(clone) / "posterior_database").is_dir()):
            raise ValueError(f"clone must be None or the path of a local clone of posteriordb (a folder holding "
                             f"posterior_database/), got {clone!r}")
        if model is None:
            one_of("posterior", posterior, POSTERIORS)
            model = MODELS[posterior]
        elif not isinstance(model, Model):
            raise ValueError(f"model must be None or a sgbench.targets.posteriordb.Model, got {type(model).__name__}")
        elif clone is None and posterior not in POSTERIORS:
            raise ValueError(f"posterior {posterior!r} is not shipped: give clone, the path of a local clone of "
                             f"posteriordb that holds it")
        self.model = model
        self.data = self.model.prepare(_files.data(posterior, clone))
        self.coordinates = self.model.coordinates
        self.dim = len(self.coordinates)
        self.reference = _files.reference_draws(posterior, clone)
        chains, draws = next(iter(self.reference.values())).shape[:2]
        per_draw = {k: jnp.asarray(v.reshape(chains * draws, *v.shape[2:])) for k, v in self.reference.items()}
        positions = jax.vmap(self.model.unconstrain)(per_draw)  # from what the draws keep
        self.reference_positions = np.asarray(positions, dtype=np.float64).reshape(chains, draws, self.dim)
        self.truth = truth_of_draws(self.reference_positions, f"posteriordb reference draws of {posterior} "
                                                              f"({chains} chains x {draws}, Stan NUTS), unconstrained")
        if self.model.log_term is not None:
            self.split_likelihood(self._unconstrained_log_prior, self._unconstrained_log_term,
                                  {key: self.data[key] for key in self.model.datum_keys})
        self.noise = make_noise(noise, self, **noise_params)
        self.compile_density()
        self.params = dict(posterior=posterior, clone=None if clone is None else str(clone),
                           **({} if model is MODELS.get(posterior) else {"model": model}), **self.noise_params())

    def _unconstrained_log_density(self, u):
        params, log_jacobian = self.model.constrain(u)
        data = {key: constant(value, u) for key, value in self.data.items()}  # a float32 chain stays float32
        return self.model.log_density(params, data) + log_jacobian

    def _unconstrained_log_prior(self, u):
        params, log_jacobian = self.model.constrain(u)
        return self.model.log_prior(params) + log_jacobian

    def _unconstrained_log_term(self, u, datum):
        return self.model.log_term(self.model.constrain(u)[0], datum)

    def quantities(self, x) -> dict[str, np.ndarray]:
        """The reference draws' quantities (parameters and transformed parameters, constrained) at positions ``x``.

        Args:
            x: positions, shape (n, dim).

        Returns:
            name -> float64 array of shape (n,) or (n, size).
        """
        with jax.enable_x64(True):
            params = jax.vmap(lambda u: self.model.quantities(self.model.constrain(u)[0]))(
                jnp.asarray(x, dtype=jnp.float64))
        return {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}

    def sample(self, key, n: int):
        """``n`` draws resampled uniformly, with replacement, from posteriordb's reference draws (unconstrained).

        Args:
            key: a JAX PRNG key.
            n: the number of draws, >= 1.

        Returns:
            float64 array of shape (n, dim).
        """
        flat = self.reference_positions.reshape(-1, self.dim)
        return flat[np.asarray(jax.random.randint(key, (n,), 0, flat.shape[0]))]

    def initial_position(self) -> np.ndarray:
        """The reference draws' mean on the unconstrained space (posteriordb sets no starting point).

        Returns:
            float64 array of shape (dim,).
        """
        return np.array(self.truth.mean)


POSTERIORS = tuple(sorted(MODELS))
