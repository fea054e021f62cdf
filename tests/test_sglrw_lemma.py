"""Theorem 4.2 and Lemma 4.3 of the SGLRW paper measured on our steps (``bench/reproduce/sglrw_lemma.py``): the
measured second-moment errors agree with the lemma and reject the other sampler's structure, and the claims'
verdicts on constructed measurements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench import targets
from sgbench.bench.reproduce import sglrw_lemma as lemma


@pytest.fixture(scope="module")
def lemma_errors():
    """Measured second-moment errors of SGLD and SGLRW at 3 posterior states, minibatches of 8 (2^12 draws)."""
    import jax

    from sgbench.base.draws import jax_draws

    target = targets.get("linreg", dim=6, num_data=200, noise="minibatch", noise_batch_size=8)
    key = jax.random.key(1)
    positions = np.asarray(target.sample(jax.random.fold_in(key, 0), 3))
    draws = jax_draws(jax.random.fold_in(key, 1), target.draw_spec, (3,), "float64")
    minibatches = [jax.tree.map(lambda v, i=i: v[i], draws) for i in range(3)]
    step = lemma.lemma_step_size(target, positions, minibatches)
    out = {}
    for name in ("sgld", "sglrw"):
        increments = lemma._increments(name, target, step, 2**12)
        out[name] = [lemma.second_moment_error(increments, target, x, d, step, jax.random.fold_in(key, 2 + i),
                                               lattice=name == "sglrw") for i, (x, d) in enumerate(zip(positions,
                                                                                                      minibatches))]
    return out


def test_lemma_4_3_holds_for_both_steps(lemma_errors):
    for name in ("sgld", "sglrw"):
        statistics = lemma.agreement(lemma_errors[name])
        assert lemma.agrees(statistics, 1e-3) and statistics["states"] == 3, (name, statistics)
    # SGLRW's diagonal is exact: every draw moves each coordinate by sqrt(2 delta) in both steps
    assert all(np.allclose(np.diag(e["measured"]), 0, atol=1e-6 * np.abs(e["lemma"]).max())
               for e in lemma_errors["sglrw"])


def test_each_measurement_rejects_the_other_samplers_structure(lemma_errors):
    # SGLD's measured error against the off-diagonal structure and SGLRW's against the full one: the diagonal terms
    # zeta_i^2 + 2 g_i zeta_i are far beyond the Monte Carlo error (SGLD's) or exactly absent (SGLRW's)
    sgld, sglrw = (lemma.agreement(lemma_errors[name], "other") for name in ("sgld", "sglrw"))
    assert lemma.agrees(sgld, 1e-3) is False and sgld["max_z"] > 2 * lemma.threshold(sgld, 1e-3)
    assert lemma.agrees(sglrw, 1e-3) is False and sglrw["max_exact_error"] > 0.01


def test_states_where_the_clip_binds_are_left_out(lemma_errors):
    statistics = lemma.agreement([{**e, "clipped": True} for e in lemma_errors["sglrw"]])
    assert statistics["states"] == 0 and statistics["clipped_states"] == 3 and lemma.agrees(statistics, 1e-3) is None


def _statistics(max_z, exact=0.0, entries=1000, states=32):
    return {"max_z": max_z, "entries": entries, "max_exact_error": exact, "states": states, "clipped_states": 0}


def _measured(gap, spread, own=(3.0, 3.5), other=(40.0, 1.0), states=32):
    """One B's measurement: SGLRW's E_cov terms ``gap`` below SGLD's on average, paired differences of sd
    ``spread``; max |z| of SGLD and SGLRW against their own structures (``own``) and against the other's
    (``other``: SGLRW's as its exact-entry error)."""
    rng = np.random.default_rng(0)
    sgld = rng.uniform(1.0, 2.0, states)
    noise = rng.standard_normal(states)
    sglrw = sgld - gap + spread * (noise - noise.mean()) / noise.std(ddof=1)
    return {"step_size": 1e-6, "by_sampler": {
        "sgld": {"lemma": _statistics(own[0]), "other": _statistics(other[0]), "e_cov_terms": list(sgld)},
        "sglrw": {"lemma": _statistics(own[1]), "other": _statistics(own[1], exact=other[1]),
                  "e_cov_terms": list(sglrw)}}}


def test_claims_held_at_every_batch_size():
    bound, others, theorem, equality = lemma.claims({8: _measured(0.3, 0.2), 128: _measured(0.2, 0.2)})
    assert bound.verdict == others.verdict == "not testable" and bound.error_rate is None
    # paired gap 0.2 with sd 0.2 over 32 states: z = 0.2 / (0.2 / sqrt 32) / 1.04 = 5.4 > 1.96
    assert theorem.verdict == "held" and theorem.error_rate == 0.05 and "B=128" in theorem.ours
    assert equality.verdict == "held" and "4 (B, sampler) tests at 1.25 % each" in equality.reason


def test_claims_contradicted_and_within_noise_name_their_settings():
    _, _, theorem, equality = lemma.claims({8: _measured(-0.3, 0.2), 128: _measured(0.2, 0.2, own=(9.0, 3.5))})
    assert theorem.verdict == "contradicted" and "reversed beyond the noise at B=8" in theorem.reason
    assert equality.verdict == "contradicted" and "departs from the lemma beyond the threshold at B=128 sgld" \
        in equality.reason
    # a gap of 0.05 with sd 0.2 (z = 1.36 < 1.96); SGLD's diagonal not told apart from zero (max |z| 2 below 4.37,
    # the threshold over 1000 entries at 1.25 %)
    _, _, theorem, equality = lemma.claims({8: _measured(0.05, 0.2), 128: _measured(0.2, 0.2, other=(2.0, 1.0))})
    assert theorem.verdict == "within noise" and "inside the noise at B=8" in theorem.reason
    assert equality.verdict == "within noise" and "does not tell the two structures apart at B=128 sgld" \
        in equality.reason
    gap = lemma.paired_gap(_measured(0.05, 0.2), 8)  # SGLD's terms less SGLRW's: SGLRW below by 0.05
    assert math.isclose(gap.higher, 0.05) and gap.setting == "B=8" and gap.pairs == 32
