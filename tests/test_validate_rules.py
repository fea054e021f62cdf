r"""The parts of ``sgbench validate``'s verdict that need no sampler run (issue 42): the start and warm-up rule
(``sgbench.bench.gate.start``), the bias to resolve (``sgbench.bench.gate.resolution``), the rules that turn evidence
into PASSED / FAILED / INCONCLUSIVE (``sgbench.bench.validate.verdict``), per-target hyperparameters and claims
(``sgbench.bench.validate.validate``).

- ``test_travel_*``: synthetic AR(1) chains :math:`x_{t+1} = a x_t + \sqrt{1 - a^2}\,\xi` (stationary law
  N(0, 1), integrated autocorrelation time :math:`(1 + a)/(1 - a)`) started at twice the target's spread.
  Fast chains (time 3) forget a warm-up of 4000 steps; chains of time 3999 do not, and the warm-up asked for
  is at least twice the estimate; a chain that never moves is "still". The estimate is the multi-chain
  bulk ESS's; the fast chains' time is below the resolution of one kept draw.
- ``test_resolution_*``: a passed check whose detectable deviation exceeds the threshold is a shortfall, with
  the chains that would resolve it (:math:`C (d/\delta)^2`); the mean's threshold is r standard deviations;
  both are relative to the variance of the law compared with.
- ``test_decide_*``: one case per rule of ``sgbench.bench.validate.verdict``'s docstring, on made-up checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sgbench import samplers
from sgbench.bench.gate import start
from sgbench.bench.gate.outcome import Outcome, combined
from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.validate.claim import NO_CLAIM, resolve_claim, split_params
from sgbench.bench.validate.verdict import Evidence, LadderFinding, decide, remedy
from sgbench.reference.checks import CheckResult


def _ar1(rng, chains, steps, a, thin, start_scale=2.0, dim=2):
    x = start_scale * rng.standard_normal((chains, dim))
    first = x.copy()
    kept = []
    for t in range(steps):
        x = a * x + math.sqrt(1 - a * a) * rng.standard_normal(x.shape)
        if t % thin == thin - 1:
            kept.append(x.copy())
    return first, np.stack(kept, axis=1)


def _travel(a, warmup=4000, scored=4000, seed=0):
    rng = np.random.default_rng(seed)
    thin = scored // 100
    first, samples = _ar1(rng, 64, warmup + scored, a, thin)
    samples = samples[:, warmup // thin:]
    return start.travel(first, samples, np.zeros(64, bool), np.zeros(2), np.ones(2), thin, warmup, scored)


def test_travel_fast_chains_forget_their_start():
    t = _travel(0.5)  # integrated time 3
    assert t.forgot and not t.still and t.autocorrelation_steps < 3 * 40  # at the resolution: one kept draw = 40 steps
    assert "forgot their start" in t.describe()


def test_travel_slow_chains_do_not_and_say_how_long_would():
    a = 1 - 2 / 4000  # integrated time 3999 steps
    t = _travel(a)
    assert not t.forgot and not t.still
    assert t.warmup_needed >= start.FORGET_TIMES * 4000 / 2, t
    assert "did not forget their start" in t.describe() and "--warmup" in t.describe()


def test_travel_still_chains():
    rng = np.random.default_rng(1)
    first = 2 * rng.standard_normal((64, 3))
    samples = np.repeat(first[:, None, :], 100, axis=1)
    t = start.travel(first, samples, np.zeros(64, bool), np.zeros(3), np.ones(3), 40, 4000, 4000)
    assert t.still and not t.forgot and "do not move" in t.describe()


def test_travel_one_frozen_coordinate_is_still():
    """A sampler that moves every coordinate but one does not move either."""
    rng = np.random.default_rng(2)
    first, samples = _ar1(rng, 64, 8000, 0.5, 80, dim=3)
    samples = samples[:, 50:]
    first[:, 1] = samples[:, -1, 1] = 0.7 * rng.standard_normal(64)
    t = start.travel(first, samples, np.zeros(64, bool), np.zeros(3), np.ones(3), 80, 4000, 4000)
    assert t.still and t.coordinate == 1 and "coordinate 1" in t.describe()


def test_overdispersed_start_scales_about_the_mean():
    import jax

    from sgbench import targets

    target = targets.get("icg", dim=4, condition_number=4.0, rotation_seed=0)
    x = start.overdispersed(target, jax.random.key(0), 20000, target.truth.mean)
    np.testing.assert_allclose(np.cov(x.T), 4 * np.asarray(target.truth.covariance), atol=0.15)
    np.testing.assert_allclose(x.mean(axis=0), np.asarray(target.truth.mean), atol=0.05)


def _check(name, passed=True, detectable=0.05):
    return CheckResult(name=name, passed=passed, alpha=1e-4, statistic=0.0, threshold=4.0,
                       detectable=np.array([0.01, detectable]))


def test_resolution_shortfall_names_the_chains_that_would_decide():
    resolution = Resolution(0.1)
    assert resolution.threshold("mean") == 0.1 and resolution.threshold("b2") is None
    assert resolution.shortfalls([_check("second_moment", detectable=0.09), _check("mean", detectable=0.07)], 64) == []
    lines = resolution.shortfalls([_check("second_moment", detectable=0.2), _check("b2", detectable=9.0)], 64)
    assert len(lines) == 1 and "256 chains" in lines[0], lines
    assert resolution.shortfalls([_check("second_moment", passed=False, detectable=0.5)], 64) == []
    just_short = resolution.shortfalls([_check("second_moment", detectable=0.1004)], 1536)
    assert "of 0.1004, not 0.1 " in just_short[0] and "1549 chains" in just_short[0], just_short


def test_resolution_is_relative_to_the_law_compared_with():
    """Against a law whose variance is twice the target's, a detectable 0.15 in r is 0.075 of the law's."""
    biased = CheckResult(name="second_moment", passed=True, alpha=1e-4, statistic=0.0, threshold=4.0,
                         expected=np.array([1.0, 1.0]), detectable=np.array([0.15, 0.15]))
    mean = CheckResult(name="mean", passed=True, alpha=1e-4, statistic=0.0, threshold=4.0,
                       expected=np.zeros(2), detectable=np.array([0.13, 0.13]))
    assert Resolution(0.1).shortfalls([mean, biased], 256) == []  # 0.13 / sqrt(2) = 0.092
    assert len(Resolution(0.1).shortfalls([mean], 256)) == 1  # alone, the mean is in target sd


@pytest.mark.parametrize("value", [0.0, -0.1, math.inf, math.nan])
def test_resolution_must_be_positive(value):
    with pytest.raises(ValueError, match="detect"):
        Resolution(value)


FORGOT = start.Travel(4000, 4000, 2.0, 100.0)
SLOW = start.Travel(4000, 4000, 0.5, 3000.0)
STILL = start.Travel(4000, 4000, 0.0, math.inf)
GOOD = (_check("finite"), _check("mean"), _check("second_moment"), _check("b2"))
BAD = (_check("finite"), _check("mean"), _check("second_moment", passed=False), _check("b2", passed=False))


def _evidence(**kwargs):
    base = dict(name="cand", against="exact truth", chains=64, diverged=0, travel=FORGOT, agreement=GOOD)
    return Evidence(**(base | kwargs))


def _reference(**kwargs):
    return _evidence(**(dict(against="the suite's 'sgld'", reference="sgld", reference_chains=256, truth=GOOD,
                             held=(True, "")) | kwargs))


RULES = [  # (evidence, outcome, words in the reason)
    (_evidence(), Outcome.PASSED, "agrees with exact truth"),
    (_evidence(agreement=BAD), Outcome.FAILED, "disagrees with exact truth"),
    (_evidence(travel=STILL), Outcome.FAILED, "do not move"),
    (_evidence(diverged=3), Outcome.FAILED, "diverged in 3 of 64"),
    (_evidence(travel=SLOW), Outcome.INCONCLUSIVE, "did not forget"),
    (_evidence(travel=SLOW, agreement=BAD), Outcome.INCONCLUSIVE, "did not forget"),
    (_evidence(agreement=(_check("finite"), _check("mean"), _check("second_moment", detectable=0.3))),
     Outcome.INCONCLUSIVE, "detects only"),
    (_evidence(agreement=BAD, ladder=LadderFinding("vanishes", "its error vanishes as the step shrinks")),
     Outcome.PASSED, "a discretisation bias: its error vanishes"),
    (_evidence(agreement=BAD, ladder=LadderFinding("persists", "its error does not vanish as the step shrinks")),
     Outcome.FAILED, "does not vanish"),
    (_evidence(agreement=BAD, ladder=LadderFinding("undecided", "the ladder cannot yet tell")), Outcome.INCONCLUSIVE,
     "cannot yet tell"),
    (_evidence(unstationary="its variance keeps growing"), Outcome.FAILED, "keeps growing"),
    (_reference(), Outcome.PASSED, "itself held to truth"),
    (_reference(agreement=BAD), Outcome.FAILED, "disagrees with the suite's 'sgld'"),
    (_reference(agreement=BAD, travel=SLOW), Outcome.FAILED, "disagrees"),  # same starts: memory cannot explain it
    (_reference(agreement=BAD, held=(False, "why")), Outcome.INCONCLUSIVE, "cannot be held to truth here: why"),
    (_reference(agreement=BAD, truth=BAD, held=(False, "why")), Outcome.FAILED, "and with truth on its own"),
    (_reference(agreement=BAD, truth=BAD, held=(False, "why"), ladder=LadderFinding("vanishes", "it vanishes")),
     Outcome.INCONCLUSIVE, "the claim itself cannot be confirmed"),
    (_reference(agreement=BAD, truth=BAD, held=(False, "why"), ladder=LadderFinding("persists", "no")),
     Outcome.FAILED, "and with truth on its own"),
    (_reference(held=(False, "why")), Outcome.PASSED, "and with truth on its own"),
    (_reference(truth=BAD, held=(False, "why")), Outcome.INCONCLUSIVE, "same discretisation bias"),
    (_reference(truth=BAD, held=(False, "why"), ladder=LadderFinding("persists", "its error does not vanish")),
     Outcome.FAILED, "agrees with the suite's 'sgld', but that reference cannot be held"),
    (_reference(truth=BAD, held=(False, "why"), ladder=LadderFinding("vanishes", "it vanishes")),
     Outcome.INCONCLUSIVE, "the claim itself cannot be confirmed"),
    (_reference(truth=BAD, held=(False, "why"), ladder=LadderFinding("undecided", "cannot yet tell")),
     Outcome.INCONCLUSIVE, "cannot yet tell"),
    (_reference(travel=SLOW), Outcome.INCONCLUSIVE, "did not forget"),
    (_reference(diverged=5, reference_diverged=256), Outcome.INCONCLUSIVE, "unstable on this target"),
    (_reference(diverged=5), Outcome.FAILED, "where the suite's sgld did not"),
    (_reference(reference_diverged=7, agreement=()), Outcome.INCONCLUSIVE, "cannot be compared"),
    (_reference(reference_diverged=7, agreement=(), truth=BAD), Outcome.FAILED, "disagrees with truth on its own"),
]


@pytest.mark.parametrize("evidence, outcome, words", RULES, ids=[f"rule{i}" for i in range(len(RULES))])
def test_decide_rules(evidence, outcome, words):
    got, reason = decide(evidence, Resolution(0.1))
    assert got is outcome and words in reason, (got, reason)


def test_combined_outcome():
    assert combined([Outcome.PASSED, Outcome.INCONCLUSIVE, Outcome.FAILED]) is Outcome.FAILED
    assert combined([Outcome.PASSED, Outcome.INCONCLUSIVE]) is Outcome.INCONCLUSIVE
    assert combined([Outcome.PASSED]) is Outcome.PASSED
    assert combined([Outcome.FAILED, Outcome.ERROR, Outcome.PASSED]) is Outcome.ERROR
    assert [o.exit_status for o in Outcome] == [0, 1, 3, 4]


def test_split_params_per_target():
    out = split_params({"step_size": 0.02, "linreg:step_size": 1e-3, "gmm:temperature": 0.5}, ["icg", "linreg", "gmm"])
    assert out == {"icg": {"step_size": 0.02}, "linreg": {"step_size": 1e-3},
                   "gmm": {"step_size": 0.02, "temperature": 0.5}}
    with pytest.raises(ValueError, match="'logreg' is not among the targets validated"):
        split_params({"logreg:step_size": 1.0}, ["icg"])


def test_claims_none_map_and_reference_params():
    sgld = samplers.get("sgld")
    assert resolve_claim(sgld, NO_CLAIM).name is None
    assert resolve_claim(sgld).itself
    claim = resolve_claim(samplers.get("sghmc"), "sgld", rename={"lr": "step_size"})
    assert claim.translate({"lr": 0.1}) == {"step_size": 0.1}
    assert "convention" in claim.defaults({"step_size": 0.1})
    with pytest.raises(ValueError, match=r"has no hyperparameter 'friction'.*--map friction=NAME"):
        claim.translate({"lr": 0.1, "friction": 0.1})
    with pytest.raises(ValueError, match="need a claimed suite sampler"):
        resolve_claim(samplers.get("sghmc"), NO_CLAIM, rename={"lr": "step_size"})
    with pytest.raises(ValueError, match="is the suite's 'sgld' itself"):
        resolve_claim(sgld, rename={"lr": "step_size"})
    with pytest.raises(ValueError, match="claims must name a suite sampler"):
        resolve_claim(sgld, "nope")


def test_no_truth_at_a_temperature_is_inconclusive():
    """A non-Gaussian target has truth at T = 1 only: without a claim the verdict cannot be PASSED or FAILED."""
    got, reason = decide(_evidence(agreement=(), against="no truth at temperature 0.5 on this non-Gaussian target"),
                         Resolution(0.1))
    assert got is Outcome.INCONCLUSIVE and "cannot be checked here: no truth at temperature 0.5" in reason
    got, reason = decide(_reference(truth=None, held=(False, "why")), Resolution(0.1))
    assert got is Outcome.INCONCLUSIVE and "no truth at its temperature" in reason


class _Fit:
    def __init__(self, chains_factor):
        self.chains_factor = chains_factor


REMEDIES = [  # (evidence, remedy kind or None, words)
    (_evidence(diverged=3), None, ""),
    (_reference(diverged=5, reference_diverged=256), "step", "half the step"),
    (_evidence(travel=SLOW), "warmup", "a warm-up of 9000 steps and 18000 scored steps"),  # 1.5 x 2 x 3000; the
    (_reference(travel=FORGOT, reference_travel=SLOW), "warmup", "9000"),  # time, at the window's resolution, x 6
    (_evidence(travel=start.Travel(4000, 8000, 0.5, 3000.0)), "warmup", "a warm-up of 9000 steps"),
    (_evidence(travel=STILL), None, ""),
    (_evidence(agreement=BAD, ladder=LadderFinding("undecided", "", fit=_Fit(3.0), rungs=4)), "ladder_chains",
     "3 times the chains on every rung of its step ladder"),
    (_evidence(agreement=BAD, ladder=LadderFinding("undecided", "", fit=_Fit(float("nan")), rungs=4)), "ladder_rung",
     "a finer rung (h/16) on its step ladder"),
    (_reference(held=(False, "why"), truth=BAD, reference_ladder=LadderFinding("undecided", "", fit=_Fit(50.0),
                                                                                rungs=5)),
     "reference_ladder_chains", "50 times the chains on every rung of the reference's step ladder"),
    (_reference(held=(False, "why"), truth=BAD, reference_ladder=LadderFinding("undecided", "",
                                                                                fit=_Fit(float("nan")), rungs=5)),
     "reference_ladder_rung", "h/32) on the reference's step ladder"),
    (_evidence(agreement=(_check("finite"), _check("mean"), _check("second_moment", detectable=0.3))), "chains",
     "576 chains"),  # 64 (0.3 / 0.1)^2
    (_reference(agreement=(_check("finite"), _check("mean"), _check("second_moment", detectable=0.3))), "chains",
     "576 chains"),  # a reference held to truth: the candidate is resolved against it, both grow
    (_reference(held=(False, "why"), truth=(_check("finite"), _check("mean"), _check("second_moment",
                                                                                     detectable=0.3))),
     "candidate_chains", "576 chains for"),  # a reference not held: the candidate is resolved against truth alone
    (_evidence(), None, ""),
]


@pytest.mark.parametrize("evidence, kind, words", REMEDIES, ids=[f"remedy{i}" for i in range(len(REMEDIES))])
def test_remedy_names_what_would_decide(evidence, kind, words):
    fix = remedy(evidence, Resolution(0.1))
    assert (fix.kind if fix else None) == kind, fix
    assert fix is None or words in fix.words, fix.words


def test_an_autocorrelation_time_at_the_window_resolution_does_not_show_forgetting():
    """A warm-up of 11 000 steps is three times an estimate of 3672 steps, but that estimate is at the resolution of
    4000 scored steps (a correct SGLD at h = 1e-5 on icg, whose time is about 4e5 steps, measured so): validate's
    strict rule does not take it for forgetting and asks for a longer window; the gate's rule is unchanged."""
    travel = start.Travel(11021, 4000, 0.26, 3672.0)
    assert travel.forgot and travel.lower_bound
    strict = start.Travel(11021, 4000, 0.26, 3672.0, strict=True)
    assert not strict.forgot and "a longer scored window (--steps) would decide" in strict.describe()
    fix = remedy(_evidence(travel=strict), Resolution(0.1))
    assert fix.kind == "warmup" and fix.steps == 22032 and fix.amount == 22042


