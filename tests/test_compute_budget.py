"""``sgbench.bench.validate.budget`` (what validate's remedies may spend) and the sequential looks of
``sgbench.bench.validate.session``: the budget's forms and their refusals, the share each target may spend,
the budget named for a remedy that does not fit, the rate of each look (their sum stays below the check's), more
chains merged into a run, and what more chains cost with and without the reference's."""

from __future__ import annotations

import types

import numpy as np
import pytest

from sgbench.bench.gate import cells as gate_cells
from sgbench.bench.gate.replicates import Replicates
from sgbench.bench.validate.budget import Account, Budget, Rates
from sgbench.bench.validate.session import REFERENCE_GROUPS, Session, _Runs, look_alpha, merged
from sgbench.bench.validate.verdict import Remedy


@pytest.mark.parametrize("spec, seconds, evals", [("20min", 1200.0, None), ("90s", 90.0, None), ("1.5h", 5400.0, None),
                                                  ("2e9", None, 2e9), ("  300 ", None, 300.0)])
def test_a_budget_is_a_time_or_gradient_evaluations(spec, seconds, evals):
    budget = Budget.parse(spec)
    assert (budget.seconds, budget.grad_evals) == (seconds, evals)
    assert Budget.parse(budget) is budget
    assert (budget.times(3).seconds, budget.times(3).grad_evals) == ((None, 3 * evals) if seconds is None
                                                                     else (3 * seconds, None))


@pytest.mark.parametrize("spec", ["", "3x", "min", "-1min", "0", "0s", "1e400"])
def test_a_bad_budget_is_refused_naming_the_flag(spec):
    with pytest.raises(ValueError, match=r"budget \(--budget\)"):
        Budget.parse(spec)


def test_the_targets_share_the_budget_in_turn():
    account = Account(Budget.parse("10min"), targets=3)
    account.start_target()
    assert account.share == pytest.approx(200.0)
    account.charge(20.0, 1e6)  # the first target spends little
    assert account.affords(150.0, 0.0) and not account.affords(190.0, 0.0)
    account.start_target()  # the second may spend half of what is left
    assert account.share == pytest.approx(290.0)
    assert account.would_decide(400.0, 0.0) == "14min"  # 400 s of a share of 290 s: 400 x 600 / 290 = 827 s
    evals = Account(Budget.parse("1e6"), targets=1)
    evals.start_target()
    evals.charge(1000.0, 4e5)
    assert evals.affords(1e9, 6e5) and not evals.affords(0.0, 6.1e5)
    assert Rates(2e-6, 1.0).cost(1e6) == (2.0, 1e6)


def test_the_looks_spend_less_than_the_checks_rate():
    rates = [look_alpha(1e-4, look) for look in range(1, 40)]
    assert rates[0] == 5e-5 and sum(rates) < 1e-4
    assert all(later < earlier for earlier, later in zip(rates, rates[1:]))


def _rep(chains: int, value: float, groups: int = 1) -> Replicates:
    cell = gate_cells.Cell("sgld", {"step_size": 0.1}, num_chains=chains // groups, num_steps=8, num_burnin=8)
    shape = (groups, chains // groups, 2)
    return Replicates(cell=cell, mean_error=np.full(shape, value), second_moment_error=np.full(shape, 2 * value),
                      diverged=np.zeros(shape[:2], bool), grad_evals_per_chain=16.0 if value else 8.0, seconds=1.0,
                      results=(), start=np.zeros(shape), samples=np.zeros((*shape[:2], 3, 2)))


def test_more_chains_are_merged_into_one_run():
    both = merged(_rep(4, 0.0), _rep(8, 1.0, groups=2))
    assert both.groups == 1 and both.diverged.shape == (1, 12) and both.cell.num_chains == 12
    assert both.mean_error[0, :4].sum() == 0 and np.all(both.mean_error[0, 4:] == 1)
    assert both.samples.shape == (1, 12, 3, 2) and both.seconds == 2.0
    assert both.grad_evals_per_chain == pytest.approx((4 * 8 + 8 * 16) / 12)


@pytest.mark.parametrize("kind, reference_share", [("chains", REFERENCE_GROUPS), ("candidate_chains", 0)])
def test_more_chains_grow_the_reference_only_where_the_candidate_is_resolved_against_it(kind, reference_share):
    """128 chains asked for, 64 run: one new group of 64 (1.2 x 128 = 154, so two groups: 128 new chains) for the
    candidate, and 4 times as many for the reference only where the candidate is resolved against the reference;
    resolved against truth on its own, the reference keeps its chains."""
    candidate, reference = _rep(64, 0.0), _rep(256, 0.0, groups=4)  # 1 s over 64 x 16 and 256 x 16 chain-steps
    plan = types.SimpleNamespace(cell=candidate.cell, reference=reference.cell)
    session = Session.__new__(Session)
    session.claim = types.SimpleNamespace(steps_per_call=lambda params: 1)
    seconds, _ = session._cost(_Runs(plan, candidate=candidate, reference=reference), Remedy(kind, 128, ""))
    new_chain_steps = 128 * 16
    assert seconds == pytest.approx(new_chain_steps / (64 * 16) + reference_share * new_chain_steps / (256 * 16))
