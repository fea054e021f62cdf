r"""Exact discrete-time law of SGLD with minibatch gradients on Bayesian linear regression.

SGLD (Welling & Teh 2011, "Bayesian Learning via Stochastic Gradient Langevin Dynamics", ICML,
eq. (4)) with a constant step :math:`h` in the standard convention and a fixed diagonal preconditioner
:math:`G` (1 for SGLD; pSGLD with its preconditioner frozen), as a sampler's law declares it
(``sgbench.samplers.LangevinStep``: a Welling & Teh ``step_size`` :math:`\epsilon` is :math:`h = \epsilon/2`
there):

.. math:: x_{t+1} = x_t + hG\,\hat g_t(x_t) + \sqrt{2hTG}\,\xi_t, \qquad \xi_t \sim \mathcal N(0, I).

The gradient is the minibatch estimator of eq. (6)
of the SGLRW paper (``sgbench.targets.noise.minibatch``): :math:`\hat g(x) = -\tau x + \frac NB \sum_{b=1}^B
g_{I_b}(x)` with :math:`I_1..I_B` iid uniform on the N data (with replacement), and on the linear
regression target (``sgbench.targets.linreg``) every per-datum gradient is affine in :math:`x`:
:math:`g_i(x) = f_i(y_i - f_i^\top x)/\sigma^2`.

With the posterior :math:`\mathcal N(\mu, \Sigma)`, :math:`P = \Sigma^{-1} = F^\top F/\sigma^2 + \tau I`,
the augmented centred state :math:`z = (x - \mu, 1)` moves by a random affine map

.. math:: z_{t+1} = A_t z_t + (\sqrt{2hTG}\,\xi_t, 0), \qquad
          A_t = C + \frac hB \sum_{b=1}^B \bar G K_{I_b}, \qquad
          C = \begin{pmatrix} I - h\tau G & -h\tau G\mu \\ 0 & 1 \end{pmatrix}, \qquad
          K_i = \frac N{\sigma^2} u_i w_i^\top,

:math:`\bar G = \mathrm{diag}(G, 1)`, :math:`u_i = (f_i, 0)`, :math:`w_i = (-f_i, y_i - f_i^\top\mu)`. The
minibatch of step t is drawn afresh, independent of :math:`z_t`, so with :math:`\bar A = E[A_t] =
\mathrm{diag}(I - hGP, 1)`, :math:`\bar K = \frac1N\sum_i \bar G K_i` and the B iid centred terms
:math:`\bar G K_{I_b} - \bar K`, the augmented second moment :math:`S_t = E[z_t z_t^\top]` follows exactly

.. math:: S_{t+1} = \bar A S_t \bar A^\top + \frac{h^2}{B}\Big(\frac1N \sum_i \bar G K_i S_t K_i^\top \bar G
          - \bar K S_t \bar K^\top\Big) + \mathrm{diag}(2hT\,G, 0),

a linear map of :math:`S_t` (:func:`minibatch_sgld_operator`). Its blocks are the centred second
moment :math:`E[(x_t-\mu)(x_t-\mu)^\top]` (top left), the mean error :math:`E[x_t] - \mu` (top right;
it follows :math:`m_{t+1} = (I - hGP)m_t`, so it is 0 at every step from a start with mean
:math:`\mu`) and 1 (bottom right). Without minibatch noise (``noise="none"``) the middle term
vanishes and the top-left block is the sampler's linear law, :math:`S' = ASA^\top + Q`
(``sgbench.samplers._langevin.langevin_recursion``). With replacement, B = N still has minibatch noise.

Derivation and notes: docs/derivations.md, section sgbench.reference.minibatch_laws.
"""

from __future__ import annotations

import numpy as np

from sgbench.samplers import LangevinStep, NoLinearLawError
from sgbench.targets.linreg import LinearRegression
from sgbench.targets.noise.minibatch import MinibatchNoise
from sgbench.targets.noise.none import NoNoise


