"""SGLRW Figure 7, bottom (``bench/reproduce/sglrw_covariance_logreg.py``): the covariance MSE against the stored
NUTS reference of the breast-cancer posterior, the outcome rendered from its record computing nothing, and a tiny run
of the samplers. The claims' logic is ``sglrw_covariance.figure_claims``'s, tested in ``test_sglrw_covariance.py``."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import (
    _record,
    docs_blocks,
    sglrw_covariance,
    sglrw_covariance_logreg as fig7,
    sglrw_table2,
)


def test_the_grid_is_table_2s():
    assert set(fig7.LARGER_STEP_SIZES) <= set(fig7.STEP_SIZES) == {0.01, 0.1, 1.0}
    assert fig7.SCALES["paper"]["batch_sizes"] == sglrw_table2.BATCH_SIZES and fig7.NUM_ITERATIONS == 1000


def _reference_draws(name, target, step_sizes, num_particles, num_iterations, seed, dtype, progress=None):
    """Stand-in for the samplers: draws of the reference fit, SGLD's spread 3 times wider at the largest step."""
    fit = sglrw_table2._reference_fit()
    rng = np.random.default_rng([seed, target.noise.batch_size])
    draws = rng.multivariate_normal(fit.mean, fit.covariance, size=num_particles)
    return [fit.mean + (3.0 if name == "sgld" and h == max(step_sizes) else 1.0) * (draws - fit.mean)
            for h in step_sizes]


def test_the_outcome_renders_from_its_record_computing_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(fig7.SCALES, "quick", {"particles": 200, "batch_sizes": (4, 64)})
    monkeypatch.setattr(fig7, "final_positions", _reference_draws)
    outcome = fig7.run("quick", {}, db=tmp_path / "r.sqlite", out=tmp_path, progress=False)
    rows = outcome.table
    assert len(rows) == 18 and set(rows["exact draws (floor)"]) == {
        f"{sglrw_covariance.expected_covariance_mse(*[sglrw_table2._reference_fit().covariance] * 2, 200):.3g}"}
    explodes = outcome.claims[1]
    assert explodes.verdict == "held" and explodes.where == "section 4.3.1, second sentence"  # 3 times the spread
    monkeypatch.setattr(fig7, "final_positions", None)  # nothing may be run again
    with _record.recorded_only():
        again = fig7.run("quick", {}, db=tmp_path / "r.sqlite", out=tmp_path, progress=False)
    assert docs_blocks.outcome_markdown(again) == docs_blocks.outcome_markdown(outcome)


@pytest.mark.integration
def test_tiny_run_of_the_samplers(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(fig7.SCALES, "quick", {"particles": 40, "batch_sizes": (8,)})
    monkeypatch.setattr(fig7, "NUM_ITERATIONS", 100)
    argv = ["reproduce", "sglrw-covariance-logreg", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert status == (1 if "CONTRADICTED" in out else 0) and "Clipped SGLD" in out and "claims: " in out
    assert "data:image/png;base64" in (tmp_path / "sglrw_covariance_logreg.html").read_text()
