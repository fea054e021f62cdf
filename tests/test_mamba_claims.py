"""The MAMBA paper's claims about its Tables 1-3 (``bench/reproduce/mamba_claims.py``) on made-up runs: held,
contradicted and within noise at the samplers the paper states them for, ties and unrun samplers never held, and the
error rate of the "most settings" test (Welch's comparison itself: ``tests/test_claims.py``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgbench.bench.reproduce import mamba_claims
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE, Comparison, RunsComparison
from sgbench.bench.reproduce.mamba_claims import most
from sgbench.bench.reproduce.mamba_tables import SAMPLERS, TABLE1, TABLE2, TABLE3

RUNS = 10
NOISE = np.linspace(-1.0, 1.0, RUNS)  # the same spread in every cell: standard error 0.21 over 10 runs


def _frame(means: dict, keys, noise=NOISE, batch: float = 0.01) -> pd.DataFrame:
    """Runs of every (method, sampler) in ``means`` (method -> sampler -> mean of each score, or inf: diverged), each
    score the mean plus ``noise``."""
    rows = []
    for method, by_sampler in means.items():
        for sampler, mean in by_sampler.items():
            for run, wiggle in enumerate(noise):
                rows.append({"sampler": sampler, "method": method, "run": run, "step_size": 1e-5,
                             "batch_fraction": batch if method == "mamba-ksd" else 0.1,
                             **{key: mean + wiggle for key in keys}})
    return pd.DataFrame(rows)


def _everywhere(value, **at) -> dict:
    """sampler -> ``value``, with the samplers named in ``at`` set otherwise."""
    return {s: at.get(s, value) for s in SAMPLERS}


def _most(outcomes):
    """``most`` over settings whose one comparison has z = 5 (won), -5 (lost), 0 (neither) or none (not run)."""
    groups = [(f"s{k}", [] if z is None else [(Comparison(f"s{k}", 0.0, 1 / math.sqrt(2), z, 1 / math.sqrt(2)), "B")])
              for k, z in enumerate(outcomes)]
    return most("A tends to be lowest", "sec. 4", groups, "A")


def test_most_needs_a_majority_of_settings_beyond_the_noise():
    assert _most([5, 5, 5, 5, 0, -5]).verdict == HELD  # won at 4 of 6
    claim = _most([5, 5, 5, 0, 0, -5])
    assert claim.verdict == WITHIN_NOISE and "at 3 of 6 (s0, s1, s2)" in claim.reason
    assert _most([5, 5, 5, -5, -5, -5]).verdict == CONTRADICTED  # lost at 3 of 6: no majority left
    claim = _most([5, 5, 5, None, None, -5])
    assert claim.verdict == WITHIN_NOISE and "not run at s3, s4" in claim.reason  # not run: neither
    assert claim.error_rate == 0.05 and "critical |z| = 2.24" in claim.reason  # 4 comparisons


def test_most_calls_a_true_claim_contradicted_at_most_at_its_rate():
    """True at exactly 4 of 6 settings (equal means there), false beyond doubt at 2: contradicted at most 5 %."""
    rng = np.random.default_rng(2)
    trials, contradicted = 3000, 0
    for _ in range(trials):
        groups = [(str(k), [(RunsComparison.of(str(k), *rng.standard_normal((2, RUNS)) + [[0.0], [0.0 if k < 4 else
                                                                                                -10.0]]), "B")])
                  for k in range(6)]
        contradicted += most("A lowest", "s", groups, "A").verdict == CONTRADICTED
    assert contradicted / trials <= 0.065


def _table2(ksd_grid=None, ksd_heuristic=None, xi_heuristic=None, samplers=SAMPLERS) -> tuple:
    """Table 2's claims on runs where MAMBA-KSD has KSD 10 and xi 20 at every sampler, grid search and the heuristic
    KSD 20 and xi 30 unless given."""
    ksd = {"mamba-ksd": _everywhere(10.0), "grid": ksd_grid or _everywhere(20.0),
           "heuristic": ksd_heuristic or _everywhere(20.0)}
    xi = {"mamba-ksd": _everywhere(20.0), "grid": _everywhere(30.0), "heuristic": xi_heuristic or _everywhere(30.0)}
    frame = _frame(ksd, ["ksd"]).assign(xi_x100=_frame(xi, ["xi_x100"])["xi_x100"])
    return mamba_claims.claims(TABLE2, frame[frame["sampler"].isin(samplers)])


def test_table2_lowest_ksd_is_held_only_beyond_the_noise_at_every_sampler():
    figure, grid, heuristic, lower_xi, conjecture = _table2(xi_heuristic=_everywhere(30.0, sgld=15.0))
    assert figure.verdict == conjecture.verdict == NOT_TESTABLE and "Figure 2" in figure.reason
    assert grid.verdict == heuristic.verdict == HELD and grid.error_rate == 0.05
    assert "critical |z| = 2.39" in grid.reason and "SGHMC-CV: MAMBA-KSD 10 ± 0.21 vs grid search 20" in grid.ours
    assert lower_xi.verdict == HELD and "beyond the noise at SGLD" in lower_xi.reason
    assert conjecture.reason.endswith(": held")
    # a tie (grid search chose MAMBA-KSD's arms) is within noise, not held; a diverged heuristic is above
    _, grid, heuristic, lower_xi, _ = _table2(ksd_grid=_everywhere(20.0, sghmc_cv=10.0),
                                              ksd_heuristic=_everywhere(20.0, sghmc=math.inf))
    assert grid.verdict == WITHIN_NOISE and "inside the noise at SGHMC-CV" in grid.reason
    assert heuristic.verdict == HELD and "heuristic inf (z = inf)" in heuristic.ours
    assert lower_xi.verdict == CONTRADICTED  # the heuristic's xi above MAMBA-KSD's everywhere
    # reversed beyond the noise at one sampler: contradicted, whatever the others say
    _, grid, *_ = _table2(ksd_grid=_everywhere(20.0, sgnht=5.0))
    assert grid.verdict == CONTRADICTED and "reversed beyond the noise at SGNHT" in grid.reason
    assert all(claim.where.startswith("section 4.2") for claim in _table2())


def test_a_claim_at_every_sampler_is_not_held_on_some_of_them():
    _, grid, heuristic, lower_xi, _ = _table2(samplers=("sgld", "sghmc"), xi_heuristic=_everywhere(40.0))
    assert grid.verdict == WITHIN_NOISE and "held at the samplers run, but not run at SGLD-CV, SGHMC-CV" in grid.reason
    assert lower_xi.verdict == WITHIN_NOISE and lower_xi.reason.startswith("contradicted at the samplers run")
    _, grid, *_ = _table2(samplers=("sgld",), ksd_grid=_everywhere(5.0))
    assert grid.verdict == CONTRADICTED  # a reversal at a sampler run contradicts it


def test_table1_tests_both_mamba_metrics_against_both_baselines():
    means = {"mamba-ksd": _everywhere(10.0), "mamba-fssd": _everywhere(10.0, sgld_cv=30.0),
             "grid": _everywhere(20.0), "heuristic": _everywhere(20.0)}
    claims = mamba_claims.claims(TABLE1, _frame(means, ["ksd", "xi_x100"]))
    figure, batch, ksd_grid, ksd_heuristic, fssd_grid, fssd_heuristic, std = claims
    assert figure.verdict == batch.verdict == std.verdict == NOT_TESTABLE and "Figure 1" in figure.where
    assert ksd_grid.verdict == ksd_heuristic.verdict == HELD
    assert fssd_grid.verdict == fssd_heuristic.verdict == CONTRADICTED and "at SGLD-CV" in fssd_heuristic.reason
    assert fssd_grid.paper.startswith("KSD: SGLD 58 vs 106; SGLD-CV 23 vs 38")
    # the heuristic's runs alone: nothing to compare, nothing contradicted
    alone = mamba_claims.claims(TABLE1, _frame({"heuristic": {"sgld": 3.0}}, ["ksd", "xi_x100"]))
    assert {claim.verdict for claim in alone} == {NOT_TESTABLE}


def _table3(ece: dict, batch: float = 0.01, other_batch_at=None) -> tuple:
    """Table 3's claims on runs with the given ECE (method -> sampler -> mean), KSD and MCE as the ECE."""
    frame = _frame(ece, ["ece_pct", "mce_pct", "ksd"], batch=batch)
    if other_batch_at is not None:
        frame.loc[(frame["method"] == "mamba-ksd") & (frame["sampler"] == other_batch_at) & (frame["run"] == 3),
                  "batch_fraction"] = 0.1
    return mamba_claims.claims(TABLE3, frame)


