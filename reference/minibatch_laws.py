r"""Exact discrete-time law of SGLD with minibatch gradients on Bayesian linear regression.

SGLD (Welling & Teh 2011, "Bayesian Learning via Stochastic Gradient Langevin Dynamics", ICML,
eq. (4)), in the suite's standard convention (``sgbench.samplers.sgld``) with a constant step :math:`h`:

.. math:: x_{t+1} = x_t + h\,\hat g_t(x_t) + \sqrt{2hT}\,\xi_t, \qquad \xi_t \sim \mathcal N(0, I),

where Welling & Teh's convention (``convention="welling_teh"``) reads ``step_size`` as their
:math:`\epsilon` and uses :math:`h = \epsilon/2`. The gradient is the minibatch estimator of eq. (6)
of the SGLRW paper (``sgbench.targets.noise.minibatch``): :math:`\hat g(x) = -\tau x + \frac NB \sum_{b=1}^B
g_{I_b}(x)` with :math:`I_1..I_B` iid uniform on the N data (with replacement), and on the linear
regression target (``sgbench.targets.linreg``) every per-datum gradient is affine in :math:`x`:
:math:`g_i(x) = f_i(y_i - f_i^\top x)/\sigma^2`.

With the posterior :math:`\mathcal N(\mu, \Sigma)`, :math:`P = \Sigma^{-1} = F^\top F/\sigma^2 + \tau I`,
the augmented centred state :math:`z = (x - \mu, 1)` moves by a random affine map

.. math:: z_{t+1} = A_t z_t + (\sqrt{2hT}\,\xi_t, 0), \qquad
          A_t = C + \frac hB \sum_{b=1}^B K_{I_b}, \qquad
          C = \begin{pmatrix} (1 - h\tau) I & -h\tau\mu \\ 0 & 1 \end{pmatrix}, \qquad
          K_i = \frac N{\sigma^2} u_i w_i^\top,

:math:`u_i = (f_i, 0)`, :math:`w_i = (-f_i, y_i - f_i^\top\mu)`. The minibatch of step t is drawn
afresh, independent of :math:`z_t`, so with :math:`\bar A = E[A_t] = \mathrm{diag}(I - hP, 1)`,
:math:`\bar K = \frac1N\sum_i K_i` and the B iid centred terms :math:`K_{I_b} - \bar K`, the augmented
second moment :math:`S_t = E[z_t z_t^\top]` follows exactly

.. math:: S_{t+1} = \bar A S_t \bar A^\top + \frac{h^2}{B}\Big(\frac1N \sum_i K_i S_t K_i^\top
          - \bar K S_t \bar K^\top\Big) + \mathrm{diag}(2hT\,I, 0),

a linear map of :math:`S_t` (:func:`minibatch_sgld_operator`). Its blocks are the centred second
moment :math:`E[(x_t-\mu)(x_t-\mu)^\top]` (top left), the mean error :math:`E[x_t] - \mu` (top right;
it follows :math:`m_{t+1} = (I - hP)m_t`, so it is 0 at every step from a start with mean
:math:`\mu`) and 1 (bottom right). Without minibatch noise (``noise="none"``) the middle term
vanishes and the top-left block is ``sgbench.reference.linear_laws.langevin_recursion``'s
:math:`S' = ASA^\top + Q`. With replacement, B = N still has minibatch noise.

Derivation and notes: docs/derivations.md, section sgbench.reference.minibatch_laws.
"""

from __future__ import annotations

import numpy as np

from sgbench.samplers.sgld import CONVENTIONS
from sgbench.targets.linreg import LinearRegression
from sgbench.targets.noise.minibatch import MinibatchNoise
from sgbench.targets.noise.none import NoNoise


def standard_step(step_size: float, convention: str = "standard") -> float:
    r"""The standard convention's :math:`h` for SGLD's ``step_size`` in ``convention``.

    Args:
        step_size: the sampler's ``step_size`` (:math:`h`, or Welling & Teh's :math:`\epsilon`).
        convention: ``"standard"`` or ``"welling_teh"`` (as ``sgbench.samplers.sgld``).

    Returns:
        :math:`h` (``step_size``, or ``step_size / 2`` in Welling & Teh's convention).
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    step_size = float(step_size)
    if not np.isfinite(step_size) or step_size <= 0:
        raise ValueError(f"step_size must be a positive finite number, got {step_size!r}")
    return step_size / 2 if convention == "welling_teh" else step_size


def _batch_size(target) -> int | None:
    """B of the target's minibatch noise, or None for exact gradients; refuses other noise models."""
    if not isinstance(target, LinearRegression):
        raise ValueError(f"the minibatch SGLD law needs the linreg target, got {getattr(target, 'name', target)!r}")
    if isinstance(target.noise, MinibatchNoise):
        return target.noise.batch_size
    if isinstance(target.noise, NoNoise):
        return None
    raise ValueError(f"the minibatch SGLD law needs noise 'minibatch' or 'none', got {target.params.get('noise')!r}")


