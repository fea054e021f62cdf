r"""Power against planted bugs (``sgbench.bench.gate.planted``, ``sgbench.bench.gate.power``, ``sgbench gate --power``)
and the gate's exact-law and heavy-tailed checks that give it that power.

- Planting is undone: after ``with bug.planted()`` the registry, the targets' noise models and the
  drivers' merge are the originals again (deterministic).
- A bug with an effect is caught by the gate layer (``sgld-noise-variance-doubled``: the variance
  of every SGLD cell rises by about 0.5 T Sigma, 3 to 20 times the cells' detectable deviations;
  each check's false-failure rate is the gate's, about 4e-6, so a pass here is a power failure)
  and by the fast tests (a NumPy-only bug is caught by the equivalence tests, which compare the two
  steps on shared draws to 1e-12: deterministic).
- A bug whose effect vanishes on every cell is reported as such, with the reason.
- The exact law of an exact-law cell equals the discrete Lyapunov solution when the run is long
  and starts at the stationary law (deterministic, 1e-10), and the design bias measured for SGLD's
  main cell equals its exact law within the measurement's standard error (rate 1e-6).
- The heavy-tailed ``magnitude`` check sees a -0.3 shift of r on pSGLD's cell that the median
  check alone missed (issue 18): the shift is about 10 times the check's detectable deviation, and
  the unshifted run passes at the check's rate.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

from sgbench import samplers
from sgbench.bench import cli
from sgbench.bench.gate import design_bias, exact_law, planted, power
from sgbench.bench.gate.cells import suite
from sgbench.bench.gate.replicates import run_replicates
from sgbench.bench.gate.runner import alpha_per_check
from sgbench.bench.gate.truth import truth_checks
from sgbench.reference.metrics.moments import Moments
from sgbench.targets.noise.isotropic import IsotropicNoise

QUICK = suite("quick")
ALPHA = alpha_per_check(len(QUICK), True)


def test_the_library_has_at_least_20_bugs_with_distinct_names():
    names = [bug.name for bug in planted.BUGS]
    assert len(names) >= 20 and len(set(names)) == len(names)
    with pytest.raises(ValueError, match="unknown planted bug"):
        planted.get("no-such-bug")


def test_planting_is_undone():
    originals = {name: samplers.get(name) for name in samplers.names()}
    merge, noise = Moments.merge, IsotropicNoise.noise
    for bug in planted.BUGS:
        with bug.planted():
            pass
    assert {name: samplers.get(name) for name in samplers.names()} == originals
    assert Moments.merge is merge and IsotropicNoise.noise is noise


def test_a_planted_bug_changes_only_the_backends_it_names():
    bug = planted.get("sgld-reference-noise-doubled")
    original = samplers.get("sgld")
    with bug.planted():
        patched = samplers.get("sgld")
        assert patched.optimized_step is original.optimized_step
        assert patched.reference_step is not original.reference_step


@pytest.mark.integration
def test_gate_layer_catches_a_bug_with_an_effect():
    row = power.gate_layer(planted.get("sgld-noise-variance-doubled"), progress=lambda _: None)
    assert row["has_effect"] and row["gate"], row
    assert "sgld@icg4" in row["gate_failures"]


def test_a_bug_that_vanishes_everywhere_is_reported_with_its_reason():
    bug = planted.get("moments-merge-cross-term-dropped")
    row = power.gate_layer(bug, progress=lambda _: None)
    assert not row["has_effect"] and not row["gate"] and row["cells_run"] == 0
    assert "E[x^2]" in power._why_missed(row)


@pytest.mark.long
def test_tests_layer_catches_a_reference_only_bug():
    outcome, detail = power.tests_layer(planted.get("sgld-reference-noise-doubled"))
    assert outcome == "caught", detail


def test_power_command_and_its_bad_input(tmp_path, capsys):
    status = cli.main(["gate", "--power", "--bug", "sgld-welling-teh-noise", "--no-tests", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0 and "caught 1 of 1" in out, out
    assert (tmp_path / "gate_quick_power.html").exists()
    assert cli.main(["gate", "--power", "--bug", "sgld-typo", "--no-tests", "--out", str(tmp_path)]) == 2


def test_exact_law_is_the_lyapunov_solution_for_a_long_stationary_run():
    cell = next(c for c in QUICK if c.exact_law and c.sampler == "sgld")
    target = cell.make_target()
    h, t, v = cell.params["step_size"], cell.params["temperature"], cell.target_params["noise_variance"]
    a = np.eye(target.dim) - h * target.precision
    stationary = scipy.linalg.solve_discrete_lyapunov(a, (h * h * v + 2 * h * t) * np.eye(target.dim))
    from sgbench.reference.linear_laws import averaged_second_moment

    law = samplers.get("sgld").law(cell.params, target.precision, v * np.eye(target.dim))
    np.testing.assert_allclose(averaged_second_moment(stationary, law, 200, target.dim), np.diag(stationary),
                               rtol=1e-10)


def test_exact_law_of_a_thinned_average_reads_only_the_kept_steps():
    """``averaged_second_moment(..., thin=k)`` is the mean of S_t over t = b + k, b + 2k, .., b + n (the steps
    ``RunConfig.is_kept`` keeps), iterated here by hand (deterministic)."""
    from sgbench.reference.linear_laws import averaged_second_moment
    from sgbench.samplers._langevin import langevin_law

    cell = next(c for c in QUICK if c.exact_law and c.sampler == "sgld")
    target = cell.make_target()
    law = langevin_law(target.precision, 0.02, 0.5, 2.0 * np.eye(target.dim))
    a, q = law.transition, law.covariance
    s, kept = 4.0 * np.asarray(target.covariance), []
    for t in range(30 + 200):
        s = a @ s @ a.T + q
        if t >= 30 and (t - 30 + 1) % 40 == 0:
            kept.append(np.diag(s))
    np.testing.assert_allclose(averaged_second_moment(4.0 * np.asarray(target.covariance), law, 200, target.dim,
                                                      num_burnin=30, thin=40), np.mean(kept, axis=0), rtol=1e-12)


def test_measured_design_bias_of_sgld_equals_its_exact_law():
    """The stored design bias of SGLD's main icg4 cell (measured from 64 x 64 chains) against the
    exact expected time average of its discrete law, transient included (rate 1e-6)."""
    cell = next(c for c in QUICK if c.sampler == "sgld" and c.target == "icg" and not c.label and c.backend == "jax")
    target = cell.make_target()
    exact = exact_law.expected_second_moment(cell) / np.diag(target.covariance) - 1
    entry = design_bias.of_cell(cell, design_bias.load())
    z = (np.asarray(entry["second_moment_error"]) - exact) / np.asarray(entry["second_moment_error_se"])
    assert np.all(np.abs(z) < scipy.stats.norm.ppf(1 - 1e-6 / (2 * target.dim))), (entry, exact)


def test_exact_law_refuses_what_it_cannot_compute():
    cell = next(c for c in QUICK if c.sampler == "sgnht")
    with pytest.raises(ValueError, match="no exact law"):
        exact_law.expected_second_moment(cell)


def test_magnitude_check_sees_a_shift_the_median_check_missed():
    cell = next(c for c in QUICK if c.sampler == "psgld" and c.target == "icg" and c.backend == "jax")
    assert cell.heavy_tailed
    design = design_bias.of_cell(cell, design_bias.load())
    rep = run_replicates(cell, seed=11)
    checks = {c.name: c for c in truth_checks(rep, design, ALPHA)}
    assert all(c.passed for c in checks.values()), [c.as_row() for c in checks.values()]
    shifted = dataclasses.replace(rep, second_moment_error=rep.second_moment_error - 0.3)
    magnitude = {c.name: c for c in truth_checks(shifted, design, ALPHA)}["magnitude"]
    magnitude.assert_failed()