def test_table3_tend_to_perform_best_reads_most_samplers_and_the_batch_claim_every_run():
    won_at_four = {"mamba-ksd": _everywhere(8.0), "grid": _everywhere(9.0, sgld=8.0, sgld_cv=8.0),
                   "heuristic": _everywhere(9.0)}
    figure, ksd, ece, mce, close, batch, faster, sgnht = _table3(won_at_four)
    assert ksd.verdict == ece.verdict == mce.verdict == HELD and "at 4 of 6" in ece.reason
    assert ece.paper.startswith("ECE % of MAMBA-KSD, grid search, heuristic: SGLD 1 vs 14.6 vs 0.8")
    assert batch.verdict == HELD and batch.error_rate == 0.0 and batch.ours == "60 of 60 MAMBA-KSD runs chose 1 %"
    assert {figure.verdict, close.verdict, faster.verdict, sgnht.verdict} == {NOT_TESTABLE}
    assert sgnht.reason.endswith("0 of 10 MAMBA-KSD, 0 of 10 grid search, 0 of 10 heuristic")
    won_at_three = {**won_at_four, "grid": _everywhere(9.0, sgld=8.0, sgld_cv=8.0, sgnht=8.0)}
    _, _, ece, *_ = _table3(won_at_three)
    assert ece.verdict == WITHIN_NOISE
    lost_at_three = {**won_at_four, "heuristic": _everywhere(9.0, sgld=7.0, sgld_cv=7.0, sgnht=7.0)}
    _, _, ece, *_ = _table3(lost_at_three)
    assert ece.verdict == CONTRADICTED and "at 3 of 6: SGLD, SGLD-CV, SGNHT" in ece.reason
    *_, batch, _, _ = _table3(won_at_four, other_batch_at="sghmc")
    assert batch.verdict == CONTRADICTED and batch.ours.endswith("the others: SGHMC run 3 10 %")
