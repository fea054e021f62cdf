"""``sgbench reproduce`` (``bench/cli/reproduce.py``), the reproductions' registry and outcome
(``bench/reproduce/_registry.py``, ``outcome.py``), and SMILE Table 1 at a tiny scale (``smile_table1.py``)."""

from __future__ import annotations

import math
import sqlite3

import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _registry, smile_table1
from sgbench.bench.reproduce.outcome import Check, Outcome, verdict


def test_every_reproduction_is_listed_with_both_scales(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("smile-table1", "smile-gmm", "sglrw-table1", "sglrw-table2", "sglrw-multimodal", "sglrw-covariance",
                 "px-modes", "mile-uci", "px-cold-posterior",
                 "mile-table5", "mamba-table1", "mamba-table2", "mamba-table3"):
        assert name in _registry.names() and f"\n{name}: " in "\n" + out
    assert out.count("--scale quick: ") == out.count("--scale paper: ") == len(_registry.names())


@pytest.mark.parametrize("argv, message", [
    (["nonsense"], "unknown reproduction 'nonsense'; known reproductions: mamba-table1"),
    ([], "give a reproduction NAME (sgbench reproduce --list shows them)"),
    (["smile-table1", "--particles", "30"],
     "--particles is an option of sglrw-covariance, sglrw-table1, sglrw-table2, not of smile-table1"),
    (["smile-table1", "--target", "gmm"], "--target must be one of"),
    (["smile-table1", "--noise", "none"], "--noise must be one of"),
    (["smile-table1", "--steps", "0"], "--steps must be an integer >= 1"),
    (["smile-table1", "--jobs", "0"], "--jobs must be an integer >= 1"),
    (["sglrw-table1", "--particles", "22"], "--particles must be an integer >= 23"),
    (["sglrw-table2", "--particles", "31"], "--particles must be an integer >= 32"),
    (["sglrw-table2", "--seeds", "0"], "--seeds must be an integer >= 1"),
    (["sglrw-table2", "--steps", "10"],
     "--steps is an option of px-modes, sglrw-multimodal, smile-gmm, smile-table1, not of sglrw-table2"),
])
def test_bad_requests_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    status = main(["reproduce", *argv, "--out", str(tmp_path / "out"), "--db", str(tmp_path / "r.sqlite"),
                   "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and message in err[0], err


def test_a_scale_must_be_quick_or_paper(capsys):
    assert main(["reproduce", "smile-table1", "--scale", "huge"]) == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err


@pytest.mark.parametrize("ours, sd, paper, paper_sd, expected", [
    (0.10, 0.01, 0.12, 0.01, "within"),         # |diff| 0.02 <= 2 sqrt(2) 0.01
    (0.10, 0.01, 0.13, 0.01, "differs"),        # 0.03 > 0.0283
    (0.10, float("nan"), 0.10, 0.0, "within"),  # no spread: only equality is within
    (0.10, float("nan"), 0.12, float("nan"), "no interval"),  # one run against a bare number
    (0.10, 0.0, 0.11, float("nan"), "differs"),
    (float("nan"), 0.01, 0.1, 0.01, "no result"),
    (0.1, 0.01, float("nan"), 0.01, "no paper value"),
])
def test_verdict_is_within_two_combined_standard_deviations(ours, sd, paper, paper_sd, expected):
    assert verdict(ours, sd, paper, paper_sd) == expected


def test_outcome_fails_when_a_check_fails_and_writes_its_page(tmp_path):
    table = pd.DataFrame({"cell": ["a"], "ours": [1.0]})
    passed = Outcome("demo-table", "Demo", table, checks=(Check("holds", True),))
    failed = Outcome("demo-table", "Demo", table, checks=(Check("holds", True), Check("claim", False, "why")))
    open_ = Outcome("demo-table", "Demo", table, checks=(Check("holds", True), Check("close", None)))
    assert not passed.failed and failed.failed and Outcome("demo-table", "Demo", table).failed is False
    assert not open_.failed and "NOT RESOLVED: close" in open_.text()
    assert "1 of 2 acceptance checks passed, 1 not resolved at this scale" in open_.write_page(tmp_path).read_text()
    assert "FAILED: claim (why)" in failed.text() and "PASSED: holds" in failed.text()
    page = failed.write_page(tmp_path).read_text()
    assert (tmp_path / "demo_table.html").exists() and "1 of 2 acceptance checks passed" in page


def _row(target, noise, sampler, b2):
    return {"target": target, "noise": noise, "sampler": sampler, "h": 0.1, "b2": b2, "b2_sd": 0.01,
            "paper": math.nan, "paper_sd": math.nan, "grid": []}


def test_the_check_averages_the_anisotropic_noises_per_target():
    rows = [_row("icg", noise, "psmile_naive", b2) for noise, b2 in
            (("diagonal", 0.05), ("correlated", 0.30), ("spatial", 0.05))]  # mean 0.133
    rows += [_row("icg", noise, "sgld", 0.15) for noise in smile_table1.ANISOTROPIC]
    rows += [_row("icg", "isotropic", "psmile_naive", 9.0)]  # isotropic noise does not count
    (check,) = smile_table1.checks(pd.DataFrame(rows))
    assert check.passed and "pSMILE-naive 0.133" in check.detail
    # below pSMILE-naive by 0.013, within 2 combined sds (2 x sqrt(2 x 3 x 0.01^2) / 3 = 0.016): not resolved
    close = rows + [_row("icg", noise, "smile_naive", 0.12) for noise in smile_table1.ANISOTROPIC]
    assert smile_table1.checks(pd.DataFrame(close))[0].passed is None
    rows += [_row("icg", noise, "smile_naive", 0.10) for noise in smile_table1.ANISOTROPIC]  # 0.033: beyond
    assert smile_table1.checks(pd.DataFrame(rows))[0].passed is False
    diverged = [r if r["sampler"] != "psmile_naive" or r["noise"] != "diagonal" else {**r, "b2": math.nan}
                for r in rows[:7]]
    assert smile_table1.checks(pd.DataFrame(diverged))[0].passed is False  # a diverged cell counts as worse
    assert smile_table1.checks(pd.DataFrame(rows[:3])) == ()  # nothing to compare with


def test_paper_table_and_search_grid():
    assert len(smile_table1.PAPER) == 12 and all(len(v) == 4 for v in smile_table1.PAPER.values())
    assert smile_table1.PAPER["funnel", "correlated"][3] == (0.004, 0.002)  # pSMILE-naive, the table's last column
    assert smile_table1.FIRST_STAGE == (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
    refined = smile_table1.second_stage(1e-3)
    assert len(refined) == 15 and math.isclose(refined[0], 1e-4) and math.isclose(refined[-1], 1e-2)
    assert math.isclose(refined[7], 1e-3)


def test_smile_table1_blocks_fit_the_caches_and_divide_the_steps():
    from sgbench.bench.running.jax_driver import CACHED_BLOCK_NUMBERS

    # 15 step sizes x 10 chains of SGLD draw 20 numbers and emit 10 coordinates a step: 466 steps fit, 400 divides
    refined = smile_table1._entry(("icg", "diagonal", "sgld"), smile_table1.second_stage(1e-3), 10**6, 0)
    assert refined.config.block_size == 400 and 150 * 400 * 30 <= CACHED_BLOCK_NUMBERS
    # SMILE-naive draws only the gradient's noise; both stages get the second stage's block
    first = smile_table1._entry(("funnel", "spatial", "smile_naive"), smile_table1.FIRST_STAGE, 10**6, 0)
    assert first.config.block_size == 625
    assert smile_table1._entry(("icg", "diagonal", "sgld"), smile_table1.FIRST_STAGE, 10**6, 0).config == refined.config
    assert smile_table1._entry(("icg", "diagonal", "sgld"), smile_table1.FIRST_STAGE, 200, 0).config.block_size == 200


@pytest.mark.integration
def test_smile_table1_tiny_run_lands_in_the_store_and_resumes(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    argv = ["reproduce", "smile-table1", "--steps", "200", "--target", "icg", "--noise", "diagonal", "--noise",
            "correlated", "--noise", "spatial", "--sampler", "sgld", "--sampler", "psmile_naive", "--db", str(db),
            "--out", str(tmp_path / "out"), "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    runs = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    # 3 noises x 2 samplers + the baseline; 7, then 15 step sizes of which 3 (10^(i-1), 10^i, 10^(i+1)) are stored
    assert runs == 7 * (7 + 15 - 3)
    assert status == (1 if "\nFAILED: ICG" in out else 0) and "ICG: pSMILE-naive has the lowest b²" in out
    assert out.count(" ICG ") >= 7 and "none (baseline)" in out
    page = (tmp_path / "out" / "smile_table1.html").read_text()
    assert "data:image/png;base64" in page and "acceptance checks passed" in page
    assert main(argv) == status  # every run is in the store: nothing computed again
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == runs


def test_mile_table5_counts_failed_chains():
    from sgbench.bench.reproduce import mile_table5

    counts = {"mile": {"nan": 0, "frozen": 0}, "naive": {"nan": 3, "frozen": 9}}
    frame = mile_table5.table(counts, 24).set_index("sampler")
    assert frame.loc["naive MCLMC", "NaN share"] == "0.12 ± 0.07" and frame.loc["MILE", "verdict"] == "within"
    assert frame.loc["naive MCLMC", "verdict"] == "differs"  # 0.125 against 0.82 ± 0.04
    assert all(check.passed for check in mile_table5.checks(counts, 24))
    assert [c.passed for c in mile_table5.checks({**counts, "naive": {"nan": 0, "frozen": 20}}, 24)] == [True, False]


@pytest.mark.parametrize("argv, printed, page_holds", [
    pytest.param(["px-modes", "--chains", "2", "--steps", "2000"], "PX-SGLD (3, 0) visits more modes than SGLD",
                 "chains in one mode", marks=pytest.mark.integration),
    pytest.param(["smile-gmm", "--steps", "2000"], "10 pSMILE-naive chains together visit all 25 modes",
                 "Pilot runs of cSGLD", marks=pytest.mark.integration),
    (["mile-table5", "--chains", "4"], "MILE: no NaN and no frozen chain", "frozen chains"),  # the default run's one
])
def test_tiny_run_prints_its_checks_and_writes_its_page(tmp_path, capsys, argv, printed, page_holds):
    status = main(["reproduce", *argv, "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert printed in out and status == (1 if "\nFAILED: " in out else 0), out
    page = (tmp_path / f"{argv[0].replace('-', '_')}.html").read_text()
    assert page_holds in page and "data:image/png;base64" in page
