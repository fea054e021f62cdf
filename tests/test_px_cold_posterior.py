"""The PX cold-posterior reproduction (``bench/reproduce/px_cold_posterior.py``): the step-size choice, the claims of
appendix B.4, Table 4 and Table 10 on constructed chains (held, contradicted, within noise, at every temperature and
metric they name), the tables beside the paper's, the rendering from the record alone, bad options, and a tiny run
through the command."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, docs_blocks, px_cold_posterior as pxc
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE


def test_the_best_step_is_the_lowest_validation_nll_among_those_that_did_not_diverge():
    tuning = pd.DataFrame({"sampler": ["sghmc"] * 3 + ["px_sghmc"] * 2, "step size": [1e-4, 1e-3, 1e-2, 1e-4, 1e-3],
                           "validation NLL": [0.5, 0.2, math.nan, math.nan, math.nan]})
    assert pxc.best_steps(tuning) == {"sghmc": 1e-3, "px_sghmc": None}


SPREAD = (-0.003, -0.001, 0.001, 0.003)  # 4 chains around each mean: sd 0.0026


def _frame(scores):
    """Chains' rows from ``scores``: (T, schedule, sampler) -> {score: mean} (the same on both splits), 4 chains
    each spread by ``SPREAD``; a missing run is left out, a NaN mean is a failed run."""
    rows = []
    for (t, schedule, sampler), means in scores.items():
        for chain, d in enumerate(SPREAD):
            rows += [{"T": t, "schedule": schedule, "sampler": sampler, "chain": chain, "split": split,
                      **{k: v + d for k, v in means.items()}} for split in pxc.SPLITS]
    return pd.DataFrame(rows)


def _scores(px, sghmc, px_constant=None):
    """Every run of the reproduction: PX-SGHMC's and SGHMC's (ERR, NLL, AMB) per temperature (cyclical), and
    PX-SGHMC's with the constant schedule at T = 1 (default: its cyclical one)."""
    out = {}
    for t, p, s in zip(pxc.TEMPERATURES, px, sghmc):
        out[t, pxc.CYCLICAL, "px_sghmc"] = dict(zip(pxc.SCORES, p))
        out[t, pxc.CYCLICAL, "sghmc"] = dict(zip(pxc.SCORES, s))
    out[1.0, pxc.CONSTANT, "px_sghmc"] = dict(zip(pxc.SCORES, px_constant or px[0]))
    out[1.0, pxc.CONSTANT, "sghmc"] = dict(zip(pxc.SCORES, sghmc[0]))
    return out


def test_claims_at_every_temperature_and_metric_they_name():
    px = [(0.03, 0.15, 0.5)] * 3
    sghmc = [(0.04, 0.18, 0.2)] * 3
    err, nll, amb, orthogonal, table4_amb, table4, table10 = pxc.claims(_frame(_scores(px, sghmc)))
    assert [c.verdict for c in (err, nll, amb, table4_amb, table4, table10)] == [HELD] * 6
    assert orthogonal.verdict == NOT_TESTABLE
    assert all(f"T={t:g} (ERR): PX-SGHMC" in err.ours for t in pxc.TEMPERATURES) and "T=0.01 (NLL)" in nll.ours
    assert "critical |z| = 2.13" in nll.reason and "Welch's t over the chains" in nll.reason
    assert table4_amb.ours.startswith("AMB: SGHMC 0.2") and "vs PX-SGHMC 0.5" in table4_amb.ours  # higher is better
    assert "validation split" in table4_amb.reason
    assert "ERR: PX-SGHMC constant 0.03" in table10.ours and "SGHMC cyclical 0.04" in table10.ours
    assert err.where.startswith("appendix B.4") and table10.where.startswith("appendix B.9")
    # ERR reversed beyond the noise at the cold temperatures; NLL reversed inside the noise at T = 0.01; AMB lower
    # at T = 1 (on both splits); PX-SGHMC's constant run failed
    px = [(0.03, 0.15, 0.1), (0.05, 0.15, 0.5), (0.05, 0.183, 0.5)]
    err, nll, amb, _, table4_amb, table4, table10 = pxc.claims(_frame(_scores(
        px, sghmc, px_constant=(math.nan,) * 3)))
    assert err.verdict == CONTRADICTED and "reversed beyond the noise at T=0.1 (ERR); T=0.01 (ERR)" in err.reason
    assert nll.verdict == WITHIN_NOISE and "inside the noise at T=0.01 (NLL)" in nll.reason
    assert amb.verdict == CONTRADICTED and table4_amb.verdict == CONTRADICTED and table4.verdict == HELD
    assert table10.verdict == CONTRADICTED and "PX-SGHMC constant inf" in table10.ours  # failed: worse than any


