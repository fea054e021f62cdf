"""SGLRW Figure 4 (``bench/reproduce/sglrw_covariance_matrices.py``): the difference matrices' norms, the claims of
section 5.2.1 on constructed summaries (held, contradicted, within noise, at the B named), the outcome rendered from
its record computing nothing, and a tiny run of the samplers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, docs_blocks, sglrw_covariance_matrices as fig4


def test_norms_split_the_frobenius_norm():
    result = fig4.norms(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert result == pytest.approx({"frobenius": math.sqrt(30), "diagonal": math.sqrt(17),
                                    "off-diagonal": math.sqrt(13)})


def test_difference_summary_keeps_the_matrix_and_bootstrap_sds():
    rng = np.random.default_rng(0)
    truth = np.array([[2.0, 0.5], [0.5, 1.0]])
    particles = rng.multivariate_normal(np.zeros(2), truth, size=300)
    out = fig4.difference_summary(particles, truth, np.random.default_rng(1))
    assert np.allclose(out["difference"], np.cov(particles, rowvar=False) - truth) and out["diverged"] == 0
    assert all(out[f"{name}_sd"] > 0 for name in fig4.NORMS)
    particles[0, 1] = np.inf
    out = fig4.difference_summary(particles, truth, np.random.default_rng(1))
    assert out["difference"] is None and out["diverged"] == 1 and out["diagonal"] == math.inf


def _summary(diagonal: dict, sd: float = 0.01) -> pd.DataFrame:
    """A summary with the diagonal norm of each (B, sampler) of ``diagonal`` and one sd."""
    return pd.DataFrame([{"B": b, "sampler": name, "diagonal": v, "diagonal_sd": sd}
                         for (b, name), v in diagonal.items()])


def _by_b(sgld, sglrw, clipped, batches=(8, 64, 512)):
    return _summary({(b, name): v for name, values in (("sgld", sgld), ("sglrw", sglrw), ("clipped_sgld", clipped))
                     for b, v in zip(batches, values)})


def test_claims_held_at_every_b():
    untestable, versus_sgld, versus_clipped, impact = fig4.claims(_by_b(sgld=(1.0, 0.4, 0.2), sglrw=(0.3, 0.2, 0.1),
                                                                         clipped=(1.2, 0.5, 0.2)))
    assert untestable.verdict == "not testable" and untestable.error_rate is None
    assert versus_sgld.verdict == versus_clipped.verdict == "held" and "critical |z| = 2.13" in versus_sgld.reason
    # changes from B = 8 to 512: SGLRW 0.2, SGLD 0.8, Clipped-SGLD 1.0 (sd 0.014 each)
    assert impact.verdict == "held" and "against SGLD, B=8 → 512" in impact.ours


def test_claims_contradicted_and_within_noise_at_the_b_named():
    claims = fig4.claims(_by_b(sgld=(1.0, 0.4, 0.1), sglrw=(0.3, 0.2, 0.2), clipped=(1.2, 0.5, 0.21)))
    # SGLRW's 0.2 against SGLD's 0.1 at B = 512: z = -7; against Clipped-SGLD's 0.21: z = 0.7, inside the noise
    assert claims[1].verdict == "contradicted" and "reversed beyond the noise at B=512" in claims[1].reason
    assert claims[2].verdict == "within noise" and "inside the noise at B=512" in claims[2].reason
    claims = fig4.claims(_by_b(sgld=(0.33, 0.3, 0.15), sglrw=(0.3, 0.2, 0.1), clipped=(1.2, 0.5, 0.2)))
    assert claims[3].verdict == "within noise"  # changes 0.2 and 0.18 (sd 0.014 each): z = -1, inside 1.96
    claims = fig4.claims(_by_b(sgld=(0.25, 0.2, 0.2), sglrw=(0.3, 0.2, 0.1), clipped=(1.2, 0.5, 0.2)))
    assert claims[3].verdict == "contradicted" and "against SGLD" in claims[3].reason  # 0.2 against 0.05


def _exact_draws(name, target, step_sizes, num_particles, num_iterations, seed, dtype, progress=None):
    """Stand-in for the samplers: exact posterior draws, SGLD's and Clipped-SGLD's with a wider diagonal."""
    import jax

    draws = np.asarray(target.sample(jax.random.key(seed + target.noise.batch_size), num_particles))
    widen = 1.0 if name == "sglrw" else 1.3
    return [target.posterior.mean + widen * (draws - target.posterior.mean) for _ in step_sizes]


def test_the_outcome_renders_from_its_record_computing_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(fig4.SCALES, "quick", {"particles": 40, "batch_sizes": (8, 64)})
    monkeypatch.setattr(fig4, "final_positions", _exact_draws)
    outcome = fig4.run("quick", {}, db=tmp_path / "r.sqlite", out=tmp_path, progress=False)
    assert len(outcome.table) == 6 and len(outcome.claims) == 4
    monkeypatch.setattr(fig4, "final_positions", None)  # nothing may be run again
    with _record.recorded_only():
        again = fig4.run("quick", {}, db=tmp_path / "r.sqlite", out=tmp_path, progress=False)
    assert docs_blocks.outcome_markdown(again) == docs_blocks.outcome_markdown(outcome)
    monkeypatch.setitem(fig4.SCALES, "quick", {"particles": 40, "batch_sizes": (8, 128)})
    with _record.recorded_only(), pytest.raises(_record.NotRecorded):
        fig4.run("quick", {}, db=tmp_path / "r.sqlite", out=tmp_path, progress=False)


@pytest.mark.integration
def test_tiny_run_of_the_samplers(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(fig4.SCALES, "quick", {"particles": 30, "batch_sizes": (8, 64)})
    monkeypatch.setattr(fig4, "PAPER_NUM_ITERATIONS", 200)
    argv = ["reproduce", "sglrw-covariance-matrices", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert status == (1 if "CONTRADICTED" in out else 0) and "Frob" in out and "claims: " in out
    assert "data:image/png;base64" in (tmp_path / "sglrw_covariance_matrices.html").read_text()
