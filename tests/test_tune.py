"""The MAMBA tuner end to end (``sgbench.bench.tune``): a gradient budget is spent exactly and reproducibly, every
arm's run is stored, the baselines run, and bad input is refused by name. The halving rule itself and the
bound of Theorem 1 are tested in ``tests/test_tune_halving.py``."""

from __future__ import annotations

import dataclasses
import math
import sqlite3

import numpy as np
import pytest

from sgbench import targets
from sgbench.bench.cli import main
from sgbench.bench.sweeps.store import ResultsStore
from sgbench.bench.tune import mamba as tuner
from sgbench.bench.tune.arm_runs import ArmRunner
from sgbench.bench.tune.budget import Budget
from sgbench.bench.tune.halving import num_rounds

LOGREG = {"dataset": "simulated", "num_data": 300}
AXES = {"step_size": (1e-4, 1e-3, 1e-2), "batch_fraction": (1.0, 0.1, 0.01)}  # 9 arms, 2 rounds
THREE = {"step_size": (1e-3, 1e-2, 1e-1), "batch_fraction": (0.1,)}  # one round, one program


def _problem(sampler="sgld", budget=None, **kwargs):
    return tuner.Problem.build(sampler, "logreg", axes=kwargs.pop("axes", AXES), budget=budget or Budget("grads", 1800),
                               target_params=LOGREG, **kwargs)


@pytest.fixture(scope="module")
def sgld_cv_tuning():
    return tuner.mamba(_problem("sgld_cv"))


def test_the_gradient_budget_is_spent_exactly_and_counted_by_the_runs(sgld_cv_tuning):
    tuning = sgld_cv_tuning
    rounds = num_rounds(9, 3)
    assert rounds == 2 and [len(r.arms) for r in tuning.halving.rounds] == [9, 3]
    for round_ in tuning.halving.rounds:
        assert round_.budget_per_arm == pytest.approx(1800 / (len(round_.arms) * rounds), rel=1e-12)
        for record in (r for r in tuning.records if r.round == round_.index):
            assert record.charged <= round_.budget_per_arm * (1 + 1e-12)
            fraction = tuning.arms[record.arm].batch_fraction
            # sgld_cv: two minibatch gradients of floor(fraction N) data per step, each costing n/N
            per_step = 2 * math.floor(fraction * 300) / 300
            assert round_.budget_per_arm - record.charged < per_step * (1 + 1e-9)  # no whole step left unspent
    assert tuning.spent <= 1800
    # the winner's chains made exactly the minibatch evaluations the budget charged for its steps
    last = [r for r in tuning.records if r.arm == tuning.winner][-1]
    assert tuning.winner_run.result.grad_evals == 2 * last.steps


def test_a_tuning_run_is_reproducible_bit_for_bit(sgld_cv_tuning):
    again = tuner.mamba(_problem("sgld_cv"))
    assert again.records == sgld_cv_tuning.records
    assert again.winner == sgld_cv_tuning.winner
    np.testing.assert_array_equal(again.winner_run.samples, sgld_cv_tuning.winner_run.samples)


def test_the_kept_arms_are_the_best_third_by_ksd(sgld_cv_tuning):
    first = sgld_cv_tuning.halving.rounds[0]
    by_ksd = sorted(first.arms, key=lambda a: -first.rewards[first.arms.index(a)])
    assert list(first.kept) == by_ksd[:3]
    assert sgld_cv_tuning.winner in first.kept


def test_every_arm_is_stored_and_baselines_run(tmp_path):
    with ResultsStore(tmp_path / "r.sqlite") as store:
        mamba = tuner.mamba(_problem(axes=THREE, store=store))
        tuner.mamba(_problem(axes=THREE, store=store))  # the same runs again: stored once
        grid = tuner.grid_search(_problem(axes=THREE, budget=Budget("grads", 900), store=store))
        heuristic = tuner.heuristic(_problem(arms=[tuner.heuristic_arm(targets.get("logreg", **LOGREG))], store=store))
    rows = sqlite3.connect(tmp_path / "r.sqlite").execute("SELECT suite, COUNT(*) FROM runs GROUP BY suite").fetchall()
    assert dict(rows) == {"tune-mamba": len(mamba.records), "tune-grid": 3, "tune-heuristic": 1}
    assert len(grid.records) == 3 and grid.spent <= 900
    assert dict(heuristic.winner_arm.values) == {"step_size": 1 / 300, "batch_fraction": 0.1}
    assert heuristic.records[0].steps == 1800 * 300 // 30  # 30 data per step, 1/10 of a full gradient


def test_fssd_reward_ranks_like_ksd_on_clear_cases():
    fssd = tuner.grid_search(_problem(axes={"step_size": (1e-3, 0.3), "batch_fraction": (0.1,)}, metric="fssd"))
    ksd = tuner.grid_search(_problem(axes={"step_size": (1e-3, 0.3), "batch_fraction": (0.1,)}))
    assert fssd.winner == ksd.winner == 0


STEADY_SECONDS_PER_STEP = 1e-3