def minibatch_sgld_operator(target, step: float, temperature: float = 1.0, convention: str = "standard"):
    r"""One SGLD step's exact map of the augmented second moment (module docstring), as
    :math:`\mathrm{vec}(S') = L\,\mathrm{vec}(S) + q` with row-major :math:`\mathrm{vec}` of the
    (d+1, d+1) matrix :math:`S = E[zz^\top]`, :math:`z = (x - \mu, 1)`.

    Args:
        target: a ``linreg`` target with noise ``"minibatch"`` (B from ``noise_batch_size``) or ``"none"``.
        step: SGLD's ``step_size``, read in ``convention``.
        temperature: T.
        convention: ``"standard"`` (:math:`h` = ``step``) or ``"welling_teh"`` (:math:`h` = ``step / 2``).

    Returns:
        (L, q): L of shape ((d+1)^2, (d+1)^2), q of shape ((d+1)^2,). Building L costs
        :math:`O(N (d+1)^4)`.
    """
    h = standard_step(step, convention)
    batch = _batch_size(target)
    d, n = target.dim, target.num_data
    features = np.asarray(target.features, dtype=np.float64)
    labels = np.asarray(target.labels, dtype=np.float64)
    mu = np.asarray(target.posterior.mean, dtype=np.float64)
    precision = features.T @ features / target.sigma2 + target.tau * np.eye(d)
    k = d + 1
    mean_map = np.eye(k)
    mean_map[:d, :d] -= h * precision
    operator = np.kron(mean_map, mean_map)  # vec(A S A^T) = (A kron A) vec(S), row-major vec
    if batch is not None:
        u = np.zeros((n, k))
        u[:, :d] = features
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
    noise[:d, :d] = 2 * h * float(temperature) * np.eye(d)
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


def minibatch_sgld_second_moment(target, step: float, temperature: float, num_steps: int, start_covariance,
                                 num_burnin: int = 0, start_mean=None, convention: str = "standard", thin: int = 1):
    r"""The exact expected time averages of :math:`x_t - \mu` and :math:`(x_t - \mu)_i^2` over every ``thin``-th
    of the steps t = ``num_burnin`` + 1 .. ``num_burnin + num_steps`` of SGLD with minibatch gradients on ``target``
    (the positions after each step, as the drivers record them), iterating
    :func:`minibatch_sgld_operator`'s map from the start's second moment.

    Args:
        target: a ``linreg`` target with noise ``"minibatch"`` or ``"none"``.
        step: SGLD's ``step_size`` (constant), read in ``convention``.
        temperature: T.
        num_steps: the number of recorded steps n >= 1.
        start_covariance: (d, d) the covariance of :math:`x_0` (e.g. :math:`\kappa^2\Sigma`).
        num_burnin: steps run before the recorded ones.
        start_mean: (d,) the mean of :math:`x_0` (default :math:`\mu`).
        convention: ``"standard"`` or ``"welling_teh"`` (:math:`h` = ``step / 2``).
        thin: k: the steps ``num_burnin`` + k, + 2k, .. enter the averages (``RunConfig.thin``).

    Returns:
        (mean_error, second_moment): each (d,), the expected time averages of :math:`x_t - \mu` and
        of :math:`(x_t - \mu)_i^2`. The expected average of :math:`x_{t,i}^2` is
        ``second_moment + 2 mu * mean_error + mu**2``.
    """
    num_steps, num_burnin = int(num_steps), int(num_burnin)
    if num_steps < 1 or num_burnin < 0:
        raise ValueError(f"need num_steps >= 1 and num_burnin >= 0, got {num_steps} and {num_burnin}")
    operator, q = minibatch_sgld_operator(target, step, temperature, convention)
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


def minibatch_sgld_stationary(target, step: float, temperature: float = 1.0, convention: str = "standard"):
    r"""The stationary centred second moment :math:`\lim_t E[(x_t-\mu)(x_t-\mu)^\top]` of SGLD with
    minibatch gradients (the fixed point of :func:`minibatch_sgld_operator`'s map; the mean error is
    0 there).

    Args:
        target: a ``linreg`` target with noise ``"minibatch"`` or ``"none"``.
        step: SGLD's ``step_size``, read in ``convention``.
        temperature: T.
        convention: ``"standard"`` or ``"welling_teh"``.

    Returns:
        (d, d) the stationary second moment. Raises ValueError where the second moment diverges
        (the map's spectral radius on the centred block is at least 1).
    """
    operator, q = minibatch_sgld_operator(target, step, temperature, convention)
    d = target.dim
    k = d + 1
    block = np.array([a * k + b for a in range(d) for b in range(d)])
    constant = d * k + d
    l_ee = operator[np.ix_(block, block)]
    radius = float(np.max(np.abs(np.linalg.eigvals(l_ee))))
    if radius >= 1:
        raise ValueError(f"SGLD's second moment diverges at step {step} (spectral radius {radius:.4g} >= 1)")
    # at the fixed point the cross block (mean error) is 0 and the constant entry 1
    rhs = q[block] + operator[block, constant]
    s = np.linalg.solve(np.eye(d * d) - l_ee, rhs).reshape(d, d)
    return (s + s.T) / 2
