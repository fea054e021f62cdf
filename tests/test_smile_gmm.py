"""``sgbench reproduce smile-gmm`` (``bench/reproduce/smile_gmm.py``): the modes of a chain's draws, the claims of
appendix D on constructed summaries, the rendering from the record alone, and (integration) a tiny run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import smile_gmm
from sgbench.bench.reproduce._record import NotRecorded, record_path, recorded_only

CENTRES = np.array([(a, b) for a in (-4.0, -2.0, 0.0, 2.0, 4.0) for b in (-4.0, -2.0, 0.0, 2.0, 4.0)])


def test_mode_of_partitions_the_draws_and_a_chain_summary_counts_its_visits():
    radius = 3 * math.sqrt(0.3)
    draws = np.array([[0.1, 0.2], [1.1, 0.0], [np.nan, np.nan], [4.1, 3.9], [9.0, 9.0], [0.0, 0.3], [-2.0, -2.1]])
    modes = smile_gmm.mode_of(draws, CENTRES, radius)
    # (1.1, 0) is nearer (2, 0) than (0, 0); NaN and far draws are in no mode
    assert modes.tolist() == [12, 17, -1, 24, -1, 12, 6]
    summary = smile_gmm.chain_summary(draws, 10, CENTRES, radius)
    assert summary["draws"] == 6 and sum(summary["per_mode"]) == 5 and summary["per_mode"][12] == 2
    assert summary["first_visit"][12] == 10 and summary["first_visit"][24] == 40 and summary["first_visit"][6] == 70
    assert summary["first_visit"][0] is None and summary["changes"] == 4  # 12 -> 17 -> 24 -> 12 -> 6
    assert smile_gmm.cover_steps(summary) == math.inf
    assert smile_gmm.cover_steps({"first_visit": list(range(10, 260, 10))}) == 250.0


def _chain(modes: int, cover: float | None, changes: int = 50) -> dict:
    """A chain that visited ``modes`` modes (all 25 by step ``cover``)."""
    per_mode = [100] * modes + [0] * (25 - modes)
    first = [10 * (k + 1) for k in range(modes)] + [None] * (25 - modes)
    if cover is not None:
        first[-1] = cover
    return {"draws": 100 * modes, "per_mode": per_mode, "first_visit": first, "changes": changes}


def _result(smile_chains, csgld_chains) -> dict:
    run = {"b2": 0.4, "b2_sd": 0.02, "diverged": 0, "histogram_first": [[0]], "histogram_all": [[0]]}
    return {"runs": {"pSMILE-naive": {**run, "chains": smile_chains}, "cSGLD": {**run, "chains": csgld_chains}},
            "steps": {"pSMILE-naive": 0.6, "cSGLD": 0.03}, "update_norm": {"pSMILE-naive": 0.55, "cSGLD": 0.56},
            "pilot": pd.DataFrame(), "thin": 10, "pilot_steps": 20_000, "num_steps": 100_000}


def test_claims_of_appendix_d_on_constructed_summaries():
    fast = [_chain(25, 4000.0 + 100 * k) for k in range(10)]
    slow = [_chain(25, 12_000.0 + 1000 * k) for k in range(10)]
    claims = smile_gmm.claims(_result(fast, slow))
    assert [c.verdict for c in claims] == ["held"] * 5 + ["not testable"] * 2
    assert claims[1].where.startswith("appendix D") and "0.55 pSMILE-naive, 0.56 cSGLD" in claims[1].reason
    assert all(c.error_rate == 0.0 for c in claims[:1] + claims[2:5])
    # slower than cSGLD beyond the noise: the comparison is contradicted; the others still hold
    claims = smile_gmm.claims(_result(slow, fast))
    assert claims[1].verdict == "contradicted" and claims[0].verdict == "held"
    # one chain stuck in its first mode, and a mode no chain visited: the single-chain claims and the 10 chains'
    stuck = [_chain(1, None, changes=0)] + [_chain(24, None) for _ in range(9)]
    claims = smile_gmm.claims(_result(stuck, slow))
    assert [claims[i].verdict for i in (0, 2, 3, 4)] == ["contradicted"] * 4
    assert "modes visited per pSMILE-naive chain: 1-24 of 25" in claims[0].ours
    assert "24 of 25 modes" in claims[2].ours


def test_table_reports_per_chain_visits():
    fast = [_chain(25, 4000.0 + 100 * k) for k in range(10)]
    rows = smile_gmm.table(_result(fast, [_chain(20, None) for _ in range(10)])).set_index("sampler")
    assert rows.loc["pSMILE-naive", "modes per chain"] == "25" and rows.loc["cSGLD", "modes per chain"] == "20"
    assert rows.loc["cSGLD", "steps to visit all 25 (chains)"] == "; ".join(["never"] * 10)
    assert rows.loc["pSMILE-naive", "mode changes per 1000 steps"] == "0.5 ± 0"
    assert rows.loc["pSMILE-naive", "TV of mode shares from equal"] == "0 ± 0"  # 100 draws in every mode


def test_outcome_renders_from_the_record_alone(tmp_path, monkeypatch):
    """With the pilots and runs replaced by stand-ins, a first run fills the record; under ``recorded_only`` the
    same outcome comes back with nothing computed, and a unit the record lacks raises NotRecorded."""
    centres_run = {"chains": [_chain(25, 4000.0 + 100 * k) for k in range(10)], "b2": 0.4, "b2_sd": 0.02,
                   "diverged": 0, "histogram_first": np.zeros((60, 60), int), "histogram_all": np.ones((60, 60), int)}
    monkeypatch.setattr(smile_gmm, "_pilot_norm", lambda target, seed, steps: {"update_norm": 0.55})
    monkeypatch.setattr(smile_gmm, "matched_csgld_step", lambda target, norm, seed, steps: {
        "step": 0.03, "update_norm": 0.56, "step_sizes": [0.01, 0.1], "update_norms": [0.3, 1.6]})
    monkeypatch.setattr(smile_gmm, "_run_summary", lambda sampler, params, steps, seed: centres_run)
    db = tmp_path / "r.sqlite"
    first = smile_gmm.run("quick", {"steps": 5000}, db, tmp_path, progress=False)
    assert len(record_path(db, "smile-gmm").read_text().splitlines()) == 4
    for name in ("_pilot_norm", "matched_csgld_step", "_run_summary"):
        monkeypatch.setattr(smile_gmm, name, None)
    with recorded_only():
        again = smile_gmm.run("quick", {"steps": 5000}, db, tmp_path, progress=False)
        assert again.table.equals(first.table) and again.claims == first.claims
        with pytest.raises(NotRecorded):
            smile_gmm.run("quick", {"steps": 6000}, db, tmp_path, progress=False)


@pytest.mark.integration
def test_tiny_run_prints_its_claims_and_writes_its_page(tmp_path, capsys):
    argv = ["reproduce", "smile-gmm", "--steps", "2000", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert status == (1 if "CONTRADICTED" in out else 0) and "claims: " in out and "cSGLD" in out
    page = (tmp_path / "smile_gmm.html").read_text()
    assert "Pilot runs of cSGLD" in page and "data:image/png;base64" in page
    assert len(record_path(tmp_path / "r.sqlite", "smile-gmm").read_text().splitlines()) == 4