def _fake_chains(target, sampler, step_size, temperature, chains, cycle_length, cycles, seed, splits=pxc.SPLITS,
                 schedule=pxc.CYCLICAL, params=None, measures=None):
    """A stand-in for the runs: PX-SGHMC diverges above 2e-4; its scores beat SGHMC's at every setting."""
    if sampler == "px_sghmc" and step_size > 2e-4:
        return None
    base = {"ERR": 0.05, "NLL": 0.2, "AMB": 0.2} if sampler == "sghmc" else {"ERR": 0.03, "NLL": 0.1, "AMB": 0.5}
    return [{split: {k: v * (1 + 0.01 * c) - step_size for k, v in base.items()} for split in splits}
            for c in range(chains)]


def test_the_outcome_renders_from_the_record_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(pxc, "run_chains", _fake_chains)
    db = tmp_path / "results.sqlite"
    first = docs_blocks.outcome_markdown(pxc.run("quick", {}, db, tmp_path, progress=False))
    assert "**claims: 6 held, 0 contradicted, 0 within noise, 1 not testable**" in first
    assert "| 1 | PX-SGHMC | 0.0002 |" in first  # the largest step below divergence has the lowest fake NLL
    assert "**Constant and cyclical schedules at T = 1" in first
    assert "| PX-SGHMC | constant | 0.0001 |" in first and "| PX-SGHMC | cyclical | 0.0002 |" in first  # half the peak

    def no_run(*args, **kwargs):
        raise AssertionError("a recorded run was computed again")

    monkeypatch.setattr(pxc, "run_chains", no_run)
    with _record.recorded_only():
        assert docs_blocks.outcome_markdown(pxc.run("quick", {}, db, tmp_path, progress=False)) == first
        with pytest.raises(_record.NotRecorded):
            pxc.run("quick", {"seed": 1}, db, tmp_path, progress=False)


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "0"], "--jobs must be an integer >= 1, got 0"),
    (["--jobs", "2", "--executor", "dask"], "--jobs shares the runs between local processes; with --executor dask"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    status = main(["reproduce", "px-cold-posterior", *argv, "--out", str(tmp_path), "--db",
                   str(tmp_path / "r.sqlite"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err


@pytest.mark.integration
def test_tiny_run_through_the_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(pxc.SCALES, "quick", {"chains": 2, "cycle_length": 20, "cycles": 2})
    monkeypatch.setattr(pxc, "STEP_GRID", (1e-4, 1e-3))
    argv = ["reproduce", "px-cold-posterior", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert "claims: " in out and "consistently outperforms the SGHMC baseline" in out
    assert status == (1 if "CONTRADICTED" in out else 0), out
    page = (tmp_path / "px_cold_posterior.html").read_text()
    assert "Step-size search" in page and "data:image/png;base64" in page
    # an interrupted or repeated reproduction resumes: every run is in the record beside the store, none reruns
    assert (tmp_path / "px_cold_posterior_runs.jsonl").is_file()

    def no_run(*args, **kwargs):
        raise AssertionError("a finished run was computed again")

    monkeypatch.setattr(pxc, "run_chains", no_run)
    assert main(argv) == status and capsys.readouterr().out.splitlines()[:8] == out.splitlines()[:8]
