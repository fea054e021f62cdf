"""The smaller parts of ``sgbench validate`` (issue 42), deterministic and fast: the validation targets and their
levels (``sgbench.bench.validate.targets``), the NUTS-referenced truth and starts
(``sgbench.bench.gate.gold_standard``), the reseeding record (``sgbench.bench.validate.reseed``) and the
Clopper-Pearson bound (``sgbench.reference.checks.rates``, checked against closed forms: with no event in n runs the
bound is 1 - 0.05^(1/n))."""

from __future__ import annotations

import json
import types

import jax
import numpy as np
import pytest

from sgbench import targets
from sgbench.bench.gate import gold_standard
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.validate import targets as vt
from sgbench.bench.validate.reseed import finished, reseed, settings_key, summary
from sgbench.reference.checks import rate_upper_bound


def test_targets_and_levels():
    assert vt.keys("default") == ["icg", "linreg", "gmm", "logreg"]
    suite = [t.key for t in vt.TARGETS if t.level != vt.EXTERNAL]
    assert [t.key for t in vt.select("default", thorough=True)] == vt.keys("thorough") == suite
    assert [t.key for t in vt.select("all")] == vt.keys()
    assert vt.keys("external") == ["mesquite", "gauss_mix", "schools", "brownian", "irt"]
    assert vt.every_key() == suite + vt.keys("external")
    assert [t.key for t in vt.select("logreg, icg")] == ["icg", "logreg"]
    assert [t.key for t in vt.TARGETS if t.gaussian] == ["icg", "linreg", "icg_stiff"]
    for spec in ("", "icg,nope"):
        with pytest.raises(ValueError, match="targets must"):
            vt.select(spec)
    for t in vt.TARGETS:  # each builds, with a truth (analytic, the stored NUTS reference, or another's)
        if t.target in vt.GYM_TARGETS and not gym_installed():
            continue
        target = targets.get(t.target, **t.params)
        truth = gold_standard.truth_of(target)
        assert truth.dim == target.dim and np.all(np.isfinite(truth.mean)), t.key  # every coordinate stated


def gym_installed() -> bool:
    try:
        import inference_gym.using_jax  # noqa: F401
    except ImportError:
        return False
    return True


def test_external_targets_start_from_draws_or_the_truth_s_gaussian_and_say_when_gym_is_missing(monkeypatch):
    schools = targets.get("posteriordb", posterior="eight_schools-eight_schools_noncentered")
    starts = gold_standard.draws(schools, jax.random.key(0), 5)
    flat = schools.reference_positions.reshape(-1, schools.dim)
    assert all(np.any(np.all(flat == row, axis=1)) for row in starts)  # resampled reference draws
    if gym_installed():
        brownian = targets.get("inference_gym", model="brownian_motion")
        starts = gold_standard.draws(brownian, jax.random.key(0), 4000)
        sd = np.sqrt(np.diag(brownian.truth.covariance))
        np.testing.assert_allclose(starts.mean(0), brownian.truth.mean, atol=5 * sd.max() / np.sqrt(4000))
        np.testing.assert_allclose(starts.std(0), sd, rtol=0.1)
    monkeypatch.setitem(__import__("sys").modules, "inference_gym.using_jax", None)
    with pytest.raises(ValueError, match=r"targets brownian, irt: .*sgmcmc-bench\[gym\]"):
        vt.select("external")
    assert [t.key for t in vt.select("mesquite,schools")] == ["mesquite", "schools"]


def test_nuts_truth_and_starts():
    entry = vt.get("logreg")
    target = targets.get(entry.target, **entry.params)
    truth = gold_standard.truth_of(target)
    assert target.truth is None and gold_standard.is_estimated(truth) and truth.dim == 31
    allowance = gold_standard.allowance(truth)
    assert np.all(allowance["mean_error"] == 0) and np.all(allowance["second_moment_error_se"] > 0)
    np.testing.assert_allclose(allowance["second_moment_error_se"],
                               np.diag(truth.covariance_se) / np.diag(truth.covariance))
    draws = gold_standard.draws(target, jax.random.key(0), 50)
    from sgbench.reference import store

    stored = np.asarray(store.load_draws(target), dtype=np.float64).reshape(-1, 31)
    assert draws.shape == (50, 31) and all(np.any(np.all(stored == row, axis=1)) for row in draws[:5])
    icg = targets.get("icg", dim=4)
    assert not gold_standard.is_estimated(gold_standard.truth_of(icg))


def _verdict(outcome):
    return types.SimpleNamespace(outcome=outcome, outcomes={"icg": outcome}, reasons={"icg": "why"})


def test_reseed_record_resumes_and_counts(tmp_path):
    record, settings, calls = tmp_path / "r.jsonl", {"sampler": "x", "params": {"step_size": 0.1}}, []

    def run(seed):
        calls.append(seed)
        return _verdict(Outcome.FAILED if seed == 3 else Outcome.PASSED)

    runs = reseed(run, settings, range(0, 5), record, progress=lambda _: None)
    assert calls == [0, 1, 2, 3, 4] and list(runs["outcome"]) == ["PASSED"] * 3 + ["FAILED", "PASSED"]
    runs = reseed(run, settings, range(0, 7), record, progress=lambda _: None)  # resumes: seeds 5 and 6 only
    assert calls[5:] == [5, 6] and len(runs) == 7
    assert set(finished(record, settings_key(settings))) == set(range(7))
    assert finished(record, settings_key({**settings, "params": {}})) == {}  # other settings: not these runs
    table = summary(runs).set_index("outcome")
    assert table.loc["FAILED", "runs"] == 1 and table.loc["PASSED", "runs"] == 6
    assert table.loc["FAILED", "upper_95"] == pytest.approx(rate_upper_bound(1, 7))
    assert all(json.loads(line)["settings"] == settings_key(settings) for line in record.read_text().splitlines())


def test_reseed_records_resume_only_under_the_same_procedure(tmp_path):
    """A reseed record resumes under the same settings: the same command again computes nothing and appends nothing.
    The records of reports/validate_reseed made with the rules of issue 42 (no ``--budget``, step halving) are not
    taken for runs of today's procedure, whose settings include the budget: they stay a measurement of the old one."""
    from pathlib import Path

    from sgbench.bench.cli import main

    command = ["validate", "sgbench.samplers.sgld:SAMPLER", "--param", "step_size=2e-3", "--targets", "icg",
               "--chains", "64", "--reseed", "1", "--seed", "1", "--budget", "5s", "--out", str(tmp_path)]
    record = tmp_path / "runs.jsonl"
    assert main([*command, "--record", str(record)]) == 0
    first = record.read_text()
    assert len(first.splitlines()) == 1
    assert main([*command, "--record", str(record)]) == 0 and record.read_text() == first
    stored = Path(__file__).resolve().parents[1] / "reports" / "validate_reseed" / "small_step.jsonl"
    old = tmp_path / "small_step.jsonl"
    old.write_text(stored.read_text())
    assert main([*command, "--record", str(old)]) == 0
    assert len(old.read_text().splitlines()) == len(stored.read_text().splitlines()) + 1  # computed, not resumed


def test_clopper_pearson_upper_bound():
    for n in (1, 20, 577):
        assert rate_upper_bound(0, n) == pytest.approx(1 - 0.05 ** (1 / n))
    assert rate_upper_bound(5, 5) == 1.0
    assert rate_upper_bound(1, 100) == pytest.approx(0.0466, abs=1e-4)  # Beta(2, 99) 0.95 quantile
    for events, runs in ((-1, 5), (6, 5), (0, 0)):
        with pytest.raises(ValueError):
            rate_upper_bound(events, runs)
