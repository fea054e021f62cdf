r"""The ten posteriordb models, each written in JAX from its Stan program (``data/<posterior>/model.stan``).

A :class:`Model` holds a posterior's data preparation (Stan's ``transformed data``), its map from the
unconstrained position to the constrained parameters with the log Jacobian (``_transforms``), the inverse map,
its log density on the constrained scale (Stan's ``model`` block, every statement; Stan's ``~`` drops constants
that ``target +=`` keeps, which changes no draw), and the quantities its reference draws keep (parameters and
transformed parameters, by posteriordb's names). The density the sampler sees is
``log_density(constrain(u)) + log_jacobian(u)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
import jax.scipy.stats as stats
from jax.scipy.special import logsumexp

from sgbench.targets.posteriordb import _transforms as tr


@dataclasses.dataclass(frozen=True)
class Model:
    """One posterior: ``coordinates`` names the unconstrained position's coordinates (``log sigma`` for a
    positive ``sigma``); ``prepare(raw)`` turns posteriordb's data JSON into arrays; ``constrain(u)`` gives
    ``(params, log_jacobian)``; ``unconstrain(params)`` inverts it; ``log_density(params, data)`` is the model
    block; ``quantities(params)`` the reference draws' quantities (default: the parameters). A model with i.i.d.
    data also splits its block as ``log_prior(params)`` plus the sum over data of ``log_term(params, datum)``,
    ``datum`` one row of each of the data arrays ``datum_keys`` (the minibatch split)."""

    posterior: str
    coordinates: tuple[str, ...]
    prepare: Callable
    constrain: Callable
    unconstrain: Callable
    log_density: Callable
    quantities: Callable = lambda params: params
    log_prior: Callable | None = None
    log_term: Callable | None = None
    datum_keys: tuple[str, ...] = ()


def _vector(raw, *names):
    return {name: jnp.asarray(raw[name], dtype=jnp.float64) for name in names}


def _names(prefix: str, size: int) -> tuple[str, ...]:
    return tuple(f"{prefix}[{i}]" for i in range(1, size + 1))


def _regression(posterior: str, size: int, prepare, prior=None) -> Model:
    """A normal linear regression ``y ~ normal(design @ beta, sigma)``, ``sigma > 0``, flat priors unless ``prior``;
    its data are i.i.d. given the parameters (the minibatch split)."""

    def constrain(u):
        sigma, log_jacobian = tr.to_positive(u[size])
        return {"beta": u[:size], "sigma": sigma}, log_jacobian

    def unconstrain(params):
        return jnp.concatenate([params["beta"], jnp.atleast_1d(tr.from_positive(params["sigma"]))])

    def log_prior(params):
        return 0.0 if prior is None else prior(params)

    def log_term(params, datum):
        return stats.norm.logpdf(datum["y"], datum["design"] @ params["beta"], params["sigma"])

    def log_density(params, data):
        return log_prior(params) + jnp.sum(stats.norm.logpdf(data["y"], data["design"] @ params["beta"],
                                                             params["sigma"]))

    return Model(posterior, _names("beta", size) + ("log sigma",), prepare, constrain, unconstrain, log_density,
                 log_prior=log_prior, log_term=log_term, datum_keys=("y", "design"))


def _with_intercept(y, *columns):
    return {"y": y, "design": jnp.column_stack([jnp.ones_like(y), *columns])}


def _earnings(raw):
    d = _vector(raw, "earn", "height", "male")
    return _with_intercept(jnp.log(d["earn"]), d["height"], d["male"], d["height"] * d["male"])


def _kidiq(raw):
    d = _vector(raw, "kid_score", "mom_iq", "mom_hs")
    return _with_intercept(d["kid_score"], d["mom_hs"], d["mom_iq"], d["mom_hs"] * d["mom_iq"])


def _mesquite(raw):
    d = _vector(raw, "weight", "diam1", "diam2", "canopy_height", "total_height", "density", "group")
    logs = [jnp.log(d[k]) for k in ("diam1", "diam2", "canopy_height", "total_height", "density")]
    return _with_intercept(jnp.log(d["weight"]), *logs, d["group"])


def _nes(raw):
    d = _vector(raw, "partyid7", "real_ideo", "race_adj", "educ1", "gender", "income")
    age = jnp.asarray(raw["age_discrete"])
    ages = [(age == k).astype(jnp.float64) for k in (2, 3, 4)]
    return _with_intercept(d["partyid7"], d["real_ideo"], d["race_adj"], *ages, d["educ1"], d["gender"], d["income"])


def _sblrc(raw):
    return {"y": jnp.asarray(raw["y"], dtype=jnp.float64), "design": jnp.asarray(raw["X"], dtype=jnp.float64)}


def _half_cauchy_sigma(scale):
    return lambda params: stats.cauchy.logpdf(params["sigma"], 0.0, scale)


EARNINGS = _regression("earnings-logearn_interaction", 4, _earnings)
KIDIQ = _regression("kidiq-kidscore_interaction", 4, _kidiq, prior=_half_cauchy_sigma(2.5))
MESQUITE = _regression("mesquite-logmesquite", 7, _mesquite)
NES = _regression("nes2000-nes", 9, _nes)
SBLRC = _regression("sblrc-blr", 5, _sblrc,
                    prior=lambda p: jnp.sum(stats.norm.logpdf(p["beta"], 0.0, 10.0))
                    + stats.norm.logpdf(p["sigma"], 0.0, 10.0))


def _diamonds_prepare(raw):
    x = jnp.asarray(raw["X"], dtype=jnp.float64)[:, 1:]
    means = x.mean(axis=0)
    return {"y": jnp.asarray(raw["Y"], dtype=jnp.float64), "centred": x - means, "means": means}


def _diamonds_constrain(u):
    sigma, log_jacobian = tr.to_positive(u[25])
    return {"b": u[:24], "Intercept": u[24], "sigma": sigma}, log_jacobian


def _diamonds_unconstrain(p):
    return jnp.concatenate([p["b"], jnp.atleast_1d(p["Intercept"]), jnp.atleast_1d(tr.from_positive(p["sigma"]))])


def _diamonds_log_prior(p):
    return (jnp.sum(stats.norm.logpdf(p["b"], 0.0, 1.0)) + stats.t.logpdf(p["Intercept"], 3, 8.0, 10.0)
            + stats.t.logpdf(p["sigma"], 3, 0.0, 10.0) + jnp.log(2.0))  # - student_t_lccdf(0 | 3, 0, 10) = log 2


def _diamonds_log_term(p, datum):
    return stats.norm.logpdf(datum["y"], p["Intercept"] + datum["centred"] @ p["b"], p["sigma"])


def _diamonds_log_density(p, data):
    mean = p["Intercept"] + data["centred"] @ p["b"]
    return _diamonds_log_prior(p) + jnp.sum(stats.norm.logpdf(data["y"], mean, p["sigma"]))


DIAMONDS = Model("diamonds-diamonds", _names("b", 24) + ("Intercept", "log sigma"), _diamonds_prepare,
                 _diamonds_constrain, _diamonds_unconstrain, _diamonds_log_density, log_prior=_diamonds_log_prior,
                 log_term=_diamonds_log_term, datum_keys=("y", "centred"))


def _ark_constrain(u):
    sigma, log_jacobian = tr.to_positive(u[6])
    return {"alpha": u[0], "beta": u[1:6], "sigma": sigma}, log_jacobian


def _ark_unconstrain(p):
    return jnp.concatenate([jnp.atleast_1d(p["alpha"]), p["beta"], jnp.atleast_1d(tr.from_positive(p["sigma"]))])


def _ark_prepare(raw):
    y = jnp.asarray(raw["y"], dtype=jnp.float64)
    k = int(raw["K"])
    lags = jnp.column_stack([y[k - j - 1: y.shape[0] - j - 1] for j in range(k)])  # column j: y[t - (j + 1)]
    return {"y": y[k:], "lags": lags}


def _ark_log_density(p, data):
    prior = (stats.norm.logpdf(p["alpha"], 0.0, 10.0) + jnp.sum(stats.norm.logpdf(p["beta"], 0.0, 10.0))
             + stats.cauchy.logpdf(p["sigma"], 0.0, 2.5))
    return prior + jnp.sum(stats.norm.logpdf(data["y"], p["alpha"] + data["lags"] @ p["beta"], p["sigma"]))


ARK = Model("arK-arK", ("alpha",) + _names("beta", 5) + ("log sigma",), _ark_prepare, _ark_constrain,
            _ark_unconstrain, _ark_log_density)


def _schools_constrain(u):
    tau, log_jacobian = tr.to_positive(u[9])
    return {"theta_trans": u[:8], "mu": u[8], "tau": tau}, log_jacobian


def _schools_unconstrain(p):
    theta_trans = (p["theta"] - p["mu"]) / p["tau"]  # the reference draws keep theta, not theta_trans
    return jnp.concatenate([theta_trans, jnp.atleast_1d(p["mu"]), jnp.atleast_1d(tr.from_positive(p["tau"]))])


def _schools_log_density(p, data):
    theta = p["theta_trans"] * p["tau"] + p["mu"]
    return (jnp.sum(stats.norm.logpdf(p["theta_trans"])) + jnp.sum(stats.norm.logpdf(data["y"], theta, data["sigma"]))
            + stats.norm.logpdf(p["mu"], 0.0, 5.0) + stats.cauchy.logpdf(p["tau"], 0.0, 5.0))


EIGHT_SCHOOLS = Model(
    "eight_schools-eight_schools_noncentered", _names("theta_trans", 8) + ("mu", "log tau"),
    lambda raw: _vector(raw, "y", "sigma"), _schools_constrain, _schools_unconstrain, _schools_log_density,
    quantities=lambda p: {"theta": p["theta_trans"] * p["tau"] + p["mu"], "mu": p["mu"], "tau": p["tau"]})


def _garch_constrain(u):
    alpha0, j0 = tr.to_positive(u[1])
    alpha1, j1 = tr.to_interval(u[2], 0.0, 1.0)
    beta1, j2 = tr.to_interval(u[3], 0.0, 1.0 - alpha1)
    return {"mu": u[0], "alpha0": alpha0, "alpha1": alpha1, "beta1": beta1}, j0 + j1 + j2


def _garch_unconstrain(p):
    return jnp.stack([p["mu"], tr.from_positive(p["alpha0"]), tr.from_interval(p["alpha1"], 0.0, 1.0),
                      tr.from_interval(p["beta1"], 0.0, 1.0 - p["alpha1"])])


def _garch_prepare(raw):
    return {"y": jnp.asarray(raw["y"], dtype=jnp.float64), "sigma1": jnp.float64(raw["sigma1"])}


def _garch_log_density(p, data):
    y = data["y"]

    def step(sigma_previous, y_previous):
        sigma = jnp.sqrt(p["alpha0"] + p["alpha1"] * (y_previous - p["mu"]) ** 2 + p["beta1"] * sigma_previous**2)
        return sigma, sigma

    _, sigmas = jax.lax.scan(step, data["sigma1"], y[:-1])
    sigma = jnp.concatenate([jnp.atleast_1d(data["sigma1"]), sigmas])
    return jnp.sum(stats.norm.logpdf(y, p["mu"], sigma))  # flat priors on mu, alpha0, alpha1, beta1


GARCH = Model("garch-garch11", ("mu", "log alpha0", "logit alpha1", "logit beta1/(1-alpha1)"), _garch_prepare,
              _garch_constrain, _garch_unconstrain, _garch_log_density)


def _mix_constrain(u):
    mu, j0 = tr.to_ordered(u[:2])
    sigma, j1 = tr.to_positive(u[2:4])
    theta, j2 = tr.to_interval(u[4], 0.0, 1.0)
    return {"mu": mu, "sigma": sigma, "theta": theta}, j0 + j1 + j2


def _mix_unconstrain(p):
    return jnp.concatenate([tr.from_ordered(p["mu"]), tr.from_positive(p["sigma"]),
                            jnp.atleast_1d(tr.from_interval(p["theta"], 0.0, 1.0))])


def _mix_log_prior(p):
    return (jnp.sum(stats.norm.logpdf(p["sigma"], 0.0, 2.0)) + jnp.sum(stats.norm.logpdf(p["mu"], 0.0, 2.0))
            + stats.beta.logpdf(p["theta"], 5.0, 5.0))


def _mix_log_term(p, datum):
    weights = jnp.stack([jnp.log(p["theta"]), jnp.log1p(-p["theta"])])
    return logsumexp(weights + stats.norm.logpdf(datum["y"], p["mu"], p["sigma"]))


def _mix_log_density(p, data):
    y = data["y"][:, None]
    parts = jnp.stack([jnp.log(p["theta"]), jnp.log1p(-p["theta"])]) + stats.norm.logpdf(y, p["mu"], p["sigma"])
    return _mix_log_prior(p) + jnp.sum(logsumexp(parts, axis=1))


GAUSS_MIX = Model("low_dim_gauss_mix-low_dim_gauss_mix", ("mu[1]", "log(mu[2] - mu[1])", "log sigma[1]",
                                                          "log sigma[2]", "logit theta"),
                  lambda raw: _vector(raw, "y"), _mix_constrain, _mix_unconstrain, _mix_log_density,
                  log_prior=_mix_log_prior, log_term=_mix_log_term, datum_keys=("y",))

MODELS = {m.posterior: m for m in (ARK, DIAMONDS, EARNINGS, EIGHT_SCHOOLS, GARCH, KIDIQ, GAUSS_MIX, MESQUITE, NES,
                                   SBLRC)}
