"""``sgbench reproduce`` (``bench/cli/reproduce.py``), the reproductions' registry and outcome
(``bench/reproduce/_registry.py``, ``outcome.py``); SMILE's reproductions are tested in ``tests/test_smile_table1.py``
and ``tests/test_smile_gmm.py``."""

from __future__ import annotations

import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _registry
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, WITHIN_NOISE, Claim
from sgbench.bench.reproduce.outcome import Outcome, verdict


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


def test_an_outcome_states_claims_and_its_page_is_coloured_by_them(tmp_path):
    table = pd.DataFrame({"cell": ["a"], "ours": [1.0]})
    with pytest.raises(ValueError, match="demo-table: a reproduction states the paper's claims"):
        Outcome("demo-table", "Demo", table, claims=())
    held = Claim("holds", "sec. 1", HELD, error_rate=0.05)
    pages = {}
    for name, claims in (("held", (held,)), ("open", (held, Claim("close", "sec. 2", WITHIN_NOISE, error_rate=0.05))),
                         ("failed", (held, Claim("claim", "sec. 3", CONTRADICTED, reason="why", error_rate=0.05)))):
        outcome = Outcome("demo-table", "Demo", table, claims=claims)
        assert outcome.failed is (name == "failed")
        pages[name] = outcome.write_page(tmp_path / name).read_text()
    assert 'class="headline passed"' in pages["held"] and 'class="headline failed"' in pages["failed"]
    assert 'class="headline"' in pages["open"] and "1 held, 0 contradicted, 1 within noise" in pages["open"]