@pytest.mark.parametrize(("first", "last", "forgot", "expected"), [
    ((4000, 0.57), (9832, 1.04), False, False),  # a correct SGLD still relaxing on the item response model (measured)
    ((2000, 14.5), (5385, 43.3), False, True),  # blackjax's SGHMC with L = 1, a random walk (measured)
    ((4000, 0.05), (8000, 0.09), True, True),  # grew after the chains had forgotten their start
    ((4000, 0.05), (8000, 0.0502), True, False),  # no significant growth
])
def test_a_variance_grows_without_a_stationary_law_only_when_no_relaxing_chain_would(first, last, forgot, expected):
    """The rule of ``Session._unstationary``: a significant growth (standard errors 0.005 here) is FAILED after the
    chains forgot their start, or at least half as fast as a random walk's; a slower growth of chains that did not
    forget is a relaxation."""
    import types

    from sgbench.bench.validate.session import Session

    se = np.full(1, 0.005)
    runs = types.SimpleNamespace(  # 4000 scored steps at the first warm-up; the later one with a longer window
        warmups=[(first[0], (np.full(1, first[1]), se), forgot, first[0] + 2000),
                 (last[0], (np.full(1, last[1]), se), False, last[0] + 2000)],
        plan=types.SimpleNamespace(cell=types.SimpleNamespace(heavy_tailed=False)))
    found = Session._unstationary(None, runs, alpha=1e-3)
    assert (found is not None) == expected, found