def _check_linreg(target) -> None:
    """NoLinearLawError unless ``target`` is the linreg target itself (not wrapped by an adapter)."""
    if not isinstance(target, LinearRegression):
        raise NoLinearLawError(f"the minibatch SGLD law needs the linreg target, got "
                               f"{getattr(target, 'name', target)!r}")


def _batch_size(target) -> int | None:
    """B of the target's minibatch noise, or None for exact gradients; refuses other targets and noise models."""
    _check_linreg(target)
    if isinstance(target.noise, MinibatchNoise):
        return target.noise.batch_size
    if isinstance(target.noise, NoNoise):
        return None
    raise NoLinearLawError(f"the minibatch SGLD law needs noise 'minibatch' or 'none', got "
                           f"{target.params.get('noise')!r}")


def precision(target) -> np.ndarray:
    r"""The posterior precision :math:`P = F^\top F/\sigma^2 + \tau I` of a ``linreg`` target, from its data.

    Args:
        target: a ``linreg`` target.

    Returns:
        (d, d) the precision.

    Raises:
        NoLinearLawError: ``target`` is not a ``linreg`` target.
    """
    _check_linreg(target)
    features = np.asarray(target.features, dtype=np.float64)
    return features.T @ features / target.sigma2 + target.tau * np.eye(target.dim)


def minibatch_sgld_operator(target, langevin: LangevinStep):
    r"""One SGLD step's exact map of the augmented second moment (module docstring), as
    :math:`\mathrm{vec}(S') = L\,\mathrm{vec}(S) + q` with row-major :math:`\mathrm{vec}` of the
    (d+1, d+1) matrix :math:`S = E[zz^\top]`, :math:`z = (x - \mu, 1)`.

    Args:
        target: a ``linreg`` target with noise ``"minibatch"`` (B from ``noise_batch_size``) or ``"none"``.
        langevin: the step, as the sampler's law declares it (:math:`h`, :math:`T`, :math:`G`;
            ``sgbench.samplers.LinearLaw.langevin``).

    Returns:
        (L, q): L of shape ((d+1)^2, (d+1)^2), q of shape ((d+1)^2,). Building L costs
        :math:`O(N (d+1)^4)`.
    """
    h = float(langevin.step)
    batch = _batch_size(target)
    d, n = target.dim, target.num_data
    g = np.broadcast_to(np.asarray(langevin.preconditioner, dtype=np.float64), (d,))
    features = np.asarray(target.features, dtype=np.float64)
    labels = np.asarray(target.labels, dtype=np.float64)
    mu = np.asarray(target.posterior.mean, dtype=np.float64)
    k = d + 1
    mean_map = np.eye(k)
    mean_map[:d, :d] -= h * (g[:, None] * precision(target))
    operator = np.kron(mean_map, mean_map)  # vec(A S A^T) = (A kron A) vec(S), row-major vec
    if batch is not None:
        u = np.zeros((n, k))
        u[:, :d] = features * g  # rows of diag(G, 1) K_i
        w = np.empty((n, k))
        w[:, :d] = -features
        w[:, d] = labels - features @ mu
        scale = n / target.sigma2
        # (1/N) sum_i K_i kron K_i with K_i = scale u_i w_i^T: entry [(a, c), (b, e)] = K_i[a, b] K_i[c, e]
        uu = np.einsum("ia,ic->iac", u, u).reshape(n, k * k)
        ww = np.einsum("ib,ie->ibe", w, w).reshape(n, k * k)
        fourth = scale**2 * (uu.T @ ww) / n
        k_mean = scale * (u.T @ w) / n
        operator = operator + h**2 / batch * (fourth - np.kron(k_mean, k_mean))
    noise = np.zeros((k, k))
    noise[:d, :d] = 2 * h * float(langevin.temperature) * np.diag(g)
    return operator, noise.reshape(-1)