def test_a_seconds_budget_plans_from_calibration_and_charges_what_the_steps_took(monkeypatch):
    """A seconds budget charges measured time, so this test measures on a steady clock of its own (every arm 1 ms
    per step): on the real clock the charge depends on the machine's load, and a bound on it would be a timed
    assertion. Three arms share 1 s in one round: 1/3 s buys each 333 steps, and each is charged 0.333 s."""
    measured = ArmRunner.run

    def run_on_a_steady_clock(self, steps_by_arm, progress=None):
        runs = measured(self, steps_by_arm, progress)
        return {arm: dataclasses.replace(run, result=dataclasses.replace(
                    run.result, trace=run.result.trace._replace(run_seconds=run.steps * STEADY_SECONDS_PER_STEP)))
                for arm, run in runs.items()}

    monkeypatch.setattr(ArmRunner, "run", run_on_a_steady_clock)
    tuning = tuner.mamba(_problem(axes=THREE, budget=Budget("seconds", 1.0)))
    assert [r.steps for r in tuning.records] == [333, 333, 333]
    assert [r.charged for r in tuning.records] == pytest.approx([0.333] * 3, rel=1e-12)
    assert tuning.spent == pytest.approx(0.999, rel=1e-12)


def test_a_diverging_arm_gets_the_worst_reward():
    tuning = tuner.grid_search(_problem(axes={"step_size": (1e-3, 1e3), "batch_fraction": (0.1,)}))
    assert tuning.records[1].discrepancy == math.inf and tuning.records[1].nonfinite_steps > 0
    assert tuning.winner == 0


@pytest.mark.parametrize("kwargs, message", [
    ({"budget": Budget("grads", 50)}, "--budget-grads 50 is too small"),
    ({"axes": {"step_size": (1e-3,), "leapfrog": (1.0,)}}, "sampler 'sgld' has no numeric hyperparameter 'leapfrog'"),
    ({"axes": {"step_size": (1e-3,), "batch_fraction": (1e-4,)}}, "batch_fraction must be >= 1/N"),
    ({"axes": {"step_size": (1e-3,), "batch_fraction": (2.0,)}}, "batch_fraction must be a number in (0, 1]"),
])
def test_bad_problems_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        problem = _problem(**kwargs)
        tuner.mamba(problem)


def test_minibatch_axes_need_a_minibatch_target():
    with pytest.raises(ValueError, match="needs a target with minibatch gradient noise"):
        tuner.Problem.build("sgld", "icg", axes={"step_size": (0.1,), "batch_fraction": (0.5,)},
                            budget=Budget("grads", 100))


def test_cli_tunes_prints_rounds_and_writes_its_page(tmp_path, capsys, monkeypatch):
    built = []
    build = tuner.Problem.build
    monkeypatch.setattr(tuner.Problem, "build", lambda *a, **k: built.append(k["max_draws"]) or build(*a, **k))
    status = main(["tune", "sghmc", "--target", "icg", "--target-param", "dim=3", "--target-param", "noise=isotropic",
                   "--arm", "step_size=1e-3:1e-1:5", "--budget-grads", "3000", "--db", str(tmp_path / "r.sqlite"),
                   "--out", str(tmp_path / "out"), "--no-progress", "--reward-draws", "60"])
    out = capsys.readouterr().out
    assert status == 0 and built == [60]
    assert "mamba round 0: 10 arms" in out and "mamba round 1: 3 arms" in out and "mamba: step_size=" in out
    page = (tmp_path / "out" / "tune.html").read_text()
    assert "halving tree" in page and "data:image/png;base64" in page


@pytest.mark.parametrize("argv, message", [
    (["--target", "icg", "--metric", "mmd"], "--metric must be one of"),
    (["--target", "icg", "--budget-grads", "-5"], "--budget-grads must be a finite number > 0"),
    (["--target", "icg", "--eta", "1"], "--eta must be an integer >= 2"),
    (["--target", "icg", "--reward-draws", "39"], "--reward-draws must be an integer >= 40, got 39"),
    (["--target", "icg", "--arm", "step_size"], "--arm takes NAME=V1,V2"),
    (["--target", "icg", "--arm", "step_size=1e-3", "--arm", "step_size=1e-2"], "--arm step_size is given twice"),
    (["--target", "icg", "--sampler-param", "step_size=0.1"], "--sampler-param step_size is tuned"),
    (["--target", "nosuch"], "nosuch"),
    (["--target", "icg", "--budget-grads", "10", "--budget-seconds", "3"], "not allowed with argument"),
])
def test_cli_bad_input_is_one_line(tmp_path, capsys, argv, message):
    status = main(["tune", "sgld", *argv, "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err


def test_large_targets_run_in_blocks_that_fit_and_arms_keep_their_draws(monkeypatch):
    """A grid whose 1024-step block would outgrow the caches (the pmf of MAMBA Table 2) runs in smaller blocks, of
    one size for every round, so an arm run alone draws what it drew beside the others."""
    from sgbench.bench.running import jax_driver

    runner = _problem(axes=AXES).runner
    per_step = jax_driver._numbers_per_step(runner.sampler, runner.target_by_arm[0], runner.params_by_arm[0])
    monkeypatch.setattr(jax_driver, "CACHED_BLOCK_NUMBERS", 9 * 40 * per_step)  # 40 steps of all 9 arms
    assert runner.block_size(0) == 40
    together = runner.run(dict.fromkeys(range(3), 300))
    alone = runner.run({0: 300})
    np.testing.assert_array_equal(alone[0].samples, together[0].samples)
    assert alone[0].result.config.block_size == 40


def test_an_arm_value_refused_on_its_own_exits_2_naming_it(tmp_path, capsys):
    """A value the sampler refuses in every combination (a negative step size) is bad input, not an arm to drop."""
    from sgbench.bench.cli import main

    status = main(["tune", "sgld", "--target", "icg", "--arm", "step_size=-1,0.01,0.02,0.03", "--budget-grads",
                   "1000", "--out", str(tmp_path / "out"), "--db", str(tmp_path / "t.sqlite")])
    err = capsys.readouterr().err
    assert status == 2 and "arm value step_size=-1.0 is refused by the sampler" in err, err
