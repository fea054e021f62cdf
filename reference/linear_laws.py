r"""Exact discrete-time laws of the samplers that are linear on a Gaussian target.

On :math:`\mathcal N(\mu, P^{-1})` with additive Gaussian gradient noise, SGLD (and pSGLD with a
frozen preconditioner, SGLD-CV) and SGHMC (both forms, both integrators) are linear recursions
:math:`z_{t+1} = A z_t + B w_t` of the centred state, so the second moment of every step follows
:math:`S_{t+1} = A S_t A^\top + Q`, :math:`Q = B W B^\top`, transient included. Everything here is
derived from the papers' update equations, not from the implementations, so the gate and the
tests can hold the implementations to it (DESIGN.md, tier 1).
"""

from __future__ import annotations

import numpy as np


def langevin_recursion(precision, step, temperature=1.0, noise_covariance=None, preconditioner=1.0):
    r"""One SGLD step (standard convention) :math:`x' = x + hG(-Px + e) + \sqrt{2hTG}\,\xi` on
    :math:`\mathcal N(0, P^{-1})` with gradient noise :math:`e \sim \mathcal N(0, V)` and a fixed
    diagonal preconditioner :math:`G` (1 for SGLD; pSGLD frozen at :math:`1/(\sqrt{\nu_0}+\varepsilon)`).

    Args:
        precision: P, (d, d).
        step: h (Welling & Teh's :math:`\epsilon` is :math:`h = \epsilon/2`).
        temperature: T.
        noise_covariance: V, (d, d); None for exact gradients (or a control variate that cancels
            additive noise).
        preconditioner: G, a number or a (d,) vector.

    Returns:
        (A, Q) with :math:`A = I - hGP`, :math:`Q = h^2 G V G + 2hT\,\mathrm{diag}(G)`.
    """
    p = np.asarray(precision, dtype=np.float64)
    d = p.shape[0]
    g = np.diag(np.broadcast_to(np.asarray(preconditioner, dtype=np.float64), (d,)))
    q = 2 * step * temperature * g
    if noise_covariance is not None:
        q = q + step**2 * g @ np.asarray(noise_covariance) @ g
    return np.eye(d) - step * g @ p, q


