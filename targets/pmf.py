r"""Bayesian probabilistic matrix factorisation (PMF) of ratings, appendix C.2.1 of the MAMBA paper
(section 4.2 there; Salakhutdinov and Mnih, 2008).

Users :math:`i = 1..N_u` and items :math:`j = 1..N_v` have latent vectors :math:`U_i, V_j \in \mathbb R^d`
(``latent_dim``, default the paper's 20). Each observed rating is one datum; the likelihood is

.. math:: p(R \mid U, V) = \prod_{(i, j) \text{ observed}} \mathcal N(R_{ij} \mid U_i^\top V_j, \alpha^{-1}),

with priors :math:`U_i \sim \mathcal N(\mu_U, \Lambda_U^{-1})`, :math:`V_j \sim \mathcal N(\mu_V, \Lambda_V^{-1})`
and hyper-priors, for :math:`W \in \{U, V\}`, :math:`\mu_W \sim \mathcal N(\mu_0, \Lambda_W^{-1})` and
:math:`\Lambda_W \sim \text{Gamma}(a_0, b_0)`; :math:`\tau = (\alpha, \mu_0, a_0, b_0) = (3, 0, 4, 5)`.
The paper leaves open (conventions chosen here):

- :math:`\Lambda_W` is diagonal, :math:`\text{diag}(\lambda_{W,1}, \dots, \lambda_{W,d})`, each
  :math:`\lambda_{W,k} \sim \text{Gamma}(a_0, \text{rate } b_0)` independently (mean
  :math:`a_0/b_0 = 0.8`); :math:`\mu_0` is the same number in every coordinate.
- The paper writes :math:`\mathcal N(\mu_W \mid \mu_0, \Lambda_W)`; :math:`\Lambda_W` is read as the
  precision, as everywhere else in the model (BPMF's :math:`\beta_0 = 1`):
  :math:`\mu_W \sim \mathcal N(\mu_0, \Lambda_W^{-1})`.
- The sampler moves :math:`\ell_W = \log \lambda_W` (a precision must be positive), so the log
  density is that of :math:`\ell`: the Gamma log density plus the log-Jacobian :math:`\ell`,
  :math:`a_0 \ell - b_0 e^{\ell} + a_0 \log b_0 - \log\Gamma(a_0)` per coordinate.
- Ratings enter the likelihood minus ``rating_offset``: the training ratings' mean with
  ``centre_ratings=True`` (default; MovieLens practice, BPMF's: the zero-mean priors then need not
  build the mean rating 3.5 out of :math:`U_i^\top V_j`), else 0 (the raw ratings 1 to 5).
  Predictions add the offset back.

Position layout (one flat vector, :meth:`ProbabilisticMatrixFactorisation.unflatten`), the paper's
:math:`\theta = (U, \mu_U, \Lambda_U, V, \mu_V, \Lambda_V)` in order: :math:`U` row-major
(:math:`N_u d`: user :math:`i`'s vector at :math:`[i d, (i + 1) d)`), :math:`\mu_U` (d),
:math:`\log \lambda_U` (d), :math:`V` row-major (:math:`N_v d`), :math:`\mu_V` (d),
:math:`\log \lambda_V` (d): :math:`(N_u + N_v + 4) d` numbers, 52 580 at MovieLens-100k's size.

The prior part (every term but the likelihood, :meth:`ProbabilisticMatrixFactorisation.log_prior`)
is exact in a stochastic gradient; the likelihood sums over the training ratings and is what the
``minibatch`` noise model subsamples (gradient :math:`\nabla \log p(\theta) + \frac NB \sum_b
\nabla \log p(R_{I_b} \mid \theta)`, unbiased). Gradients are written out (NumPy and JAX, one
formula; scatter-adds over users and items):

.. math:: \nabla_{U_i} \log p = \sum_{j: (i,j)} \alpha e_{ij} V_j - \lambda_U \odot (U_i - \mu_U),
          \quad e_{ij} = R_{ij} - o - U_i^\top V_j \ (o \text{ the offset}),

.. math:: \nabla_{\mu_U} \log p = \lambda_U \odot \Big(\sum_i (U_i - \mu_U) - (\mu_U - \mu_0)\Big),

.. math:: \nabla_{\ell_U} \log p = \tfrac{N_u + 1}{2} + a_0 - \lambda_U \odot \Big(b_0 + \tfrac12 \sum_i (U_i - \mu_U)^2
          + \tfrac12 (\mu_U - \mu_0)^2\Big),

and likewise for :math:`V` (sums over the ratings of item :math:`j`).

Data sets (``dataset``):

- ``"generated"`` (default): drawn from the model itself at MovieLens-100k's shape (943 users,
  1682 items, 100 000 ratings 1 to 5, at least 20 per user; ``num_users``, ``num_items``,
  ``num_ratings``, ``data_seed``), with the paper's :math:`\tau` whatever the target's: the laws
  the paper leaves open (activity, Zipf-like popularity, ratings by rank with MovieLens'
  frequencies) are in :func:`sgbench.targets.datasets.matrix_factorisation_data`.
- ``"file"``: a user's MovieLens ``u.data`` or ``.csv`` (``user,item,rating``) file at ``path``
  (:func:`sgbench.targets.datasets.load_ratings`); users and items are numbered by their sorted distinct ids.

The ratings are split at random into training and test ratings (``train_fraction`` 0.8, as the
paper's 80 % / 20 % MovieLens folds; ``split_seed``); the likelihood reads the training ratings, and
:meth:`ProbabilisticMatrixFactorisation.test_rmse` gives the test RMSE of posterior-mean predictions
(the paper's Table 7). No analytic truth (``truth`` is None), no exact sampler. Chains start at an
approximate posterior mode (the paper starts at the MAP): ``MODE_SWEEPS`` = 50 sweeps of exact
block coordinate ascent (alternating ridge solves for U and V, closed-form :math:`\mu`, :math:`\lambda`;
:meth:`ProbabilisticMatrixFactorisation.mode_estimate`) from :math:`U_i, V_j \sim \mathcal N(0, 0.1^2 I)`
(seed 0; 0 is a saddle point), :math:`\mu = \mu_0`, :math:`\lambda = a_0/b_0`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np
import scipy.sparse

from sgbench import targets
from sgbench.base.arguments import finite, in_interval, integer_at_least, one_of, positive_finite
from sgbench.base.backend import namespace
from sgbench.targets._data import DataTarget
from sgbench.targets.datasets import MIN_RATINGS_PER_USER, load_ratings, matrix_factorisation_data, split_indices

DATASETS = ("generated", "file")
PAPER_TAU = dict(alpha=3.0, mu_0=0.0, a0=4.0, b0=5.0)
MOVIELENS_100K = dict(num_users=943, num_items=1682, num_ratings=100_000)
DEFAULT_LATENT_DIM = 20
MAX_USERS = MAX_ITEMS = 100_000
MAX_PAIRS = 10**9  # num_users * num_items: the generator ranks every item for every user (about 17 s at 10^9)
MAX_RATINGS = 10**7
MAX_LATENT_DIM = 100  # the start solves a d x d system per user and item, 50 times
MAX_PARAMETERS = 10**7  # a chain position, its gradient and its moments hold this many numbers
MAX_TERMS = 2 * 10**8  # entries of grad_log_likelihood_terms (1.6 GB of float64)
MODE_SWEEPS = 50
START_SCALE = 0.1
REFERENCE_PAIRS = 50  # test ratings whose predictions a NUTS reference keeps (reference_quantities)


class PMFParameters(NamedTuple):
    """The blocks of a PMF position (a JAX pytree): ``U`` (..., N_u, d), ``mu_U``, ``log_lambda_U``
    (..., d), ``V`` (..., N_v, d), ``mu_V``, ``log_lambda_V`` (..., d)."""

    U: object
    mu_U: object
    log_lambda_U: object
    V: object
    mu_V: object
    log_lambda_V: object


def _integer_in(name: str, value, low: int, high: int) -> int:
    """``value`` as an int, or ValueError ``"{name} must be an integer in [low, high], got ..."``."""
    try:
        return integer_at_least(name, value, low, high)
    except ValueError:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}") from None


@targets.register("pmf")
class ProbabilisticMatrixFactorisation(DataTarget):
    """``dataset`` in ``DATASETS`` (default "generated"); ``num_users`` in [2, 10^5] (943),
    ``num_items`` in [20, 10^5] (1682), their product at most 10^9, ``num_ratings`` in
    [20 num_users, min(num_users num_items, 10^7)] (10^5) and ``data_seed`` >= 0 (0): generated only;
    ``path``: file only; ``latent_dim`` d in [1, 100] (20; at most 10^7 parameters in all);
    ``train_fraction`` in (0, 1] (0.8), ``split_seed`` >= 0 (0); ``centre_ratings`` (True);
    ``alpha`` > 0 (3), ``mu_0`` (0), ``a0`` > 0 (4), ``b0`` > 0 (5); ``noise`` (default
    "minibatch") and its ``noise_*``. Attributes: ``splits`` (``"train"``, ``"test"``: 0-based users,
    items, ratings), ``user_ids`` and ``item_ids`` (the file's id of each number), ``rating_offset``,
    ``generating_parameters`` (the draws the generated data came from; None for a file)."""

    name = "pmf"

    def __init__(self, dataset="generated", num_users=None, num_items=None, num_ratings=None,
                 latent_dim=DEFAULT_LATENT_DIM, path=None, data_seed=None, train_fraction=0.8, split_seed=0,
                 centre_ratings=True, alpha=3.0, mu_0=0.0, a0=4.0, b0=5.0, noise="minibatch", **noise_params):
        one_of("dataset", dataset, DATASETS)
        sizes = dict(num_users=num_users, num_items=num_items, num_ratings=num_ratings, data_seed=data_seed)
        for given, value in sizes.items():
            if value is not None and dataset != "generated":
                raise ValueError(f"{given} is only accepted with dataset='generated' (the file's data set is "
                                 f"fixed), got {given}={value!r}")
        if path is not None and dataset != "file":
            raise ValueError(f"path is only accepted with dataset='file', got dataset={dataset!r}")
        latent_dim = _integer_in("latent_dim", latent_dim, 1, MAX_LATENT_DIM)
        train_fraction = in_interval("train_fraction", train_fraction, 0.0, 1.0, low_open=True)
        split_seed = integer_at_least("split_seed", split_seed, 0)
        if not isinstance(centre_ratings, bool | np.bool_):
            raise TypeError(f"centre_ratings must be True or False, got {centre_ratings!r}")
        centre_ratings = bool(centre_ratings)
        self.alpha = positive_finite("alpha", alpha)
        self.mu_0 = finite("mu_0", mu_0)
        self.a0 = positive_finite("a0", a0)
        self.b0 = positive_finite("b0", b0)

        if dataset == "generated":
            num_users = _integer_in("num_users", MOVIELENS_100K["num_users"] if num_users is None else num_users, 2,
                                    MAX_USERS)
            num_items = _integer_in("num_items", MOVIELENS_100K["num_items"] if num_items is None else num_items,
                                    MIN_RATINGS_PER_USER, MAX_ITEMS)
            if num_users * num_items > MAX_PAIRS:
                raise ValueError(f"num_users * num_items must be at most {MAX_PAIRS:.0e} (the generator ranks every "
                                 f"item for every user), got num_users={num_users} * num_items={num_items}")
            num_ratings = MOVIELENS_100K["num_ratings"] if num_ratings is None else num_ratings
            low, high = MIN_RATINGS_PER_USER * num_users, min(num_users * num_items, MAX_RATINGS)
            try:
                num_ratings = _integer_in("num_ratings", num_ratings, low, high)
            except ValueError as error:
                raise ValueError(f"{error} (at least {MIN_RATINGS_PER_USER} per user with num_users={num_users}, at "
                                 f"most one per (user, item) pair with num_items={num_items}, at most "
                                 f"{MAX_RATINGS:.0e})") from None
            data_seed = integer_at_least("data_seed", 0 if data_seed is None else data_seed, 0)
            users, items, ratings, self.generating_parameters = matrix_factorisation_data(
                num_users, num_items, num_ratings, latent_dim, data_seed, **PAPER_TAU)
            self.user_ids, self.item_ids = np.arange(num_users), np.arange(num_items)
        else:
            if path is None:
                raise ValueError("dataset='file' needs path, a MovieLens u.data file or a .csv file with columns "
                                 "user,item,rating")
            raw_users, raw_items, ratings = load_ratings(path)
            path = str(path)
            self.user_ids, users = np.unique(raw_users, return_inverse=True)
            self.item_ids, items = np.unique(raw_items, return_inverse=True)
            self.generating_parameters = None
        self.num_users, self.num_items, self.latent_dim = len(self.user_ids), len(self.item_ids), latent_dim
        self.dim = (self.num_users + self.num_items + 4) * latent_dim
        if self.dim > MAX_PARAMETERS:
            raise ValueError(f"latent_dim={latent_dim} makes {self.dim:,} parameters ({self.num_users} users, "
                             f"{self.num_items} items); at most {MAX_PARAMETERS:,}")
        self.dataset = dataset

        self.split_indices = split_indices(ratings.shape[0], dict(train=train_fraction, test=1.0 - train_fraction),
                                           split_seed)
        train = self.split_indices["train"]
        if train.size < 1:
            raise ValueError(f"train_fraction={train_fraction} leaves no training ratings of {ratings.shape[0]}")
        self.rating_offset = float(ratings[train].mean()) if centre_ratings else 0.0
        self.splits = {name: (users[index].astype(np.int64), items[index].astype(np.int64), ratings[index])
                       for name, index in self.split_indices.items()}
        self._users, self._items, train_ratings = self.splits["train"]
        self.truth = None
        super().__init__(np.column_stack([self._users, self._items]).astype(np.float64),
                         train_ratings - self.rating_offset, math.nan, noise, **noise_params)
        self.prior_variance = None  # no isotropic Gaussian prior (sgbench.samplers.px refuses the target)
        n = train.size
        self._user_incidence = scipy.sparse.csr_matrix((np.ones(n), (self._users, np.arange(n))),
                                                       shape=(self.num_users, n))
        self._item_incidence = scipy.sparse.csr_matrix((np.ones(n), (self._items, np.arange(n))),
                                                       shape=(self.num_items, n))
        self._initial = None
        self.params = dict(dataset=dataset, num_users=num_users, num_items=num_items, num_ratings=num_ratings,
                           latent_dim=latent_dim, path=path, data_seed=data_seed, train_fraction=train_fraction,
                           split_seed=split_seed, centre_ratings=centre_ratings, alpha=self.alpha, mu_0=self.mu_0,
                           a0=self.a0, b0=self.b0, **self.noise_params())

    # ------------------------------------------------------------------------- layout

    def unflatten(self, x) -> PMFParameters:
        r"""The blocks of flat positions ``x`` (..., dim): ``U`` (..., N_u, d), ``mu_U``,
        ``log_lambda_U`` (..., d), ``V`` (..., N_v, d), ``mu_V``, ``log_lambda_V`` (..., d).

        Args:
            x: flat positions, shape (..., dim).

        Returns:
            PMFParameters, views (NumPy) or slices (JAX) of ``x``.

        Raises:
            ValueError: the last axis of ``x`` is not ``dim``.
        """
        if np.shape(x)[-1:] != (self.dim,):
            raise ValueError(f"flat parameters of target 'pmf' must have last axis {self.dim}, got shape {np.shape(x)}")
        lead, d = np.shape(x)[:-1], self.latent_dim
        blocks, start = [], 0
        for rows in (self.num_users, None, None, self.num_items, None, None):
            size = d if rows is None else rows * d
            block = x[..., start:start + size]
            blocks.append(block if rows is None else block.reshape(lead + (rows, d)))
            start += size
        return PMFParameters(*blocks)

    def flatten(self, parameters) -> np.ndarray:
        """The flat positions (..., dim) of ``parameters`` (the inverse of :meth:`unflatten`).

        Args:
            parameters: a PMFParameters (or a sequence of its six blocks, in its order).

        Returns:
            shape (..., dim).

        Raises:
            ValueError: a block's trailing shape is not (N_u, d), (d,), (d,), (N_v, d), (d,), (d,).
        """
        parameters = PMFParameters(*parameters)
        d = self.latent_dim
        shapes = ((self.num_users, d), (d,), (d,), (self.num_items, d), (d,), (d,))
        for field, block, shape in zip(PMFParameters._fields, parameters, shapes, strict=True):
            if np.shape(block)[np.ndim(block) - len(shape):] != shape or np.ndim(block) < len(shape):
                raise ValueError(f"block {field} of target 'pmf' must have trailing shape {shape}, got "
                                 f"{np.shape(block)}")
        xp = namespace(parameters.U)
        lead = np.shape(parameters.mu_U)[:-1]
        return xp.concatenate([parameters.U.reshape(lead + (-1,)), parameters.mu_U, parameters.log_lambda_U,
                               parameters.V.reshape(lead + (-1,)), parameters.mu_V, parameters.log_lambda_V], axis=-1)

    # ------------------------------------------------------------------------- prior

    def _block_prior(self, xp, W, mu, log_lam, rows):
        """(log density, gradients) of one factor's prior terms: rows, mean and log-precisions."""
        lam = xp.exp(log_lam)
        deviation = W - mu[..., None, :]
        squares = xp.sum(deviation * deviation, axis=-2)
        mean_deviation = mu - self.mu_0
        d = self.latent_dim
        log_density = (-0.5 * xp.sum(lam * (squares + mean_deviation * mean_deviation), axis=-1)
                       + (0.5 * (rows + 1) + self.a0) * xp.sum(log_lam, axis=-1) - self.b0 * xp.sum(lam, axis=-1)
                       - 0.5 * (rows + 1) * d * math.log(2 * math.pi)
                       + d * (self.a0 * math.log(self.b0) - math.lgamma(self.a0)))
        grad_W = -lam[..., None, :] * deviation
        grad_mu = lam * (xp.sum(deviation, axis=-2) - mean_deviation)
        grad_log_lam = 0.5 * (rows + 1) + self.a0 - lam * (self.b0 + 0.5 * squares
                                                             + 0.5 * mean_deviation * mean_deviation)
        return log_density, (grad_W, grad_mu, grad_log_lam)

    def log_prior(self, x):
        r""":math:`\log p(\theta)` in the sampled coordinates: for :math:`W \in \{U, V\}` with
        :math:`n_W` rows, :math:`\sum_i \log \mathcal N(W_i; \mu_W, \Lambda_W^{-1}) + \log \mathcal N(\mu_W;
        \mu_0, \Lambda_W^{-1}) + \sum_k [a_0 \ell_{W,k} - b_0 e^{\ell_{W,k}} + a_0 \log b_0 - \log\Gamma(a_0)]`
        (the Gamma density of :math:`\lambda = e^\ell` times the Jacobian :math:`e^\ell`); normalised.

        Args:
            x: a position, shape (dim,) (or (..., dim)).

        Returns:
            the log prior density, shape ``x.shape[:-1]``.
        """
        xp, p = namespace(x), self.unflatten(x)
        return (self._block_prior(xp, p.U, p.mu_U, p.log_lambda_U, self.num_users)[0]
                + self._block_prior(xp, p.V, p.mu_V, p.log_lambda_V, self.num_items)[0])

    def grad_log_prior(self, x):
        """The gradient of :meth:`log_prior` (the formulas of the module docstring, without the sums over ratings).

        Args:
            x: a position, shape (dim,) (or (..., dim)).

        Returns:
            the gradient, shape of ``x``.
        """
        xp, p = namespace(x), self.unflatten(x)
        grad_U, grad_mu_U, grad_log_lambda_U = self._block_prior(xp, p.U, p.mu_U, p.log_lambda_U, self.num_users)[1]
        grad_V, grad_mu_V, grad_log_lambda_V = self._block_prior(xp, p.V, p.mu_V, p.log_lambda_V, self.num_items)[1]
        return self.flatten(PMFParameters(grad_U, grad_mu_U, grad_log_lambda_U, grad_V, grad_mu_V, grad_log_lambda_V))

    # ------------------------------------------------------------------------- likelihood

    def _ratings(self, x, indices):
        """Users, items, (offset) ratings of the training ratings at ``indices`` and the blocks of ``x``."""
        xp = namespace(x)
        users, items = xp.asarray(self._users), xp.asarray(self._items)
        if indices is not None:
            users, items = users[indices], items[indices]
        return users, items, self.rows(self.labels, indices, x), self.unflatten(x)

    def log_likelihood_terms(self, x, indices=None):
        r""":math:`\log \mathcal N(R_{ij} - o; U_i^\top V_j, \alpha^{-1})` per training rating (``o`` the
        ``rating_offset``).

        Args:
            x: one position, shape (dim,).
            indices: training-rating indices (an integer array, repeats counted), or None for all of them.

        Returns:
            shape (len(indices),), or (N,) for None.
        """
        users, items, ratings, p = self._ratings(x, indices)
        xp = namespace(x)
        error = ratings - xp.sum(p.U[users] * p.V[items], axis=-1)
        return -0.5 * self.alpha * error * error + 0.5 * math.log(self.alpha / (2 * math.pi))

    def _likelihood_slopes(self, x, indices):
        """Users, items, :math:`\\alpha e` per rating, and the blocks of ``x``."""
        users, items, ratings, p = self._ratings(x, indices)
        error = ratings - namespace(x).sum(p.U[users] * p.V[items], axis=-1)
        return users, items, self.alpha * error, p

    def grad_log_likelihood(self, x, indices=None):
        r""":math:`\sum_{\text{ratings}} \alpha e_{ij} V_j` into :math:`U_i` and :math:`\alpha e_{ij} U_i` into
        :math:`V_j`; 0 for the hyperparameters. NumPy: a sparse incidence product for all ratings,
        ``np.add.at`` for a minibatch; JAX: ``jax.ops.segment_sum``.

        Args:
            x: one position, shape (dim,).
            indices: training-rating indices (an integer array, repeats counted), or None for all of them.

        Returns:
            shape (dim,).
        """
        users, items, slope, p = self._likelihood_slopes(x, indices)
        into_users, into_items = slope[:, None] * p.V[items], slope[:, None] * p.U[users]
        if namespace(x) is np:
            if indices is None:
                grad_U = np.asarray(self._user_incidence @ into_users, dtype=x.dtype)
                grad_V = np.asarray(self._item_incidence @ into_items, dtype=x.dtype)
            else:
                grad_U, grad_V = np.zeros_like(p.U), np.zeros_like(p.V)
                np.add.at(grad_U, users, into_users)
                np.add.at(grad_V, items, into_items)
        else:
            grad_U = jax.ops.segment_sum(into_users, users, num_segments=self.num_users)
            grad_V = jax.ops.segment_sum(into_items, items, num_segments=self.num_items)
        zeros = namespace(x).zeros_like(p.mu_U)
        return self.flatten(PMFParameters(grad_U, zeros, zeros, grad_V, zeros, zeros))

    def grad_log_likelihood_terms(self, x, indices=None):
        """Per-rating gradients, shape (len(indices), dim): dense, so only for few ratings (at most
        ``MAX_TERMS`` numbers in all; the minibatch noise model's ``covariance`` asks for all N).

        Args:
            x: one position, shape (dim,).
            indices: training-rating indices (an integer array, repeats counted), or None for all of them.

        Returns:
            shape (len(indices), dim), or (N, dim) for None.

        Raises:
            ValueError: more than ``MAX_TERMS`` numbers.
        """
        count = self.num_data if indices is None else np.shape(indices)[0]
        if count * self.dim > MAX_TERMS:
            raise ValueError(f"per-rating gradients of {count} ratings would hold {count} x {self.dim} numbers, more "
                             f"than {MAX_TERMS:.0e}; ask for fewer ratings")
        users, items, slope, p = self._likelihood_slopes(x, indices)
        xp = namespace(x)
        rows = xp.arange(count)
        d, nu, nv = self.latent_dim, self.num_users, self.num_items
        grad_U = xp.zeros((count, nu, d), dtype=x.dtype)
        grad_V = xp.zeros((count, nv, d), dtype=x.dtype)
        if xp is np:
            grad_U[rows, users] = slope[:, None] * p.V[items]
            grad_V[rows, items] = slope[:, None] * p.U[users]
        else:
            grad_U = grad_U.at[rows, users].set(slope[:, None] * p.V[items])
            grad_V = grad_V.at[rows, items].set(slope[:, None] * p.U[users])
        zeros = xp.zeros((count, d), dtype=x.dtype)
        return self.flatten(PMFParameters(grad_U, zeros, zeros, grad_V, zeros, zeros))

    # ------------------------------------------------------------------------- predictions

    def predict(self, samples, users, items):
        r"""Posterior-mean predicted ratings :math:`o + \frac1S \sum_s U_{s,i}^\top V_{s,j}` (``o`` the
        ``rating_offset``, so on the scale of the data) for the (user, item) pairs given as 0-based
        numbers (``user_ids`` and ``item_ids`` give the file's ids); no clipping to [1, 5].

        Args:
            samples: draws, shape (dim,), (S, dim) or (..., S, dim) (all leading axes are pooled).
            users: 0-based user numbers, shape (n,).
            items: 0-based item numbers, shape (n,).

        Returns:
            float64 array of shape (n,).
        """
        draws = np.asarray(samples, dtype=np.float64).reshape(-1, self.dim)
        users, items = np.asarray(users), np.asarray(items)
        total = np.zeros(users.shape[0])
        for draw in draws:
            p = self.unflatten(draw)
            total += np.einsum("nd,nd->n", p.U[users], p.V[items])
        return self.rating_offset + total / draws.shape[0]

    @property
    def reference_quantities_label(self) -> str:
        """What :meth:`reference_quantities` are, in words (a NUTS reference's header records it)."""
        return f"predicted ratings U_i'V_j + offset of the first {self.reference_pair_count} test ratings"

    @property
    def reference_pair_count(self) -> int:
        """How many test ratings :meth:`reference_quantities` predicts: ``REFERENCE_PAIRS``, or all there are."""
        return min(REFERENCE_PAIRS, self.splits["test"][0].size)

    def reference_quantities(self, draws) -> np.ndarray:
        r"""Per-draw predicted ratings :math:`o + U_i^\top V_j` of the first ``REFERENCE_PAIRS`` test ratings:
        what a NUTS reference of this target checks and keeps instead of the parameters. The posterior is
        invariant under a sign flip or a permutation of the latent coordinates (:math:`2^d d!` copies of
        each mode), so chains started apart disagree on every :math:`U` and :math:`V` coordinate (split
        R-hat 2.6 at 100 users, 150 items, d = 3) but agree on the predictions, which the symmetry leaves
        alone (R-hat 1.009); the MAMBA paper's :math:`\xi(\sigma)` is taken on them (``mamba-table2``).

        Args:
            draws: flat positions, shape (..., dim).

        Returns:
            float64 array of shape (..., ``reference_pair_count``).

        Raises:
            ValueError: no test ratings (``train_fraction=1``).
        """
        users, items, _ = self.splits["test"]
        if users.size == 0:
            raise ValueError("target 'pmf' has no test ratings (train_fraction=1) to keep in a reference")
        users, items = users[:self.reference_pair_count], items[:self.reference_pair_count]
        p = self.unflatten(np.asarray(draws, dtype=np.float64))
        return self.rating_offset + np.einsum("...nd,...nd->...n", p.U[..., users, :], p.V[..., items, :])

    def test_rmse(self, samples) -> float:
        """Root mean squared error of :meth:`predict` on the test ratings (the paper's Table 7).

        Args:
            samples: draws, shape (dim,), (S, dim) or (..., S, dim) (all leading axes are pooled).

        Returns:
            float: the RMSE, on the ratings' scale.

        Raises:
            ValueError: no test ratings (``train_fraction=1``).
        """
        users, items, ratings = self.splits["test"]
        if ratings.size == 0:
            raise ValueError("target 'pmf' has no test ratings (train_fraction=1)")
        return float(np.sqrt(np.mean((self.predict(samples, users, items) - ratings) ** 2)))

    # ------------------------------------------------------------------------- start

    def start(self) -> np.ndarray:
        """The optimiser's start: rows N(0, 0.1^2 I) from seed 0, means mu_0, precisions a0 / b0.

        Returns:
            float64 array of shape (dim,).
        """
        rng = np.random.default_rng(0)
        d = self.latent_dim
        hyper = (np.full(d, self.mu_0), np.full(d, math.log(self.a0 / self.b0)))
        return self.flatten(PMFParameters(START_SCALE * rng.standard_normal((self.num_users, d)), *hyper,
                                          START_SCALE * rng.standard_normal((self.num_items, d)), *hyper))

    def mode_estimate(self, sweeps: int = MODE_SWEEPS) -> np.ndarray:
        r"""An approximate posterior mode: ``sweeps`` sweeps of block coordinate ascent on the full-data
        log density from :meth:`start`, each block set to its exact maximiser given the others (so
        the log density never decreases): every :math:`U_i` (the ridge solution
        :math:`(\alpha \sum_j V_j V_j^\top + \Lambda_U) U_i = \alpha \sum_j (R_{ij} - o) V_j + \Lambda_U \mu_U`
        over the training ratings of user :math:`i`), then :math:`\mu_U = (\sum_i U_i + \mu_0) / (N_u + 1)`,
        then :math:`\lambda_U = (\tfrac{N_u + 1}{2} + a_0) / (b_0 + \tfrac12 \sum_i (U_i - \mu_U)^2 +
        \tfrac12 (\mu_U - \mu_0)^2)` (the mode in :math:`\ell = \log \lambda`, Jacobian included);
        then the same for V. (scipy's L-BFGS costs about 60 ms a step at this dimension on its own and
        gets less far in 300 steps than 20 sweeps.)

        Args:
            sweeps: the number of sweeps, >= 0.

        Returns:
            float64 array of shape (dim,).
        """
        sweeps = integer_at_least("sweeps", sweeps, 0)
        p = self.unflatten(self.start())
        U, V = p.U.copy(), p.V.copy()
        hyper_U = (p.mu_U.copy(), np.exp(p.log_lambda_U))
        hyper_V = (p.mu_V.copy(), np.exp(p.log_lambda_V))
        by_user = _groups(self._users, self.num_users)
        by_item = _groups(self._items, self.num_items)
        for _ in range(sweeps):
            U = self._ridge_rows(V, self._items, by_user, *hyper_U)
            hyper_U = self._hyper_mode(U)
            V = self._ridge_rows(U, self._users, by_item, *hyper_V)
            hyper_V = self._hyper_mode(V)
        return self.flatten(PMFParameters(U, hyper_U[0], np.log(hyper_U[1]), V, hyper_V[0], np.log(hyper_V[1])))

    def _ridge_rows(self, other, other_index, groups, mu, lam):
        """Each row's exact maximiser given the other factor (see :meth:`mode_estimate`)."""
        d = self.latent_dim
        gram, moment = np.zeros((len(groups), d, d)), np.zeros((len(groups), d))
        for row, ratings in enumerate(groups):
            rated = other[other_index[ratings]]
            gram[row] = rated.T @ rated
            moment[row] = rated.T @ self.labels[ratings]
        system = self.alpha * gram + lam[:, None] * np.eye(d)
        return np.linalg.solve(system, (self.alpha * moment + lam * mu)[..., None])[..., 0]

    def _hyper_mode(self, W):
        """The exact maximiser (mean, precisions) of the prior terms of factor ``W`` (see :meth:`mode_estimate`)."""
        rows = W.shape[0]
        mu = (W.sum(axis=0) + self.mu_0) / (rows + 1)
        deviation = W - mu
        lam = (0.5 * (rows + 1) + self.a0) / (self.b0 + 0.5 * np.sum(deviation * deviation, axis=0)
                                              + 0.5 * (mu - self.mu_0) ** 2)
        return mu, lam

    def initial_position(self) -> np.ndarray:
        """:meth:`mode_estimate` with ``MODE_SWEEPS`` sweeps (computed once; about 1 s at MovieLens-100k's
        size on 2 cores).

        Returns:
            float64 array of shape (dim,).
        """
        if self._initial is None:
            self._initial = self.mode_estimate(MODE_SWEEPS)
        return self._initial.copy()


def _groups(owner: np.ndarray, count: int) -> list[np.ndarray]:
    """The training-rating indices of each owner 0..count-1 (a user or an item)."""
    order = np.argsort(owner, kind="stable")
    return np.split(order, np.searchsorted(owner[order], np.arange(1, count)))
