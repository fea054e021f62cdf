"""``sgbench reproduce px-modes`` (``bench/reproduce/px_modes.py``): the claims of section 5.1 on constructed mode
counts (held, contradicted, within noise, for SGLD and for SGHMC with the paper's friction), the summary, the
rendering from the record alone, and a tiny run through the command. The mode counter and the single-layer adapter
are tested in ``tests/test_px.py``."""

from __future__ import annotations

import numpy as np
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, docs_blocks, px_modes
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE
from sgbench.bench.reproduce.px_modes import PX_SGHMC, PX_SGHMC_EQUAL, PX_SGLD, SGHMC, SGLD, ModeRun


def _counts(sgld, px_sgld, sghmc, px_sghmc, diverged=0, equal_diverged=0):
    """Constructed runs: the modes per chain of each sampler; ``diverged`` of PX-SGHMC's chains diverged."""
    def run(modes, bad=0):
        return ModeRun(list(modes), [k < bad for k in range(len(modes))], np.zeros((3, 2)))

    return {SGLD: run(sgld), PX_SGLD: run(px_sgld), SGHMC: run(sghmc), PX_SGHMC: run(px_sghmc, diverged),
            PX_SGHMC_EQUAL: run(sghmc, equal_diverged)}


def test_claims_of_section_5_1_for_sgld_and_the_papers_friction():
    trapped = [1, 1, 1, 1]
    hopping, trapping = px_modes.claims(_counts(trapped, [6, 7, 5, 8], trapped, [3, 2, 4, 3]))[:2]
    assert hopping.verdict == HELD and hopping.where == "section 5.1, fifth sentence"
    # Welch's t = 8.5 with 3 degrees of freedom: beyond t_3(1 - 0.05 / 2) = 3.18, so z beyond 1.96
    assert "SGLD: SP 1 vs EP 6.5 ± 0.65 (z = 2.9)" in hopping.ours and "SGHMC: SP 1 vs EP 3" in hopping.ours
    assert "critical |z| = 1.96" in hopping.reason
    assert trapping.verdict == HELD and trapping.error_rate == 0.0 and "0 of 4 chains diverged" in trapping.ours
    # PX-SGHMC no better than SGHMC: inside the noise at SGHMC alone; half its chains diverged: contradicted
    claims = px_modes.claims(_counts(trapped, [6, 7, 5, 8], trapped, [1, 2, 1, 1], diverged=2, equal_diverged=0))
    hopping, trapping, *rest = claims
    assert hopping.verdict == WITHIN_NOISE and "inside the noise at SGHMC" in hopping.reason
    assert trapping.verdict == CONTRADICTED and "2 of 4 chains diverged; with equal friction (ours) 0 of 4" \
        in trapping.ours
    assert [c.verdict for c in rest] == [NOT_TESTABLE, NOT_TESTABLE]
    # fewer modes with the expansion, beyond the noise: contradicted
    hopping = px_modes.claims(_counts([3, 4, 3, 4], [1, 1, 1, 1], trapped, [3, 2, 4, 3]))[0]
    assert hopping.verdict == CONTRADICTED and "reversed beyond the noise at SGLD" in hopping.reason


def test_summary_counts_chains_in_one_mode_and_diverged():
    frame = px_modes.summary(_counts([1, 1, 1, 1], [6, 7, 5, 8], [1, 1, 1, 1], [3, 1, 4, 3], diverged=3))
    row = frame.set_index("sampler").loc[PX_SGHMC]
    assert row["modes per chain"] == "2.75 ± 0.63" and row["most modes"] == 4
    assert row["modes per chain that did not diverge"] == "3"  # the 4th chain alone
    assert row["chains in one mode"] == "1 of 4" and row["diverged chains"] == "3 of 4"
    assert frame.set_index("sampler").loc[SGLD, "modes per chain"] == "1"


def _fake_run(wrapped, centres, radius, name, expansion, options, params, num_chains, num_steps, seed):
    """A stand-in for a run: the expanded samplers visit 3 modes per chain, the others 1."""
    return {"modes": [3 if expansion else 1] * num_chains, "diverged": [False] * num_chains,
            "first_chain": [[0.0, 0.0], [2.0, 0.0]]}


def test_the_outcome_renders_from_the_record_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(px_modes, "_one_run", _fake_run)
    db = tmp_path / "results.sqlite"
    options = {"chains": 3, "steps": 100}
    first = docs_blocks.outcome_markdown(px_modes.run("quick", options, db, tmp_path, progress=False))
    assert "**claims: 2 held, 0 contradicted, 0 within noise, 2 not testable**" in first

    def no_run(*args, **kwargs):
        raise AssertionError("a recorded run was computed again")

    monkeypatch.setattr(px_modes, "_one_run", no_run)
    with _record.recorded_only():
        assert docs_blocks.outcome_markdown(px_modes.run("quick", options, db, tmp_path, progress=False)) == first
        with pytest.raises(_record.NotRecorded):
            px_modes.run("quick", {**options, "seed": 1}, db, tmp_path, progress=False)


@pytest.mark.integration
def test_tiny_run_through_the_command(tmp_path, capsys):
    argv = ["reproduce", "px-modes", "--chains", "2", "--steps", "2000", "--out", str(tmp_path), "--db",
            str(tmp_path / "r.sqlite"), "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert "claims: " in out and "EP resolves the issue of SP getting trapped" in out
    assert status == (1 if "CONTRADICTED" in out else 0), out
    page = (tmp_path / "px_modes.html").read_text()
    assert "chains in one mode" in page and "data:image/png;base64" in page