def hamiltonian_recursion(precision, form, integrator, step, friction, temperature=1.0, noise_variance=0.0,
                          noise_estimate=0.0):
    r"""One step of SGHMC on :math:`\mathcal N(0, P^{-1})` with :math:`g(x) = -Px + e`,
    :math:`e \sim \mathcal N(0, V I)`, as :math:`z' = A z + B w` in :math:`z = (x, m)` (m: the
    momentum v of the Chen form, r of the practical form) with :math:`w = (n, e)`, n the injected
    noise :math:`\mathcal N(0, cI)`.

    Chen, Euler (h, alpha): :math:`x' = x + v`, :math:`v' = (1-\alpha)v + h g(x') + n`, so
    :math:`v' = -hPx + ((1-\alpha)I - hP)v + n + he`; :math:`c = h(2\alpha T - h\hat\beta)`.

    Practical, Euler (eps, gamma): :math:`r' = (1-\gamma\epsilon)r - \epsilon g(x) + n
    = \epsilon Px + (1-\gamma\epsilon)r + n - \epsilon e`, :math:`x' = x - \epsilon r'
    = (I - \epsilon^2P)x - \epsilon(1-\gamma\epsilon)r - \epsilon n + \epsilon^2 e`;
    :math:`c = \epsilon(2\gamma T - \epsilon\hat\beta)`.

    Chen, splitting A O A B (:math:`k = e^{-\alpha}`): :math:`x' = x + v/2 + (kv + n)/2
    = x + \tfrac{1+k}{2}v + n/2`, :math:`v' = kv + n + h g(x') = -hPx + (kI - h\tfrac{1+k}{2}P)v
    + (I - hP/2)n + he`; :math:`c = hT(1-k^2) - h^2\hat\beta`.

    Practical, splitting (:math:`k = e^{-\gamma\epsilon}`): :math:`x' = x - \epsilon\tfrac{1+k}{2}r
    - \epsilon n/2`, :math:`r' = kr + n - \epsilon g(x') = \epsilon Px
    + (kI - \epsilon^2\tfrac{1+k}{2}P)r + (I - \epsilon^2P/2)n - \epsilon e`;
    :math:`c = T(1-k^2) - \epsilon^2\hat\beta`.

    Returns:
        (A, B, W, c): the noise covariance is :math:`Q = B W B^\top`, :math:`W = \mathrm{diag}(cI, VI)`.
    """
    p = np.asarray(precision)
    d = p.shape[0]
    eye, zero = np.eye(d), np.zeros((d, d))
    temp, beta = temperature, noise_estimate
    if form == "chen" and integrator == "euler":
        h, a = step, friction
        c = h * (2 * a * temp - h * beta)
        big_a = np.block([[eye, eye], [-h * p, (1 - a) * eye - h * p]])
        big_b = np.block([[zero, zero], [eye, h * eye]])
    elif form == "practical" and integrator == "euler":
        e, k = step, 1 - friction * step
        c = e * (2 * friction * temp - e * beta)
        big_a = np.block([[eye - e**2 * p, -e * k * eye], [e * p, k * eye]])
        big_b = np.block([[-e * eye, e**2 * eye], [eye, -e * eye]])
    elif form == "chen":
        h, k = step, np.exp(-friction)
        c = h * temp * (1 - k**2) - h**2 * beta
        big_a = np.block([[eye, (1 + k) / 2 * eye], [-h * p, k * eye - h * (1 + k) / 2 * p]])
        big_b = np.block([[eye / 2, zero], [eye - h * p / 2, h * eye]])
    else:
        e, k = step, np.exp(-friction * step)
        c = temp * (1 - k**2) - e**2 * beta
        big_a = np.block([[eye, -e * (1 + k) / 2 * eye], [e * p, k * eye - e**2 * (1 + k) / 2 * p]])
        big_b = np.block([[-e / 2 * eye, zero], [eye - e**2 * p / 2, -e * eye]])
    w = np.block([[c * eye, zero], [zero, noise_variance * eye]])
    return big_a, big_b, w, c


def averaged_second_moment(s0, transition, num_steps: int, dim: int, refresh_every: int = 0,
                           refresh_variance: float = 0.0, num_burnin: int = 0, thin: int = 1) -> np.ndarray:
    r"""diag of the mean over :math:`t = b+k, b+2k, .., b+n` of the first ``dim`` coordinates of :math:`S_t`,
    where :math:`S_{t+1} = A S_t A^\top + Q` from :math:`S_0` = ``s0``: the exact expected time
    average of :math:`(x_i - \mu_i)^2` of a run of ``num_steps`` steps that records every ``thin`` = :math:`k`-th
    step after ``num_burnin`` = :math:`b` unrecorded ones (as ``RunConfig.thin`` does).

    Args:
        s0: the centred state's second moment at the start, (k, k).
        transition: (A, Q), each (k, k).
        num_steps: n.
        dim: how many leading coordinates are positions.
        refresh_every: L > 0 replaces the momentum block (coordinates ``dim:``) by
            ``refresh_variance`` I, uncorrelated with the position, before each step whose counter
            is a multiple of L (SGHMC's ``refresh_every``).
        refresh_variance: the refreshed momentum's variance.
        num_burnin: b, steps run before the recorded ones (the step counter runs through them).
        thin: k, the recorded steps that enter the average (``num_steps // thin`` of them).

    Returns:
        (dim,) the time-averaged second moments.
    """
    a, q = transition
    s = np.array(s0, dtype=np.float64)
    total = np.zeros(s.shape[0])
    for t in range(num_burnin + num_steps):
        if refresh_every and t % refresh_every == 0:
            s[dim:, :] = 0.0
            s[:, dim:] = 0.0
            s[dim:, dim:] = refresh_variance * np.eye(s.shape[0] - dim)
        s = a @ s @ a.T + q
        if t >= num_burnin and (t - num_burnin + 1) % thin == 0:
            total += np.diag(s)
    return total[:dim] / (num_steps // thin)
