r"""The gate's three outcomes per cell (``sgbench.bench.gate.runner``): PASSED, FAILED, INCONCLUSIVE.

- The rules, on made-up rows and travels: a failed check or chains that do not move are FAILED; a cell that
  must forget its start (``Cell.must_forget``) and did not, with every check passed, is INCONCLUSIVE; a
  cell checked against a law from the same start and warm-up (exact-law, reference) need not forget it.
- End to end (deterministic given the seed, no rate): a sampler that never moves, which the gate's old start
  at exact draws passed, is FAILED on SGLD's ``icg4`` cell by its ``moves`` row; the suite's SGLD is PASSED.
- The design margin: every stored design entry of a cell that must forget its start was measured with an
  autocorrelation time at most a quarter of its warm-up, twice the margin the rule asks for, so that a
  correct run is INCONCLUSIVE only when its estimated time is twice the design run's.
"""

from __future__ import annotations

import math

import pytest

from sgbench.bench.gate import design_bias
from sgbench.bench.gate.cells import suite
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.gate.runner import alpha_per_check, cell_outcome, check_group, run_cell
from sgbench.bench.gate.start import FORGET_TIMES, Travel
from tests.heldout.frozen import SAMPLER as FROZEN

QUICK = suite("quick")
SGLD_CELL = next(c for c in QUICK if c.sampler == "sgld" and c.target == "icg" and not c.label)
EXACT_LAW_CELL = next(c for c in QUICK if c.exact_law)
ALPHA = alpha_per_check(len(QUICK), False)

MOVED = Travel(warmup=4000, scored=4000, displacement=1.3, autocorrelation_steps=200.0)
SLOW = Travel(warmup=4000, scored=4000, displacement=1.3, autocorrelation_steps=2500.0)
STILL = Travel(warmup=4000, scored=4000, displacement=0.0, autocorrelation_steps=math.inf)
PASSING = [{"name": "mean", "passed": True}, {"name": "second_moment", "passed": True}]
FAILING = [{"name": "mean", "passed": True}, {"name": "second_moment", "passed": False}]


@pytest.mark.parametrize("cell, rows, travel, expected", [
    (SGLD_CELL, PASSING, MOVED, Outcome.PASSED),
    (SGLD_CELL, FAILING, MOVED, Outcome.FAILED),
    (SGLD_CELL, FAILING, SLOW, Outcome.FAILED),  # the design run had the same start and warm-up: a real difference
    (SGLD_CELL, PASSING, SLOW, Outcome.INCONCLUSIVE),
    (SGLD_CELL, PASSING + [{"name": "moves", "passed": False}], STILL, Outcome.FAILED),
    (EXACT_LAW_CELL, PASSING, SLOW, Outcome.PASSED),
])
def test_cell_outcome_rules(cell, rows, travel, expected):
    row = cell_outcome(cell, rows, travel)
    assert row["outcome"] == expected.name, row
    if expected is Outcome.INCONCLUSIVE:
        assert "at least 5000 warm-up steps (the sampler's GateSettings.num_burnin) would decide" in row["travel"], row


def test_a_sampler_that_never_moves_fails_its_gate_cell():
    design = design_bias.of_cell(SGLD_CELL, design_bias.load())
    rows, _, verdict = check_group(run_cell(SGLD_CELL, seed=3, sampler=FROZEN), 0, design, None, ALPHA)
    moves = next(r for r in rows if r["name"] == "moves")
    assert verdict["outcome"] == "FAILED" and not moves["passed"] and moves["statistic"] == 0.0, verdict
    assert "do not move" in verdict["travel"], verdict


def test_the_suites_sgld_passes_its_gate_cell_and_forgets_its_start():
    design = design_bias.of_cell(SGLD_CELL, design_bias.load())
    rows, _, verdict = check_group(run_cell(SGLD_CELL, seed=3), 0, design, None, ALPHA)
    assert verdict["outcome"] == "PASSED", (verdict, rows)
    assert "forgot their start" in verdict["travel"], verdict


def test_every_cell_that_must_forget_was_designed_with_twice_the_warmup_the_rule_asks():
    document = design_bias.load()
    for cell in suite("full"):
        if cell.must_forget:
            tau = design_bias.of_cell(cell, document)["autocorrelation_steps"]
            assert cell.num_burnin >= 2 * FORGET_TIMES * tau, (cell.name, cell.num_burnin, tau)


def test_every_minibatch_sampler_has_cells_on_two_external_posteriors_in_the_full_suite():
    from sgbench import samplers

    minibatch = {s for s in samplers.names() if samplers.benchmark_settings(s).gate.linreg is not None}
    external = [c for c in suite("full") if c.target == "posteriordb"]
    assert {c.sampler for c in external} == minibatch
    assert {(c.sampler, c.label) for c in external} == {(s, k) for s in minibatch for k in ("mesquite", "gauss_mix")}
    assert not [c for c in QUICK if c.target == "posteriordb"]  # the CI gate keeps its time
