r"""Exact stationary laws behind the expectations of ``tests/heldout/decisive.py``, for the samplers whose step is
linear on the Gaussian targets (``icg``, ``icg_stiff``: N(0, Sigma) with additive gradient noise N(0, V);
``linreg``: N(mu, P^-1) with minibatch gradients, every per-datum gradient affine in x).

A step is written in the augmented centred state :math:`z = (x - \mu, a, 1)` (``a`` the sampler's auxiliary
coordinates: a momentum, a stored noise, a shared gradient-noise draw) as

.. math:: z' = F z + H\,\hat g(y) + w, \qquad (y - \mu, 1) = E z, \qquad \mathrm{Cov}(w) = Q,

with :math:`\hat g` the oracle's gradient at the position :math:`y` where the step reads it. On ``icg``
:math:`\hat g(y) = -P(y - \mu) + e`, :math:`e \sim N(0, V)` independent of everything; on ``linreg``
:math:`\hat g(y) = \Gamma_t (y - \mu, 1)` with :math:`\Gamma_t = -\tau[I, \mu] + \frac NB \sum_b \gamma_{I_b}`,
:math:`\gamma_i = f_i [-f_i^\top, y_i - f_i^\top\mu]/\sigma^2` (``sgbench.reference.minibatch_laws``), so
:math:`z' = A_t z + w` with :math:`A_t = F + H\Gamma_t E`, and the second moment :math:`S = E[zz^\top]` moves by
the affine map :math:`S' = \bar A S \bar A^\top + H\,\mathrm{Cov}(\Gamma_t M)\,H^\top + Q`, :math:`M = ESE^\top`,
:math:`\mathrm{Cov}(\Gamma_t M) = \frac1B(\frac1N\sum_i N\gamma_i M N\gamma_i^\top - \bar\gamma M \bar\gamma^\top)`
(:math:`\bar\gamma = \sum_i \gamma_i`). Its fixed point (the constant entry held at 1) is the stationary law; a
momentum refreshed every L steps (SGHMC) makes the map periodic, and the recorded positions' moments are then the
average over the L phases of the cycle's fixed point (or the cycle's last phase, where only that one is
recorded). :func:`check` compares the SGLD case with ``sgbench.reference.minibatch_laws`` and
``scipy.linalg.solve_discrete_lyapunov``.

``python -m tests.heldout._decisive_laws`` prints every exact number the docstrings of the decisive held-out
samplers quote (a few seconds).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from sgbench import targets

PRESETS = {
    "icg": dict(dim=4, condition_number=4.0, rotation_seed=0, noise="isotropic", noise_variance=2.0),
    "icg_stiff": dict(dim=4, condition_number=16.0, rotation_seed=0, noise="isotropic", noise_variance=16.0),
    "linreg": dict(num_data=40, dim=2, noise="minibatch", noise_batch_size=8),
}


class Model:
    """A Gaussian target as the laws see it: ``dim``, ``mu``, ``covariance``, ``precision`` and the gradient's
    second-moment map (``additive`` V, or the minibatch terms of a linreg target, with its likelihood scaled by
    ``likelihood_scale``: a sampler that rescales the oracle's minibatch sum)."""

    def __init__(self, key: str, likelihood_scale: float = 1.0, exact: bool = False):
        name = "icg" if key.startswith("icg") else key
        self.key = key
        self.target = targets.get(name, **PRESETS[key])
        truth = self.target.truth
        self.mu = np.asarray(truth.mean, dtype=np.float64)
        self.covariance = np.asarray(truth.covariance, dtype=np.float64)
        self.dim = d = self.mu.size
        self.exact = exact
        if name == "icg":
            self.precision = np.linalg.inv(self.covariance)
            self.noise = None if exact else float(PRESETS[key]["noise_variance"]) * np.eye(d)
            self.gamma_mean = np.hstack([-self.precision, np.zeros((d, 1))])
            self.terms = None
        else:
            t = self.target
            features = np.asarray(t.features, dtype=np.float64)
            labels = np.asarray(t.labels, dtype=np.float64)
            n = t.num_data
            self.batch = t.noise.batch_size
            gam = np.einsum("ia,ib->iab", features, np.hstack([-features, (labels - features @ self.mu)[:, None]]))
            gam = gam / t.sigma2 * likelihood_scale
            prior = -t.tau * np.hstack([np.eye(d), self.mu[:, None]])
            self.gamma_mean = prior + gam.sum(0)
            self.precision = -self.gamma_mean[:, :d]
            self.terms = None if exact else n * gam  # N gamma_i
            self.noise = None

    def gradient_spread(self, m):
        """Cov(Gamma_t M) (d, d) for the augmented position second moment M, or the additive noise V."""
        if self.terms is not None:
            total = self.terms.mean(0)  # sum_i gamma_i
            inner = np.einsum("iab,bc,idc->ad", self.terms, m, self.terms) / len(self.terms)
            return (inner - total @ m @ total.T) / self.batch
        if self.noise is not None:
            return self.noise
        return np.zeros((self.dim, self.dim))


def step_map(model: Model, f, h, e, q):
    """The affine map S -> S' of one step (module docstring), as a function."""
    a_bar = f + h @ model.gamma_mean @ e

    def apply(s):
        m = e @ s @ e.T
        return a_bar @ s @ a_bar.T + h @ model.gradient_spread(m) @ h.T + q

    return apply


def _fixed_point(apply, k):
    """The fixed point of the affine map ``apply`` on (k, k) matrices with entry (k-1, k-1) held at 1."""
    base = np.zeros((k, k))
    base[-1, -1] = 1.0
    offset = apply(base) - base
    index = [(a, b) for a in range(k) for b in range(k) if (a, b) != (k - 1, k - 1)]
    columns = []
    for a, b in index:
        unit = np.zeros((k, k))
        unit[a, b] = 1.0
        columns.append([(apply(unit + base) - apply(base))[i, j] for i, j in index])
    lin = np.array(columns).T
    rhs = np.array([offset[i, j] for i, j in index])
    radius = float(np.max(np.abs(np.linalg.eigvals(lin))))
    if radius >= 1:
        raise ValueError(f"the second moment diverges (spectral radius {radius:.6g})")
    sol = np.linalg.solve(np.eye(len(index)) - lin, rhs)
    s = base.copy()
    for (a, b), v in zip(index, sol):
        s[a, b] = v
    return (s + s.T) / 2


def stationary(model: Model, f, h, e, q, refresh=None):
    """The stationary moments of the recorded positions: (mean error (d,), centred second moment (d, d)).

    Args:
        refresh: None, or ``(L, aux, variance, record)``: before every L-th step the auxiliary coordinates
            ``aux`` (a slice of z) are redrawn independently with covariance ``variance`` (a (m, m) array or a
            number times I); ``record`` "every" (every step's position is kept) or "last" (one per cycle).
    """
    k = f.shape[0]
    d = model.dim
    one = step_map(model, f, h, e, q)
    if refresh is None:
        s = _fixed_point(one, k)
        phases = [s]
    else:
        length, aux, variance, record = refresh
        size = aux.stop - aux.start
        cov = variance * np.eye(size) if np.isscalar(variance) else np.asarray(variance)

        def redraw(s):
            s = s.copy()
            s[aux, :] = 0.0
            s[:, aux] = 0.0
            s[aux, aux] = cov
            return s

        def cycle(s):
            s = redraw(s)
            for _ in range(length):
                s = one(s)
            return s

        s = _fixed_point(cycle, k)
        phases, t = [], redraw(s)
        for _ in range(length):
            t = one(t)
            phases.append(t)
        if record == "last":
            phases = phases[-1:]
    s = sum(phases) / len(phases)
    return s[:d, -1].copy(), s[:d, :d].copy()


def errors(model: Model, moments, temperature=1.0):
    """(mean error in standard deviations, r) per coordinate against N(mu, T Sigma)."""
    mean_error, second = moments
    var = np.diag(model.covariance) * temperature
    return mean_error / np.sqrt(var), np.diag(second) / var - 1


# --- the samplers' steps ------------------------------------------------------------------------------------------


def _blocks(d, m):
    return d + m + 1


def langevin(model: Model, h, temperature=1.0, drift=None, noise_factor=1.0, weight_decay=0.0):
    """x' = x + h D (g(x) - w x) + sqrt(2 h T c) xi: SGLD (D = I, c = 1, w = 0) and its bugs."""
    d = model.dim
    k = _blocks(d, 0)
    dm = np.eye(d) if drift is None else np.asarray(drift)
    f = np.eye(k)
    f[:d, :d] -= h * weight_decay * dm
    f[:d, -1] = -h * weight_decay * dm @ model.mu
    hh = np.zeros((k, d))
    hh[:d] = h * dm
    q = np.zeros((k, k))
    q[:d, :d] = 2 * h * temperature * noise_factor * np.eye(d)
    return stationary(model, f, hh, np.eye(k), q)


def leimkuhler_matthews(model: Model, h, temperature=1.0, noise_estimate=0.0):
    """x' = x + h g(x) + s (xi_n + xi_{n+1}), s^2 = T h/2 - h^2 beta/4; z = (x - mu, xi_n, 1)."""
    d = model.dim
    k = _blocks(d, d)
    s = np.sqrt(temperature * h / 2 - h**2 * noise_estimate / 4)
    f = np.zeros((k, k))
    f[:d, :d] = np.eye(d)
    f[:d, d:2 * d] = s * np.eye(d)
    f[-1, -1] = 1.0
    hh = np.zeros((k, d))
    hh[:d] = h * np.eye(d)
    e = np.zeros((d + 1, k))
    e[:d, :d] = np.eye(d)
    e[d, -1] = 1.0
    q = np.zeros((k, k))
    q[:d, :d] = s**2 * np.eye(d)
    q[:d, d:2 * d] = q[d:2 * d, :d] = s * np.eye(d)
    q[d:2 * d, d:2 * d] = np.eye(d)
    return stationary(model, f, hh, e, q)


def hamiltonian(model: Model, eps, friction, temperature=1.0, noise_estimate=0.0, scheme="semi_implicit",
                noise_factor=1.0, refresh_every=0, refresh_variance=None):
    """SGHMC in the practical form (M = I, step eps, friction rate C), z = (theta - mu, r, 1):

    - ``semi_implicit`` (Chen eq. (15)): theta' = theta + eps r, r' = (1 - eps C) r + eps g(theta') + n;
    - ``explicit_euler``: the same with g(theta), the gradient at the old position;
    - ``bao``: r1 = r + eps g(theta), theta' = theta + eps r1, r' = c r1 + sqrt(T(1 - c^2)) xi, c = exp(-C eps);

    n ~ N(0, c_n eps (2 C T - eps beta)) (c_n = ``noise_factor``); with ``refresh_every`` L the momentum is
    redrawn from N(0, ``refresh_variance`` I) before every L-th step.
    """
    d = model.dim
    k = _blocks(d, d)
    f = np.eye(k)
    hh = np.zeros((k, d))
    e = np.zeros((d + 1, k))
    e[:d, :d] = np.eye(d)
    e[d, -1] = 1.0
    q = np.zeros((k, k))
    mom = slice(d, 2 * d)
    if scheme == "bao":
        c = np.exp(-friction * eps)
        f[:d, mom] = eps * np.eye(d)
        f[mom, mom] = c * np.eye(d)
        hh[:d] = eps**2 * np.eye(d)
        hh[mom] = c * eps * np.eye(d)
        q[mom, mom] = temperature * (1 - c**2) * np.eye(d) * noise_factor
    else:
        f[:d, mom] = eps * np.eye(d)
        f[mom, mom] = (1 - eps * friction) * np.eye(d)
        hh[mom] = eps * np.eye(d)
        if scheme == "semi_implicit":
            e[:d, mom] = eps * np.eye(d)
        q[mom, mom] = noise_factor * eps * (2 * friction * temperature - eps * noise_estimate) * np.eye(d)
    refresh = None
    if refresh_every:
        refresh = (refresh_every, mom, refresh_variance, "every")
    return stationary(model, f, hh, e, q, refresh)


def blackjax_sghmc(model: Model, eps, alpha, length, temperature=1.0, refresh_variance=1.0):
    """blackjax 1.7.1's SGHMC call on icg (docs/tutorial.md, docs/defects_blackjax.md): p ~ N(0, refresh_variance
    I), then L explicit Euler steps x' = x + eps p, p' = (1 - alpha eps) p + eps (-P x + e) + sqrt(2 alpha eps T) xi
    with ONE gradient-noise draw e per call; the call's last position recorded. z = (x, p, e, 1)."""
    if model.noise is None and not model.exact:
        raise ValueError("the shared-noise recursion is written for icg's additive noise")
    d = model.dim
    k = 3 * d + 1
    mom, shared = slice(d, 2 * d), slice(2 * d, 3 * d)
    f = np.eye(k)
    f[:d, mom] = eps * np.eye(d)
    f[mom, :d] = -eps * model.precision
    f[mom, mom] = (1 - alpha * eps) * np.eye(d)
    f[mom, shared] = eps * np.eye(d)
    q = np.zeros((k, k))
    q[mom, mom] = 2 * alpha * eps * temperature * np.eye(d)
    exact = Model(model.key, exact=True)
    aux = slice(d, 3 * d)
    cov = np.zeros((2 * d, 2 * d))
    cov[:d, :d] = refresh_variance * np.eye(d)
    cov[d:, d:] = np.zeros((d, d)) if model.exact else model.noise
    hh = np.zeros((k, d))
    e = np.zeros((d + 1, k))
    return stationary(exact, f, hh, e, q, refresh=(length, aux, cov, "last"))


def check():
    """The SGLD laws here against ``sgbench.reference.minibatch_laws`` and a discrete Lyapunov solve."""
    from sgbench.reference import minibatch_laws
    from sgbench.samplers import LangevinStep

    icg = Model("icg")
    p, h = icg.precision, 0.02
    lyap = solve_discrete_lyapunov(np.eye(4) - h * p, 2 * h * np.eye(4) + h**2 * icg.noise)
    np.testing.assert_allclose(langevin(icg, h)[1], lyap, rtol=1e-10, atol=1e-12)
    lin = Model("linreg")
    law = minibatch_laws.minibatch_sgld_stationary(lin.target, LangevinStep(1e-3, 1.0))
    np.testing.assert_allclose(langevin(lin, 1e-3)[1], law, rtol=1e-9)
    np.testing.assert_allclose(lin.precision, minibatch_laws.precision(lin.target), rtol=1e-12)
    return True


def chen(model: Model, h, alpha, **kwargs):
    """:func:`hamiltonian` for the Chen form's step h and per-step friction alpha (eps = sqrt(h), C = alpha/eps; its
    momentum v = eps r, refreshed from N(0, factor h T) where r is refreshed from N(0, factor T))."""
    eps = np.sqrt(h)
    return hamiltonian(model, eps, alpha / eps, **kwargs)


def suite_sghmc(model: Model, hyperparameters, temperature=1.0):
    """The suite's ``sghmc`` on icg from its own declared law (``linear_law``, no refresh): r per coordinate."""
    from sgbench.samplers import sghmc

    law = sghmc.linear_law(hyperparameters, model.precision, model.noise)
    s = solve_discrete_lyapunov(law.transition, law.covariance)
    d = model.dim
    return np.diag(s[:d, :d]) / (np.diag(model.covariance) * temperature) - 1


def _fmt(values):
    return "[" + ", ".join(f"{v:+.4f}" for v in values) + "]"


def report():  # pragma: no cover - the printout behind the docstrings
    """Print the exact numbers quoted by the decisive held-out samplers' docstrings and ``decisive.py``."""
    check()
    icg, icgs, lin = Model("icg"), Model("icg_stiff"), Model("linreg")
    exact = Model("icg", exact=True)

    def row(label, model, moments, temperature=1.0, reference=None):
        m, r = errors(model, moments, temperature)
        line = f"{label:52s} r {_fmt(r)}"
        if np.max(np.abs(m)) > 1e-6:
            line += f"  mean {_fmt(m)}"
        if reference is not None:
            _, rr = errors(model, reference, temperature)
            line += f"  vs reference {_fmt((1 + r) / (1 + rr) - 1)}"
        print(line, flush=True)

    print("eigenvalues: icg Sigma", np.linalg.eigvalsh(icg.covariance).round(3), "icg_stiff Sigma",
          np.linalg.eigvalsh(icgs.covariance).round(3), "linreg precision", np.linalg.eigvalsh(lin.precision).round(2))
    ladder = (1, 2, 4, 8)
    print("-- SGLD (sgld_correct, the suite's sgld, blackjax:sgld, sgmcmcjax:sgld)")
    for h in (0.02, 0.01, 0.005, 0.0025, 0.002, 0.001):
        row(f"sgld icg h={h}", icg, langevin(icg, h))
    for h in (0.02, 0.01, 0.005, 0.0025, 0.00125, 0.001):
        row(f"sgld linreg h={h}", lin, langevin(lin, h))
    for k in ladder:
        row(f"sgld T=0.5 linreg h={1e-3 / k}", lin, langevin(lin, 1e-3 / k, 0.5), 0.5)
    print("-- order-one bugs")
    dm = np.eye(4)
    dm[0, 0] = 1.2
    for h in (0.02, 0.0025):
        row(f"sgld_noise_115 icg h={h}", icg, langevin(icg, h, noise_factor=1.15), reference=langevin(icg, h))
        row(f"sgld_temperature_in_drift T=0.9 icg h={h}", icg, langevin(icg, h, drift=0.9 * np.eye(4)), 0.9,
            reference=langevin(icg, h, 0.9))
        row(f"sgld_first_coordinate icg h={h}", icg, langevin(icg, h, drift=dm), reference=langevin(icg, h))
        row(f"sgld_weight_decay icg h={h}", icg, langevin(icg, h, weight_decay=0.1), reference=langevin(icg, h))
    for h in (1e-3, 1.25e-4):
        row(f"sgld_temperature_in_drift T=0.9 linreg h={h}", lin, langevin(lin, h, drift=0.9 * np.eye(2)), 0.9,
            reference=langevin(lin, h, 0.9))
        scaled = Model("linreg", likelihood_scale=8 / 9)
        row(f"sgld_minibatch_off_by_one linreg h={h}", scaled, langevin(scaled, h), reference=langevin(lin, h))
    print("-- O(h) bugs")
    for k in ladder:
        h = 0.02 / k
        row(f"sgld_noise_growing icg h={h}", icg, langevin(icg, h, noise_factor=1 + 15 * h),
            reference=langevin(icg, h))
        row(f"sgld_drift_growing icg h={h}", icg, langevin(icg, h, drift=(1 + 20 * h) * np.eye(4)),
            reference=langevin(icg, h))
    for h in (0.02, 0.0025):
        row(f"sgld_noise_growing linreg h={h}", lin, langevin(lin, h, noise_factor=1 + 15 * h),
            reference=langevin(lin, h))
    print("-- Leimkuhler-Matthews (lm_langevin)")
    for k in ladder:
        h = 0.1 / k
        row(f"lm_langevin icg_stiff h={h} noise_estimate=0", icgs, leimkuhler_matthews(icgs, h))
        row(f"lm_langevin icg_stiff h={h} noise_estimate=16", icgs, leimkuhler_matthews(icgs, h, noise_estimate=16.0))
    print("-- SGHMC, practical form (sghmc_independent, sghmc_bao)")
    for k in ladder:
        eps = 0.1 / k
        row(f"semi-implicit C=0.5 eps={eps}", icg, hamiltonian(icg, eps, 0.5))
        row(f"sghmc_bao C=0.5 eps={eps}", icg, hamiltonian(icg, eps, 0.5, scheme="bao"))
    for k in (1, 2, 4, 8, 16):
        eps = 0.05 / k
        row(f"semi-implicit C=20 eps={eps}", icg, hamiltonian(icg, eps, 20.0))
        row(f"sghmc_bao C=20 eps={eps}", icg, hamiltonian(icg, eps, 20.0, scheme="bao"))
    print("-- SGHMC, Chen form (sghmc_old_gradient, sghmc_refresh_mass)")
    for k in ladder:
        h = 0.04 / k
        row(f"sghmc_old_gradient h={h} friction=0.2", icg, chen(icg, h, 0.2, scheme="explicit_euler"),
            reference=chen(icg, h, 0.2))
        row(f"sghmc (semi-implicit) h={h} friction=0.2", icg, chen(icg, h, 0.2))
    for k in ladder:
        h = 0.01 / k
        row(f"sghmc_refresh_mass h={h} friction=0.1 L=10", icg,
            chen(icg, h, 0.1, refresh_every=10, refresh_variance=1.5),
            reference=chen(icg, h, 0.1, refresh_every=10, refresh_variance=1.0))
        row(f"sghmc (refresh N(0, hT)) h={h} friction=0.1 L=10", icg,
            chen(icg, h, 0.1, refresh_every=10, refresh_variance=1.0))
    print("-- library samplers")
    for k in ladder:
        eps = 0.1 / k
        row(f"blackjax:sghmc T=0.5 L=10 alpha=1 eps={eps}", icg, blackjax_sghmc(icg, eps, 1.0, 10, 0.5), 0.5)
        row(f"blackjax:sghmc T=1 L=10 alpha=1 eps={eps}", icg, blackjax_sghmc(icg, eps, 1.0, 10, 1.0))
        row(f"blackjax:sghmc T=1 L=5 alpha=1 eps={eps}", icg, blackjax_sghmc(icg, eps, 1.0, 5, 1.0))
        row(f"  the same with exact gradients, eps={eps}", exact, blackjax_sghmc(exact, eps, 1.0, 5, 1.0))
    for temperature in (0.5, 1.0):
        row(f"its reference: sghmc explicit Euler, refresh 10, T={temperature}", icg,
            hamiltonian(icg, 0.1, 1.0, temperature, scheme="explicit_euler", refresh_every=10,
                        refresh_variance=temperature), temperature)
    row("sgmcmcjax:sghmc dt=1e-3 alpha=0.05 L=100", icg,
        chen(icg, 1e-3, 0.05, scheme="explicit_euler", refresh_every=100, refresh_variance=1.0))
    for dt in (0.1, 0.05):
        print(f"{'sghmc splitting (BAOAB) practical friction=50 eps=' + str(dt):52s} r "
              f"{_fmt(suite_sghmc(icg, dict(step_size=dt, friction=50.0, form='practical', integrator='splitting')))}")
    for temperature in (0.5, 0.25):
        r = suite_sghmc(icg, dict(step_size=0.05, friction=2.0, form="practical", integrator="splitting",
                                  temperature=temperature), temperature)
        print(f"{'sghmc splitting practical friction=2 eps=0.05 T=' + str(temperature):52s} r {_fmt(r)}"
              f"  against 0.5 Sigma: {_fmt(temperature / 0.5 * (1 + r) - 1)}")


if __name__ == "__main__":  # pragma: no cover
    report()
