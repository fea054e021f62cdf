r"""``sgbench validate``'s claims (issue 18): a candidate is never its own reference, and the claimed
reference is itself held to truth (``sgbench.bench.validate.validate``, ``sgbench.bench.validate.step_ladder``).

- ``test_template_sampler_is_not_its_own_reference``: the "Adding a sampler" template (docs/tutorial.md) with
  twice the noise variance, registered under its own name and validated without ``--claims``, fails against
  exact truth (64 chains x 4000 steps at h = 0.01 after the warm-up: r is about 1 where the ``second_moment``
  check detects about 0.3 with probability 0.9; a chance pass has probability far below 1e-6), its error does
  not vanish as the step shrinks (its step ladder: r about 1 at every rung), and the verdict says it was not
  compared with itself.
- ``test_suite_sampler_itself_passes``: the suite's ``sgld`` object (a self-claim) at the gate cell's
  hyperparameters on ``icg``, and at h = 0.02 on ``linreg`` (where its discretisation bias is r of about 1.5
  to 2), is held to its exact discrete-time law (Lyapunov on icg, the minibatch law on linreg), and passes at
  validate's defaults. Rate of a false failure: 1e-3 (validate's budget); the checks resolve r = 0.1 there.
- ``test_random_walk_reference_fails_for_having_no_stationary_law``: blackjax's ``sghmc`` with L = 1 claims the
  suite's ``sghmc`` with ``refresh_every = 1``, a gradient-free random walk. It agrees with that reference (it is
  the same walk), but neither forgets its overdispersed start (a random walk never does); the longer warm-up
  the remedy runs shows its variance growing with the warm-up (r grows linearly in the steps), so it has no
  stationary law: FAILED, never PASSED.
- ``test_a_faithful_psgld_is_failed_because_the_method_drops_gamma``: SGMCMCJax's pSGLD at dt = 0.04 (alpha =
  0.99) claims the suite's ``psgld`` (h = 0.02) on icg. It agrees with it; both are off truth (r about 0.12), and
  neither error vanishes as the step shrinks (it grows: the preconditioner follows the state ever more closely, and
  Li et al. 2016 drop the Gamma term that would correct for it). The candidate's own ladder decides FAILED, and the
  reference's ladder, run beside it, says the same of the suite's pSGLD; before, the reason read "both may carry the
  same discretisation bias" (INCONCLUSIVE, no budget deciding).
- ``test_validate_interrupted_exits_130_and_writes_what_was_decided``: Ctrl-C keeps the decided targets on the
  page and says so.
- ``test_validate_bad_input_exits_2``: a wrong module, hyperparameter or claim exits with status 2
  and one line naming it, before anything runs.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from sgbench import samplers
from sgbench.bench import cli
from sgbench.bench.adapters import load_sampler
from sgbench.bench.gate import cells as gate_cells
from sgbench.bench.gate.outcome import Outcome
from sgbench.bench.validate import page as validate_page
from sgbench.bench.validate.validate import validate

QUIET = dict(progress=lambda _: None)
TEMPLATE = '''
"""The template of docs/tutorial.md with a planted bug: twice the correct noise variance."""
from typing import Any, NamedTuple
import jax.numpy as jnp, numpy as np
from sgbench import samplers
from sgbench.base.arguments import positive_finite

@samplers.hyperparameters
class Params:
    step_size: float
    def __post_init__(self):
        object.__setattr__(self, "step_size", positive_finite("step_size", self.step_size))

class State(NamedTuple):
    position: Any
    step: Any

def init(position, params): return State(position, 0)
def draw_spec(dim, params): return {"noise": samplers.Variate("normal", (dim,))}

def reference_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    position = state.position + params.step_size * grad + np.sqrt(4 * params.step_size) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)

def optimized_step(state, grad_fn, draws, params):
    grad = grad_fn(state.position)
    position = state.position + params.step_size * grad + jnp.sqrt(4 * params.step_size) * draws["noise"]
    return State(position, state.step + 1), samplers.Info(num_grad_evals=1)

SAMPLER = samplers.register(samplers.Sampler.from_namespace("{name}", "noise variance doubled", globals()))
'''


@pytest.fixture
def template_module(tmp_path, monkeypatch):
    """The template module, importable from ``tmp_path``, registered in a copy of the registry
    that the test's end restores (so the suite's own list of samplers is untouched)."""
    name = "wrong_sampler_template"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(TEMPLATE).replace("{name}", name))
    registry = samplers._REGISTRY
    samplers.names()  # discover the suite's samplers before copying
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_template_sampler_is_not_its_own_reference(template_module, tmp_path):
    sampler = load_sampler(f"{template_module}:SAMPLER")
    assert samplers.get(template_module) is sampler
    verdict = validate(sampler, {"step_size": 0.01}, targets="icg", num_chains=64, out=tmp_path, **QUIET).verdict
    assert verdict.outcome is Outcome.FAILED and verdict.claims == template_module, verdict.summary()
    assert "not compared with itself" in verdict.basis["icg"] and "exact truth" in verdict.basis["icg"]
    rungs = {f"{template_module} at h/{2 ** k}" for k in (1, 2, 3)}
    assert set(verdict.metrics["sampler"]) <= {template_module} | rungs
    failed = verdict.checks[~verdict.checks["passed"]]
    assert {"second_moment", "step_ladder"} <= set(failed["name"]), verdict.summary()
    assert "disagrees with exact truth" in verdict.headline() and "does not vanish" in verdict.headline()
    print(verdict.summary())


def test_suite_sampler_itself_passes(tmp_path):
    cell = next(c for c in gate_cells.suite("quick") if c.sampler == "sgld" and c.target == "icg" and not c.label
                and c.backend == "jax")
    params = {**cell.params, "linreg:step_size": 0.02, "linreg:temperature": 1.0}
    verdict = validate(samplers.get("sgld"), params, targets="icg,linreg", out=tmp_path, **QUIET).verdict
    assert verdict.outcome is Outcome.PASSED and verdict.claims == "sgld", verdict.summary()
    for key in ("icg", "linreg"):
        assert "not compared with itself" in verdict.basis[key] and "exact discrete-time law" in verdict.basis[key]
    assert set(verdict.metrics["sampler"]) == {"sgld"}
    assert verdict.metrics.set_index("target").loc["linreg", "max |r|"] > 1  # a real discretisation bias
    print(verdict.summary())


def test_random_walk_reference_fails_for_having_no_stationary_law(tmp_path):
    adapter = load_sampler("sgbench.bench.adapters.blackjax:sghmc")
    validation = validate(adapter, {"step_size": 0.1, "num_integration_steps": 1}, targets="icg", num_steps=1000,
                          out=tmp_path, **QUIET)
    verdict = validation.verdict
    assert verdict.outcome is Outcome.FAILED and verdict.claims == "sghmc", verdict.summary()
    assert "no stationary law" in verdict.headline() and "keeps growing as the warm-up grows" in verdict.headline()
    assert not verdict.report.exists()  # validate computes; validate_page writes the page
    assert validate_page.write(validation) == verdict.report
    page = verdict.report.read_text()
    assert adapter.differences[:30] in page and "Relative variance error per target" in page  # the notes, the figure
    assert "Checks of the claimed reference against truth" in page
    print(verdict.summary())


# --- bad input -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (["no_such_module_x:SAMPLER"], "cannot import module 'no_such_module_x'"),
    (["sgbench.samplers.sgld:SAMPLER", "--param", "step_size=-1"], "step_size must be"),
    (["sgbench.samplers.sgld:SAMPLER", "--param", "nosuch=1"], "has no parameter 'nosuch'"),
    (["sgbench.samplers.sgld:SAMPLER", "--param", "step_size"], "--param must be KEY=VALUE"),
    (["sgbench.samplers.sgld:SAMPLER", "--param", "step_size=0.01", "--claims", "sgld_typo"],
     "claims must name a suite"),
    (["sgbench.bench.adapters.blackjax:sgld", "--param", "lr=0.01"], "has no parameter 'lr'"),
])
def test_validate_bad_input_exits_2(args, message, capsys, tmp_path):
    status = cli.main(["validate", *args, "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith("sgbench: error:") and message in err[0], err


def test_validate_interrupted_exits_130_and_writes_what_was_decided(monkeypatch, capsys, tmp_path):
    """Ctrl-C on the second target: exit 130, one line naming the target already decided and the page that holds it,
    no traceback; the page says the run was interrupted before the other target."""
    from sgbench.bench.validate.session import Session

    examine = Session.examine

    def interrupted_on_gmm(self, p, replan):
        if p.key == "gmm":
            raise KeyboardInterrupt
        return examine(self, p, replan)

    monkeypatch.setattr(Session, "examine", interrupted_on_gmm)
    status = cli.main(["validate", "sgbench.samplers.sgld:SAMPLER", "--param", "step_size=0.02", "--targets",
                       "icg,gmm", "--chains", "64", "--budget", "1s", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    page = tmp_path / "validate_sgld.html"
    assert status == 130 and err[-1] == (f"sgbench: validate interrupted: no verdict; icg decided (printed above), on "
                                         f"the page {page}"), err
    assert "interrupted before gmm was decided; so far sgld:" in page.read_text()


def test_more_chains_in_stages_decide_and_their_cost_is_reported(tmp_path):
    """The suite's SGLD on icg at 64 chains cannot resolve r = 0.1 (its checks detect about 0.2); within the budget
    validate adds the chains the measured standard errors predict and decides PASSED at the next look, with the
    chains and the cost in its output; with a budget of one second it stops and names the budget that would."""
    lines = []
    verdict = validate(samplers.get("sgld"), {"step_size": 0.02}, targets="icg", num_chains=64, out=tmp_path,
                       progress=lines.append, budget="2min").verdict
    assert verdict.outcome is Outcome.PASSED, verdict.summary()
    assert any(line.startswith("on icg: ") and " chains (predicted " in line for line in lines), lines
    runs = verdict.metrics[verdict.metrics["sampler"] == "sgld"]
    assert len(runs) == 2  # the first look's run and the added chains
    seconds, evals = verdict.costs["icg"]
    assert seconds > 0 and evals > 64 * 8000
    short = validate(samplers.get("sgld"), {"step_size": 0.02}, targets="icg", num_chains=64, out=tmp_path,
                     budget="1s", **QUIET).verdict
    assert short.outcome is Outcome.INCONCLUSIVE and "--budget " in short.reasons["icg"], short.summary()
    assert "chains would decide" in short.reasons["icg"]


def test_a_correct_sampler_far_from_the_small_step_regime_is_never_failed_by_its_ladder(tmp_path, monkeypatch):
    """Correct SGLD written outside the suite at h = 0.02 on linreg (h lambda_max = 0.6: r +1.44, +1.94 at h),
    claiming nothing: its checks against truth fail, its step ladder runs (h/2, h/4, h/8), and the verdict is
    PASSED (its error vanishes) or INCONCLUSIVE within the budget, never FAILED."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))  # tests.heldout, from the repository root
    sampler = load_sampler("tests.heldout.sgld_correct:SAMPLER")
    verdict = validate(sampler, {"step_size": 0.02}, claims="none", targets="linreg", out=tmp_path, budget="2min",
                       **QUIET).verdict
    assert verdict.outcome in (Outcome.PASSED, Outcome.INCONCLUSIVE), verdict.summary()
    ladder = verdict.checks[verdict.checks["name"] == "step_ladder"]
    assert len(ladder) == 1 and ladder.iloc[0]["rungs"] >= 4, verdict.summary()
    assert "vanish" in verdict.reasons["linreg"] or "cannot yet tell" in verdict.reasons["linreg"]


def test_a_faithful_psgld_is_failed_because_the_method_drops_gamma(tmp_path):
    sampler = load_sampler("sgbench.bench.adapters.sgmcmcjax:psgld")  # SGMCMCJax is a test dependency
    verdict = validate(sampler, {"step_size": 0.04}, targets="icg", num_chains=128, num_steps=2000, warmup=2000,
                       out=tmp_path, budget="3min", **QUIET).verdict
    reason = verdict.reasons["icg"]
    assert verdict.outcome is Outcome.FAILED, verdict.summary()
    assert "agrees with the suite's 'psgld'" in reason and reason.count("does not vanish as the step shrinks") == 2
