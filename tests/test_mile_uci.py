"""MILE's UCI benchmark (``bench/reproduce/mile_uci.py``): the coverage at each nominal level and the calibration
error from one computation, against Gaussian cases of known coverage; the gradient evaluations per chain (the
samplers' trace against the forecast, the deep ensemble's optimiser steps); the paper's claims about MILE against
the DE, about MILE's coverage (paired t-tests over the splits) and about its count of gradient evaluations
(observed counts), the others not testable; the outcome rendered from the record alone; at a tiny scale, the true
predictive of the generated Friedman #1 data bounds the models, a user's file runs through the command, bad input
is refused."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from sgbench import targets
from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, mile_uci
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE
from sgbench.targets.datasets import bundled

LEVELS = (0.5, 0.75, 0.9, 0.95)  # the paper's nominal levels (Table 10, Figure 7)
STEPS = 7000  # the quick scale's steps per chain


def test_the_levels_are_the_papers():
    assert mile_uci.levels() == LEVELS
    assert [mile_uci.coverage_column(level) for level in LEVELS] == [
        "coverage 0.5", "coverage 0.75", "coverage 0.9", "coverage 0.95"]


def test_coverage_of_a_gaussian_predictive_of_known_coverage():
    # labels from N(0, 1) and a predictive N(0, s^2): the central interval at level l is +-s z, z the standard
    # normal's (1 + l) / 2 quantile, and covers a label with probability 2 Phi(s z) - 1; s = 1 is calibrated,
    # s = 0.5 overconfident (below nominal), s = 2 underconfident (above it)
    rng = np.random.default_rng(0)
    labels = rng.standard_normal(40_000)
    for s in (0.5, 1.0, 2.0):
        metrics = mile_uci.gaussian_metrics(labels, np.zeros((1, labels.size)), np.full((1, labels.size), s))
        coverage = np.array([metrics[f"coverage {level:g}"] for level in LEVELS])
        known = 2 * scipy.stats.norm.cdf(s * scipy.stats.norm.ppf((1 + np.array(LEVELS)) / 2)) - 1
        np.testing.assert_allclose(coverage, known, atol=4 * math.sqrt(0.25 / labels.size))
        # the calibration error is Definition 2 of these same coverages
        assert metrics["calibration"] == pytest.approx(math.sqrt(np.mean((coverage - LEVELS) ** 2)), rel=1e-12)
    # four labels by hand: N(0, 1)'s central intervals at the four levels have half-widths 0.674, 1.150, 1.645,
    # 1.960, so 0.1, -1.0, 1.5, 3.0 are covered 1, 2, 3, 3 times of 4
    by_hand = mile_uci.gaussian_metrics(np.array([0.1, -1.0, 1.5, 3.0]), np.zeros((1, 4)), np.ones((1, 4)))
    assert [by_hand[f"coverage {level:g}"] for level in LEVELS] == [0.25, 0.5, 0.75, 0.75]


def test_the_calibration_error_of_given_coverages_and_its_bad_input():
    from sgbench.reference.metrics import coverage_calibration_error, credible_interval_calibration_error

    rng = np.random.default_rng(3)
    y, means, scales = rng.normal(size=50), rng.normal(size=(3, 50)), rng.uniform(0.5, 2, size=(3, 50))
    coverage = mile_uci.gaussian_metrics(y, means, scales)
    assert coverage["calibration"] == credible_interval_calibration_error(y, means, scales)
    assert coverage_calibration_error([0.5, 0.9], levels=[0.5, 0.9]) == 0.0
    assert coverage_calibration_error([0.25, 0.75], levels=[0.5, 0.9], weights=[3, 1]) == pytest.approx(
        math.sqrt(0.75 * 0.25**2 + 0.25 * 0.15**2), rel=1e-12)
    with pytest.raises(ValueError, match=r"coverage must be 4 numbers in \[0, 1\]"):
        coverage_calibration_error([0.5, 0.7])
    with pytest.raises(ValueError, match=r"coverage must be 4 numbers in \[0, 1\]"):
        coverage_calibration_error([0.5, 0.7, 0.9, 1.2])


def test_the_true_predictive_of_friedman1_is_the_best_one():
    # on 200 test points the true N(f(x), 1) has LPPD about 0.2 and RMSE about 0.2 (standardised labels: the
    # noise sd 1 over a label scale of 5); the DE start after no training (the network's random initialisation)
    # is far below
    target = targets.get("bnn", noise="none", dataset="friedman1")
    truth = mile_uci.true_predictive_metrics(target)
    assert 0.1 < truth["lppd"] < 0.3 and 0.17 < truth["rmse"] < 0.23 and truth["calibration"] < 0.1
    # its coverage is nominal within the binomial noise of 200 points
    for level in LEVELS:
        assert abs(truth[f"coverage {level:g}"] - level) < 4 * math.sqrt(level * (1 - level) / 200)
    untrained = mile_uci.predictive_metrics(target, target.initial_position()[None])
    assert untrained["lppd"] < truth["lppd"] - 1 and untrained["rmse"] > truth["rmse"]
    nothing = mile_uci.predictive_metrics(target, np.zeros((0, target.dim)))
    assert set(nothing) == set(truth) and all(np.isnan(v) for v in nothing.values())


def test_gradient_evaluations_per_chain_and_member():
    """MILE's trace counts 2 per step and 1 at the start, the forecast; the deep ensemble's optimiser one per
    epoch at full batch, floor(N / b) per epoch with batches of b (about 12 s on 2 cores)."""
    from sgbench.bench.running import run as running
    from sgbench.samplers._deep_ensemble import deep_ensemble

    assert mile_uci.forecast(STEPS) == 2 * STEPS + 1 and mile_uci.forecast(60_000) == 120_001
    target = targets.get("bnn", noise="none", dataset="diabetes")
    full = deep_ensemble(target, 2, 0, max_epochs=5)
    np.testing.assert_array_equal(full.gradient_evaluations, [5, 5])
    batched = deep_ensemble(target, 2, 0, max_epochs=3, batch_size=32)
    np.testing.assert_array_equal(batched.gradient_evaluations, [3 * (target.num_data // 32)] * 2)
    result = running.run("mile", target, num_chains=2, num_steps=10, num_burnin=30, seed=0,
                         initial_position=full.positions, params=dict(tuning_steps=(10, 10, 10), sampling_steps=10,
                                                                      thin=1))
    np.testing.assert_array_equal(result.trace.grad_evals, [mile_uci.forecast(40)] * 2)
    assert mile_uci.gradient_counts(result.trace.grad_evals) == {"grad evals": 81.0, "grad evals min": 81.0,
                                                                  "grad evals max": 81.0}
    assert mile_uci.gradient_counts([3, 5]) == {"grad evals": 4.0, "grad evals min": 3.0, "grad evals max": 5.0}
    assert all(math.isnan(v) for v in mile_uci.gradient_counts([]).values())


@pytest.mark.integration
def test_a_users_file_runs_through_the_command(tmp_path, capsys, monkeypatch):
    """A 150-row file through the command at a tiny budget, 2 splits (about a minute on 2 cores)."""
    features, labels = bundled("friedman1")
    path = tmp_path / "uci.csv"
    pd.DataFrame(features[:150], columns=[f"x{i}" for i in range(10)]).assign(y=labels[:150]).to_csv(path,
                                                                                                    index=False)
    monkeypatch.setitem(mile_uci.SCALES, "quick", {"phases": (100, 20, 20), "sampling": 40, "splits": 1})
    status = main(["reproduce", "mile-uci", "--dataset-file", str(path), "--splits", "2", "--out", str(tmp_path),
                   "--db", str(tmp_path / "r.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert "“MILE consistently matches or outperforms the other methods in ... UQ”" in out and status == (
        1 if "CONTRADICTED" in out else 0), out
    # every MILE chain made 2 x 180 + 1 gradient evaluations, the forecast
    assert "HELD (error rate 0 %): “MILE on the other hand always uses 2 × 60000 = 12 × 10^4 calls”" in out
    assert "24 MILE chains in 2 runs of 12: gradient evaluations per chain 361; forecast before the runs: 361" in out
    page = (tmp_path / "mile_uci.html").read_text()
    assert "Tables 3 and 10 (its data sets, for reference)" in page and page.count("data:image/png;base64") == 2
    assert "Empirical coverage at each nominal level" in page and "Gradient evaluations per chain" in page
    assert str(path) in page


@pytest.mark.integration
def test_splits_computed_in_worker_processes_equal_those_computed_here(tmp_path):
    """The same 2 splits of a 120-row file, here and with ``jobs=2`` (spawned processes): the same numbers, the
    record written by this process alone."""
    features, labels = bundled("friedman1")
    path = tmp_path / "uci.csv"
    pd.DataFrame(features[:120], columns=[f"x{i}" for i in range(10)]).assign(y=labels[:120]).to_csv(path,
                                                                                                    index=False)
    frames = [mile_uci.compute((60, 10, 10), 20, 2, 0, ("file",), str(path), record=tmp_path / f"{jobs}_runs.jsonl",
                               jobs=jobs).drop(columns=["seconds", "commit"]) for jobs in (1, 2)]
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert len((tmp_path / "2_runs.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("argv, message", [
    (["--splits", "0"], "--splits must be an integer >= 1"),
    (["--dataset-file", "/nonexistent/uci.csv"], "--dataset-file: data file '/nonexistent/uci.csv' does not exist"),
])
def test_bad_requests_exit_2(tmp_path, capsys, argv, message):
    assert main(["reproduce", "mile-uci", *argv, "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


NEUTRAL = {"lppd": 0.0, "rmse": 0.0, "calibration": 0.0}


def _frame(gains, noise=0.01, de_gap=-0.1, mile_gap=0.02, coverage_noise=0.005, counts=None):
    """Rows of 3 splits per data set of ``gains``: the DE at LPPD -1, RMSE 0.7, CalE 0.1; MILE better by
    ``gains[data set][metric]`` (in the metric's good direction) plus -``noise``, 0, +``noise`` at the 3 splits, so
    that the paired differences have mean ``gain``, sd ``noise`` and t = sqrt(3) ``gain`` / ``noise``. Coverage at
    each level: the DE's the level plus ``de_gap`` (negative: overconfident), MILE's the level plus ``mile_gap``
    (a dict by level, or one for all) plus -``coverage_noise``, 0, +``coverage_noise`` at the 3 splits. Gradient
    evaluations: the DE's members 100 to 500; each MILE run's chains ``counts`` (min, max), by default the forecast
    at ``STEPS``."""
    de = {"lppd": -1.0, "rmse": 0.7, "calibration": 0.1}
    counts = counts or (mile_uci.forecast(STEPS),) * 2
    gaps = mile_gap if isinstance(mile_gap, dict) else dict.fromkeys(LEVELS, mile_gap)
    rows = []
    for dataset, gain in gains.items():
        for split in range(3):
            rows.append({"data set": dataset, "split": split, "method": "de", **de,
                         **{f"coverage {level:g}": level + de_gap for level in LEVELS},
                         "grad evals": 300.0, "grad evals min": 100.0, "grad evals max": 500.0})
            mile = {m: v + mile_uci.SIGNS[m] * (gain[m] + noise * (split - 1)) for m, v in de.items()}
            rows.append({"data set": dataset, "split": split, "method": "mile", **mile,
                         **{f"coverage {level:g}": level + gaps[level] + coverage_noise * (split - 1)
                            for level in LEVELS},
                         "grad evals": float(np.mean(counts)), "grad evals min": float(counts[0]),
                         "grad evals max": float(counts[1])})
    return pd.DataFrame(rows)


def _claims(frame, steps=STEPS):
    """The claims by their words."""
    return {c.words: c for c in mile_uci.claims(frame, steps)}


def _by_words(claims):
    """The tested claims' verdicts by their words (the untested ones left out)."""
    return {c.words: c.verdict for c in claims if c.verdict != NOT_TESTABLE}


RMSE = "MILE consistently matches or outperforms the other methods in predictive performance ..."
LPPD = "MILE consistently matches or outperforms the other methods in ... UQ"
MEASURES = "... while providing better and more principled uncertainty measures"
FORECASTS = ("... MILE's fixed number of steps allows easy runtime forecasts once the cost of a single gradient "
             "evaluation is known")
BALANCING = "... while MILE's deterministic nature ensures perfect load balancing for concurrent sampling"
ALWAYS = "MILE on the other hand always uses 2 × 60000 = 12 × 10^4 calls"
OFTEN = "... and both methods often outperform the simple DE"
CALIBRATED = "... whereas the sampling-based methods are generally better calibrated"
UNDERCONFIDENT = "A visual inspection reveals that both ... MILE tend to be slightly underconfident"
COUNTS = {FORECASTS: HELD, BALANCING: HELD, ALWAYS: HELD}


def test_claims_against_the_de_are_tested_at_every_data_set():
    better = {"lppd": 0.5, "rmse": 0.2, "calibration": 0.05}
    frame = _frame({"diabetes": better, "friedman1": better})
    claims = _claims(frame)
    assert _by_words(claims.values()) == {RMSE: HELD, LPPD: HELD, MEASURES: HELD, OFTEN: HELD, CALIBRATED: HELD,
                                          UNDERCONFIDENT: HELD, **COUNTS}
    rmse = claims[RMSE]
    assert "diabetes RMSE: MILE's gain over the DE +0.2" in rmse.ours and "friedman1 RMSE" in rmse.ours
    # t = sqrt(3) 0.2 / 0.01 = 34.6 at 2 degrees of freedom: its tail, 4.2e-4, is the normal's beyond 3.3
    assert "(z = 3.3)" in rmse.ours and "critical |z| = 1.96" in rmse.reason  # 2 data sets
    assert "critical |z| = 2.24" in claims[MEASURES].reason  # LPPD and CalE at 2 data sets
    assert rmse.paper == "RMSE: MILE better than the DE on 6 of the 6 data sets (their means)"
    assert claims[OFTEN].paper == "CalE: MILE better than the DE on 3 of the 6 data sets (their means)"
    # MILE worse than the DE beyond the noise on diabetes (t = -35): "consistently" is contradicted there; a gain of
    # 0.01 at a noise of 0.01 (t = 1.7) is inside it
    worse = {"lppd": -0.5, "rmse": -0.2, "calibration": -0.05}
    small = {"lppd": 0.01, "rmse": 0.01, "calibration": 0.01}
    claims = _claims(_frame({"diabetes": worse, "friedman1": small}))
    verdicts = _by_words(claims.values())
    assert {w: verdicts[w] for w in (RMSE, LPPD, MEASURES, OFTEN)} == {
        RMSE: CONTRADICTED, LPPD: CONTRADICTED, MEASURES: CONTRADICTED, OFTEN: WITHIN_NOISE}
    assert "reversed beyond the noise at diabetes RMSE" in claims[RMSE].reason
    assert _claims(_frame({"diabetes": worse, "friedman1": worse}))[OFTEN].verdict == CONTRADICTED  # every data set
    verdicts = _by_words(_claims(_frame({"diabetes": better, "friedman1": small})).values())
    assert {w: verdicts[w] for w in (RMSE, LPPD, MEASURES, OFTEN)} == {
        RMSE: WITHIN_NOISE, LPPD: WITHIN_NOISE, MEASURES: WITHIN_NOISE, OFTEN: HELD}


def test_coverage_claims_are_tested_at_every_data_set_and_level():
    datasets = {"diabetes": NEUTRAL, "friedman1": NEUTRAL}
    # DE 0.1 below nominal at every level, MILE 0.02 above it, +-0.005 over the splits: MILE closer by 0.08
    # (t = sqrt(3) 0.08 / 0.005 = 28: its tail at 2 degrees of freedom, 6e-4, is below 5 % / 8 settings) and above
    # nominal by 0.02 (t = 6.9, tail 0.010, below 5 % / 2 data sets)
    claims = _claims(_frame(datasets))
    assert claims[CALIBRATED].verdict == HELD and "critical |z| = 2.50" in claims[CALIBRATED].reason
    assert "diabetes |coverage - 0.95|: MILE's gain over the DE +0.08" in claims[CALIBRATED].ours
    assert claims[UNDERCONFIDENT].verdict == HELD
    assert "diabetes, mean over the 4 levels: MILE's coverage over nominal +0.02" in claims[UNDERCONFIDENT].ours
    # MILE 0.05 above nominal where the DE is at it: the DE closer beyond the noise everywhere (t = -17)
    claims = _claims(_frame(datasets, de_gap=0.0, mile_gap=0.05))
    assert claims[CALIBRATED].verdict == CONTRADICTED and claims[UNDERCONFIDENT].verdict == HELD
    # one level reversed beyond the noise contradicts "generally" (read as at every level)
    one_level = {0.5: 0.02, 0.75: 0.02, 0.9: 0.02, 0.95: -0.2}
    claims = _claims(_frame(datasets, de_gap=-0.1, mile_gap=one_level))
    assert claims[CALIBRATED].verdict == CONTRADICTED and "0.95" in claims[CALIBRATED].reason
    # MILE overconfident on average: contradicted; gaps of 0.001 at a spread of 0.005: within noise (|t| < 2)
    assert _claims(_frame(datasets, mile_gap=-0.05))[UNDERCONFIDENT].verdict == CONTRADICTED
    claims = _claims(_frame(datasets, de_gap=-0.001, mile_gap=0.001))
    assert claims[UNDERCONFIDENT].verdict == WITHIN_NOISE and claims[CALIBRATED].verdict == WITHIN_NOISE


def test_gradient_count_claims_are_observed_counts():
    frame = _frame({"diabetes": NEUTRAL})
    claims = _claims(frame)
    for words in COUNTS:
        assert claims[words].verdict == HELD and claims[words].error_rate == 0.0
    assert claims[ALWAYS].ours == ("36 MILE chains in 3 runs of 12: gradient evaluations per chain 14001; forecast "
                                   "before the runs: 14001 = 2 × 7000 steps + 1 at the start")
    assert claims[ALWAYS].paper == "2 × 60000 = 12 × 10^4 per chain at the paper's 60000 steps"
    assert "at the paper's 60000 steps the same count is 120001" in claims[ALWAYS].reason
    assert "the same count is" not in _claims(frame, 60_000)[ALWAYS].reason  # the paper's budget
    # the chains of each run equal but not the forecast (another number of steps): balanced, not forecast
    claims = _claims(frame, STEPS + 1)
    assert (claims[FORECASTS].verdict, claims[BALANCING].verdict, claims[ALWAYS].verdict) == (
        CONTRADICTED, HELD, CONTRADICTED)
    # one chain of each run off by 2: neither
    claims = _claims(_frame({"diabetes": NEUTRAL}, counts=(14001, 14003)))
    assert all(claims[words].verdict == CONTRADICTED for words in COUNTS)
    assert "diabetes split 0: 14001 to 14003 in one run" in claims[BALANCING].ours


def test_claims_about_bde_the_papers_data_sets_and_time_are_not_testable():
    frame = _frame({"diabetes": NEUTRAL})
    claims = mile_uci.claims(frame, STEPS)
    untested = [c for c in claims if c.verdict == NOT_TESTABLE]
    assert len(claims) == 24 and len(untested) == 15 and all(c.reason for c in untested)
    assert sum("BDE (NUTS chains started from the deep ensemble) is not run" in c.reason for c in untested) == 11
    time = next(c for c in untested if c.words.startswith("In most cases, the additional MCLMC sampling"))
    assert time.reason.endswith("other jobs, and this scale runs 7000 of the paper's 60000 steps")
    assert next(c for c in mile_uci.claims(frame, 60_000) if c.words == time.words).reason.endswith(
        "shared with other jobs")  # the paper's budget
    assert "Airfoil, Bikesharing, Concrete, Energy, Protein, Yacht" in untested[-1].reason
    # the claims are in the paper's order: section 4.1.1, Figure 2, Figure 3's caption, then the appendix
    where = [c.where.split(",")[0] for c in claims]
    assert where.index("Figure 2") < where.index("Figure 3") < where.index("appendix A.1.1")


def test_the_outcome_is_rendered_from_the_record_alone(tmp_path, monkeypatch):
    frame = _frame({"diabetes": {"lppd": 0.1, "rmse": 0.01, "calibration": 0.04}})

    def fake_split(dataset, split, phases, sampling, seed, path=None):
        rows = frame[(frame["data set"] == dataset) & (frame["split"] == split)]
        return [{**row, "nan chains": 0, "seconds": 1.0, "commit": "abc"} for row in rows.to_dict("records")]

    monkeypatch.setattr(mile_uci, "one_split", fake_split)
    monkeypatch.setattr(mile_uci, "DATASETS", ("diabetes",))
    monkeypatch.setattr(mile_uci, "figure", lambda table: b"")
    db = tmp_path / "results.sqlite"
    first = mile_uci.run("quick", {}, db, tmp_path, progress=False)
    monkeypatch.setattr(mile_uci, "one_split", None)  # nothing may be computed now
    with _record.recorded_only():
        again = mile_uci.run("quick", {}, db, tmp_path, progress=False)
        with pytest.raises(_record.NotRecorded):
            mile_uci.run("quick", {"splits": 4}, db, tmp_path, progress=False)
    assert again.table.equals(first.table) and again.claims == first.claims
    tables = {heading: body for heading, body in again.sections if isinstance(body, pd.DataFrame)}
    assert all(body.equals(dict(first.sections)[heading]) for heading, body in tables.items())
    coverage = tables["Empirical coverage at each nominal level (Figure 7: mean ± standard error over splits)"]
    assert coverage.loc[1].tolist() == ["diabetes", "MILE", "0.520 ± 0.003", "0.770 ± 0.003", "0.920 ± 0.003",
                                        "0.970 ± 0.003"]
    counts = tables["Gradient evaluations per chain (Figure 2; the paper's counts from Figure 3's caption)"]
    assert counts.iloc[1, :7].tolist() == ["diabetes", "MILE", "14001", "14001", "14001", "36", "14001"]
    assert counts.iloc[0, :7].tolist() == ["diabetes", "DE", "300", "100", "500", "36", ""]
    assert counts.iloc[-1, :3].tolist() == ["the paper's six", "BDE", "≈ 1024 × (1000 + 100) ≈ 11 × 10^5"]
    assert isinstance(dict(again.sections)["Empirical coverage against nominal level (Figure 7; mean and standard "
                                           "error over splits)"], bytes)