def _start(target, start_covariance, start_mean) -> np.ndarray:
    """vec of the augmented second moment of a start with the given mean and covariance."""
    d = target.dim
    mu = np.asarray(target.posterior.mean, dtype=np.float64)
    m = np.zeros(d) if start_mean is None else np.asarray(start_mean, dtype=np.float64).reshape(d) - mu
    cov = np.asarray(start_covariance, dtype=np.float64)
    if cov.shape != (d, d):
        raise ValueError(f"start_covariance must have shape ({d}, {d}), got {cov.shape}")
    s = np.empty((d + 1, d + 1))
    s[:d, :d] = cov + np.outer(m, m)
    s[:d, d] = s[d, :d] = m
    s[d, d] = 1.0
    return s.reshape(-1)


def minibatch_sgld_second_moment(target, langevin: LangevinStep, num_steps: int, start_covariance,
                                 num_burnin: int = 0, start_mean=None, thin: int = 1):
    r"""The exact expected time averages of :math:`x_t - \mu` and :math:`(x_t - \mu)_i^2` over every ``thin``-th
    of the steps t = ``num_burnin`` + 1 .. ``num_burnin + num_steps`` of SGLD with minibatch gradients on ``target``
    (the positions after each step, as the drivers record them), iterating
    :func:`minibatch_sgld_operator`'s map from the start's second moment.

    Args:
        target: a ``linreg`` target with noise ``"minibatch"`` or ``"none"``.
        langevin: the (constant) step, as the sampler's law declares it (``sgbench.samplers.LinearLaw.langevin``).
        num_steps: the number of recorded steps n >= 1.
        start_covariance: (d, d) the covariance of :math:`x_0` (e.g. :math:`\kappa^2\Sigma`).
        num_burnin: steps run before the recorded ones.
        start_mean: (d,) the mean of :math:`x_0` (default :math:`\mu`).
        thin: k: the steps ``num_burnin`` + k, + 2k, .. enter the averages (``RunConfig.thin``).

    Returns:
        (mean_error, second_moment): each (d,), the expected time averages of :math:`x_t - \mu` and
        of :math:`(x_t - \mu)_i^2`. The expected average of :math:`x_{t,i}^2` is
        ``second_moment + 2 mu * mean_error + mu**2``.
    """
    num_steps, num_burnin = int(num_steps), int(num_burnin)
    if num_steps < 1 or num_burnin < 0:
        raise ValueError(f"need num_steps >= 1 and num_burnin >= 0, got {num_steps} and {num_burnin}")
    operator, q = minibatch_sgld_operator(target, langevin)
    s = _start(target, start_covariance, start_mean)
    for _ in range(num_burnin):
        s = operator @ s + q
    total = np.zeros_like(s)
    for t in range(num_steps):
        s = operator @ s + q
        if (t + 1) % thin == 0:
            total += s
    d = target.dim
    average = (total / (num_steps // thin)).reshape(d + 1, d + 1)
    return average[:d, d].copy(), np.diag(average[:d, :d]).copy()


def minibatch_sgld_stationary(target, langevin: LangevinStep):
    r"""The stationary centred second moment :math:`\lim_t E[(x_t-\mu)(x_t-\mu)^\top]` of SGLD with
    minibatch gradients (the fixed point of :func:`minibatch_sgld_operator`'s map; the mean error is
    0 there).

    Args:
        target: a ``linreg`` target with noise ``"minibatch"`` or ``"none"``.
        langevin: the (constant) step, as the sampler's law declares it (``sgbench.samplers.LinearLaw.langevin``).

    Returns:
        (d, d) the stationary second moment. Raises ValueError where the second moment diverges
        (the map's spectral radius on the centred block is at least 1).
    """
    operator, q = minibatch_sgld_operator(target, langevin)
    d = target.dim
    k = d + 1
    block = np.array([a * k + b for a in range(d) for b in range(d)])
    constant = d * k + d
    l_ee = operator[np.ix_(block, block)]
    radius = float(np.max(np.abs(np.linalg.eigvals(l_ee))))
    if radius >= 1:
        raise ValueError(f"SGLD's second moment diverges at step {langevin.step} (spectral radius {radius:.4g} >= 1)")
    # at the fixed point the cross block (mean error) is 0 and the constant entry 1
    rhs = q[block] + operator[block, constant]
    s = np.linalg.solve(np.eye(d * d) - l_ee, rhs).reshape(d, d)
    return (s + s.T) / 2
