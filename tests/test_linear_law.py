r"""The exact laws the samplers declare in their own files (``sgbench.samplers._linear_law``), held to their steps.

A declared law says one step on :math:`\mathcal N(\mu, P^{-1})` with additive gradient noise of covariance
:math:`V` is :math:`z' = Az + w`, :math:`\mathrm{Cov}(w) = Q`, in the centred state :math:`z = (x - \mu, m)`. A
sampler's NumPy ``reference_step`` with all its draws fixed is affine in the state and in the draws, so both sides
can be compared exactly, without sampling:

- ``test_declared_law_is_the_reference_step`` (SGLD in both conventions, frozen pSGLD, SGLD-CV off the mode,
  SGHMC in both forms and integrators with noise estimate, SGHMC-CV; the gate's ``icg4``, V = 2 I): from every unit
  state with the draws at 0, the step's response is the column of :math:`A`; from the zero state with one draw
  coordinate at 1 (each of the sampler's and the gradient noise's standard normals) it is a column of the noise's
  factor, so :math:`Q` is the sum of their outer products; with a refresh, the step at counter 0 is :math:`A`
  applied to the state with its momentum redrawn with the declared variance. Deterministic (1e-12 relative).
- ``test_sglrw_law_is_its_unclipped_second_moment``: SGLRW's one-step second moment from a point with the clip
  inactive, by enumerating its four lattice moves with Definition 4.1's probabilities, equals its declared law's
  (the :math:`-h^2 g_i^2` its lattice takes off the diagonal included). Deterministic (1e-12).
- ``test_laws_say_why_they_do_not_exist``: pSGLD's adaptive preconditioner, a schedule asked for every step (the
  law of one step is the schedule's step size), a sampler that declares none, an unknown hyperparameter, SGLRW's
  approximate law in an exact-law cell and a control variate's law under minibatch noise are errors that say why.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sgbench import samplers, targets
from sgbench.bench.gate import cells, exact_law
from sgbench.samplers._contract import GradientOracle

CENTRE = np.array([0.3, -0.2, 0.1, 0.4])  # a control-variate centre off the mode
CASES = {
    "sgld": ("sgld", {"step_size": 0.1, "temperature": 0.5}),
    "sgld-welling_teh": ("sgld", {"step_size": 0.1, "convention": "welling_teh"}),
    "psgld-frozen": ("psgld", {"step_size": 0.1, "temperature": 0.7, "smoothing": 1.0,
                               "initial_square_average": [1.0, 4.0, 0.25, 9.0]}),
    "sgld_cv": ("sgld_cv", {"step_size": 0.1}),
    "sghmc-chen-euler": ("sghmc", {"step_size": 0.01, "friction": 0.2, "noise_estimate": 8.0, "temperature": 0.5}),
    "sghmc-chen-splitting": ("sghmc", {"step_size": 0.01, "friction": 0.2, "integrator": "splitting"}),
    "sghmc-practical-euler": ("sghmc", {"step_size": 0.1, "form": "practical", "friction": 3.0,
                                        "noise_estimate": 1.0}),
    "sghmc-practical-splitting-refresh": ("sghmc", {"step_size": 0.2, "form": "practical", "friction": 3.0,
                                                    "integrator": "splitting", "refresh_every": 3}),
    "sghmc_cv": ("sghmc_cv", {"step_size": 0.1, "form": "practical", "friction": 3.0}),
}


def icg4():
    return targets.get("icg", **cells.ICG4)


def params_of(sampler, target, hyperparameters):
    """Validated Params; a control-variate sampler gets ``CENTRE`` (and the full gradient there), not the MAP."""
    if "centre" in {f.name for f in dataclasses.fields(sampler.Params)}:
        return sampler.params(**hyperparameters, centre=CENTRE, centre_grad=target.grad_logdensity(CENTRE))
    return sampler.params(**hyperparameters)


def unit_draws(spec):
    """The draws of ``spec`` at 0, then each with one coordinate at 1: (name, draws) pairs."""
    zero = {name: np.zeros(variate.shape) for name, variate in spec.items()}
    out = []
    for name, variate in spec.items():
        for j in range(int(np.prod(variate.shape))):
            one = {key: value.copy() for key, value in zero.items()}
            one[name].reshape(-1)[j] = 1.0
            out.append((name, one))
    return zero, out


def step_from(sampler, params, target, z, counter, sampler_draws, gradient_draws):
    """The centred state after one reference step from the centred state ``z`` at step counter ``counter``."""
    d, mu = target.dim, np.asarray(target.truth.mean)
    state = sampler.init(mu + z[:d], params)._replace(step=counter)
    if len(z) > d:
        state = state._replace(momentum=z[d:])
    new, _ = sampler.reference_step(state, GradientOracle(target, gradient_draws), sampler_draws, params)
    return np.concatenate([new.position - mu] + ([new.momentum] if len(z) > d else []))


@pytest.mark.parametrize("case", CASES)
def test_declared_law_is_the_reference_step(case):
    name, hyperparameters = CASES[case]
    sampler, target = samplers.get(name), icg4()
    params = params_of(sampler, target, hyperparameters)
    law = sampler.law(hyperparameters, target.precision, target.noise.covariance(target.truth.mean))
    k = law.transition.shape[0]
    zero, units = unit_draws(sampler.draw_spec(target.dim, params))
    gradient_zero, gradient_units = unit_draws(target.draw_spec)
    counter = 1  # not a refresh step

    def step(z, draws=zero, gradient_draws=gradient_zero, at=counter):
        return step_from(sampler, params, target, z, at, draws, gradient_draws)

    scale = np.max(np.abs(law.transition))
    np.testing.assert_allclose(step(np.zeros(k)), 0.0, atol=1e-12 * scale)
    transition = np.column_stack([step(column) for column in np.eye(k)])
    np.testing.assert_allclose(transition, law.transition, rtol=0, atol=1e-12 * scale)
    responses = [step(np.zeros(k), draws) for variate, draws in units if variate != "refresh"]
    responses += [step(np.zeros(k), gradient_draws=draws) for _, draws in gradient_units]
    covariance = sum(np.outer(r, r) for r in responses)
    np.testing.assert_allclose(covariance, law.covariance, rtol=0, atol=1e-12 * np.max(np.abs(law.covariance)))
    assert law.approximation == "" and law.state_covariance is None
    if law.refresh_every:  # at counter 0 the momentum is redrawn first: A (x, sqrt(refresh variance) draw)
        d = target.dim
        kept = np.column_stack([step(column, at=0) for column in np.eye(k)])
        np.testing.assert_allclose(kept[:, :d], law.transition[:, :d], rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(kept[:, d:], 0.0, atol=1e-12 * scale)
        momentum = np.eye(k)[d]  # forgotten exactly at the declared refresh steps
        forgotten = [np.allclose(step(momentum, at=t), 0.0, atol=1e-12 * scale) for t in range(3 * law.refresh_every)]
        assert forgotten == [t % law.refresh_every == 0 for t in range(3 * law.refresh_every)]
        redrawn = [step(np.zeros(k), draws, at=0) for variate, draws in units if variate == "refresh"]
        refreshed = sum(np.outer(r, r) for r in redrawn)
        fresh = np.zeros((k, k))
        fresh[d:, d:] = law.refresh_variance * np.eye(d)
        np.testing.assert_allclose(refreshed, law.transition @ fresh @ law.transition.T, rtol=0,
                                   atol=1e-12 * np.max(np.abs(refreshed)))
    # SGLD's step on the oracle's own gradient declares what the minibatch law reads; a control variate's does not
    assert (law.langevin is not None) == (name in ("sgld", "psgld")) == law.position_dependent_noise


def test_sglrw_law_is_its_unclipped_second_moment():
    target = targets.get("icg", dim=2, condition_number=4.0, rotation_seed=3, noise="none")
    sampler, hyperparameters = samplers.get("sglrw"), {"step_size": 0.05, "temperature": 0.5}
    params = sampler.params(**hyperparameters)
    mu, e = np.asarray(target.truth.mean), np.array([0.3, -0.2])
    g = np.asarray(target.grad_logdensity(mu + e))
    tilt = np.sqrt(0.05 / (2 * 0.5)) * g
    assert np.all(np.abs(tilt) < 1)  # the clip is inactive
    up = (1 + tilt) / 2  # Definition 4.1: P[s_i = +1]
    expected = np.zeros((2, 2))
    for signs in ([1, 1], [1, -1], [-1, 1], [-1, -1]):
        uniform = np.where(np.array(signs) > 0, 0.0, np.nextafter(1.0, 0.0))  # forces each coordinate's move
        state = sampler.init(mu + e, params)
        new, _ = sampler.reference_step(state, GradientOracle.exact(target), {"uniform": uniform}, params)
        probability = np.prod(np.where(np.array(signs) > 0, up, 1 - up))
        expected += probability * np.outer(new.position - mu, new.position - mu)
    law = sampler.law(hyperparameters, target.precision, None)
    np.testing.assert_allclose(law.propagate(np.outer(e, e)), expected, rtol=1e-12)
    assert law.approximation and law.position_dependent_noise and law.langevin is None


def test_laws_say_why_they_do_not_exist():
    target = icg4()
    p, v = target.precision, target.noise.covariance(target.truth.mean)
    with pytest.raises(samplers.NoLinearLawError, match="frozen preconditioner"):
        samplers.get("psgld").law({"step_size": 0.1}, p, v)
    decay = {"step_size": 0.1, "schedule": {"kind": "polynomial_decay"}}
    with pytest.raises(samplers.NoLinearLawError, match="needs a constant step size"):
        samplers.get("sgld").law(decay, p, v)
    at_step = samplers.get("sgld").law(decay, p, v, step=7)
    np.testing.assert_allclose(at_step.transition, np.eye(4) - 0.1 * 8**-0.55 * p, rtol=1e-14)
    with pytest.raises(samplers.NoLinearLawError, match="no exact law for sampler 'sgnht'"):
        samplers.get("sgnht").law({"step_size": 0.1}, p, v)
    with pytest.raises(ValueError, match="has no parameter 'friction'"):
        samplers.get("sgld").law({"step_size": 0.1, "friction": 1.0}, p, v)
    walk = cells.Cell("sglrw", {"step_size": 0.02}, num_steps=10, exact_law=True)
    with pytest.raises(samplers.NoLinearLawError, match="is an approximation"):
        exact_law.expected_second_moment(walk)
    on_minibatches = cells.Cell("sgld_cv", {"step_size": 1e-3}, target="linreg", target_params=dict(cells.LINREG),
                                num_steps=10, exact_law=True)
    with pytest.raises(samplers.NoLinearLawError, match="minibatch law needs SGLD's step"):
        exact_law.expected_second_moment(on_minibatches)
