"""The SMILE paper's Table 2 (``bench/reproduce/smile_table2.py``): the budgets (batch-wise: MILE's steps;
epoch-wise: as many epochs), ``--data NAME=PATH`` and its refusals, the claims tested by paired t-tests over the
splits on constructed rows (held, contradicted, within noise), the paper's cells beside ours on a paper data set, and
at a tiny scale the command end to end on a user's file named after a paper data set."""

from __future__ import annotations

import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import smile_table2
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE
from sgbench.bench.reproduce.smile_table2 import BATCH, EPOCH, FULL
from sgbench.targets.datasets import bundled

BOTH_NAIVE = "... both SMILE-naive and pSMILE-naive consistently"
PRECONDITIONING = "Critically, pSMILE-naive markedly improves upon SMILE-naive"
MATCHING = "Under this condition, pSMILE-naive closes the remaining performance gap entirely"
MITIGATING = "... it demonstrates that with proper preconditioning"


def _file(tmp_path, rows: int = 120):
    """A regression file of ``rows`` rows of Friedman #1 (label column y)."""
    features, labels = bundled("friedman1")
    path = tmp_path / "energy.csv"
    pd.DataFrame(features[:rows], columns=[f"x{i}" for i in range(10)]).assign(y=labels[:rows]).to_csv(
        path, index=False)
    return path


def test_batch_wise_runs_take_miles_steps_and_epoch_wise_as_many_epochs():
    phases, sampling = (40_000, 5000, 5000), 10_000
    assert smile_table2.schedule("smile_naive", BATCH, phases, sampling, 1052) == {
        "burnin": 50_000, "steps": 10_000, "thin": 10}
    # airfoil's 70 % training split (1052 rows) is 5 minibatches of 256: five times the steps, a draw every 10 epochs
    assert smile_table2.batches_per_epoch(1052) == 5
    assert smile_table2.schedule("smile_naive", EPOCH, phases, sampling, 1052) == {
        "burnin": 250_000, "steps": 50_000, "thin": 50}
    assert smile_table2.batches_per_epoch(100) == 1  # fewer data than a minibatch: every step is a pass
    assert smile_table2.sampler_params("sghmc_sa", 1234) == {"step_size": 1e-3, "burn_in_steps": 1234}


def test_data_entries_are_parsed_and_bad_ones_refused(tmp_path):
    assert smile_table2.parse_data(None) == {"diabetes": None, "friedman1": None}
    path = _file(tmp_path)
    assert smile_table2.parse_data([f"Energy={path}"]) == {"energy": str(path)}
    missing = ("energy=/nonexistent/e.csv", "--data energy: data file '/nonexistent/e.csv' does not exist")
    for entry, message in ((f"{path}", "--data must be NAME=PATH"), ("a b=x.csv", "--data must be NAME=PATH"),
                           ("energy=", "--data must be NAME=PATH"), missing):
        with pytest.raises((ValueError, OSError), match=message):
            smile_table2.parse_data([entry])
    with pytest.raises(ValueError, match="names 'ENERGY' twice"):
        smile_table2.parse_data([f"energy={path}", f"ENERGY={path}"])


def _frame(levels: dict, noise: float = 0.01, datasets=("d1", "d2")) -> pd.DataFrame:
    """Rows of 3 splits per data set: each (method, budget) of ``levels`` at its (LPPD, RMSE), plus -``noise``, 0,
    +``noise`` times a per-method factor at the 3 splits in LPPD, a tenth of it in RMSE (so paired differences have
    a known spread)."""
    rows = []
    for dataset in datasets:
        for split in range(3):
            for k, ((method, budget), (lppd, rmse)) in enumerate(levels.items()):
                shift = noise * (split - 1) * (1 + k % 3)
                rows.append({"data set": dataset, "split": split, "method": method, "budget": budget,
                             "lppd": lppd + shift, "rmse": rmse - shift / 10, "calibration": 0.05, "nan chains": 0,
                             "seconds": 1.0, "steps": 100.0, "gradient evaluations": 300.0, "passes": 200.0,
                             "final step size": 1e-3})
    return pd.DataFrame(rows)


def _levels(sghmc, naive, pnaive, mile, epoch_sghmc=None, epoch_pnaive=None):
    """(LPPD, RMSE) of every method of the table; RMSE falls as LPPD rises."""
    def pair(lppd):
        return lppd, 0.5 - 0.1 * lppd
    epoch_sghmc = sghmc if epoch_sghmc is None else epoch_sghmc
    epoch_pnaive = pnaive if epoch_pnaive is None else epoch_pnaive
    return {("de", FULL): pair(sghmc), ("mile", FULL): pair(mile),
            ("sghmc_sa", BATCH): pair(sghmc), ("smile_naive", BATCH): pair(naive),
            ("psmile_naive", BATCH): pair(pnaive), ("smile", BATCH): pair(naive), ("psmile", BATCH): pair(naive),
            ("sghmc_sa", EPOCH): pair(epoch_sghmc), ("smile_naive", EPOCH): pair(naive),
            ("psmile_naive", EPOCH): pair(epoch_pnaive), ("smile", EPOCH): pair(naive),
            ("psmile", EPOCH): pair(naive)}


def _verdicts(frame):
    claims = smile_table2.claims(frame)
    return {c.words: c.verdict for c in claims if c.verdict != NOT_TESTABLE}


def _verdict(verdicts, start):
    return next(v for words, v in verdicts.items() if words.startswith(start))


def test_the_papers_ordering_holds_when_every_difference_is_beyond_the_noise():
    # the paper's pattern: SGHMC < SMILE-naive < pSMILE-naive < MILE batch-wise, pSMILE-naive epoch-wise above MILE
    verdicts = _verdicts(_frame(_levels(sghmc=-0.2, naive=0.3, pnaive=0.5, mile=0.7, epoch_pnaive=0.9)))
    assert _verdict(verdicts, BOTH_NAIVE) == HELD
    assert _verdict(verdicts, PRECONDITIONING) == HELD
    assert _verdict(verdicts, MATCHING) == HELD
    assert _verdict(verdicts, MITIGATING) == HELD


def test_a_naive_variant_worse_than_sghmc_contradicts_and_a_tie_is_within_noise():
    verdicts = _verdicts(_frame(_levels(sghmc=0.3, naive=-0.2, pnaive=0.5, mile=0.7)))
    assert _verdict(verdicts, BOTH_NAIVE) == CONTRADICTED
    tie = _verdicts(_frame(_levels(sghmc=0.3, naive=0.3, pnaive=0.3, mile=0.3), noise=0.05))
    assert {_verdict(tie, start) for start in (BOTH_NAIVE, PRECONDITIONING, MATCHING, MITIGATING)} == {
        WITHIN_NOISE}


def test_mile_beyond_the_noise_contradicts_the_matching_and_less_than_half_the_gap_the_mitigating():
    # epoch-wise pSMILE-naive at 0.1 between SGHMC's -0.2 and MILE's 0.7: a third of the gap closed
    verdicts = _verdicts(_frame(_levels(sghmc=-0.2, naive=0.3, pnaive=0.5, mile=0.7, epoch_pnaive=0.1)))
    assert _verdict(verdicts, MATCHING) == CONTRADICTED
    assert _verdict(verdicts, MITIGATING) == CONTRADICTED


def test_a_run_whose_chains_all_failed_counts_against_its_method():
    # pSMILE-naive ahead of everything, but every chain of its batch-wise run on d1 split 0 diverged (no value)
    frame = _frame(_levels(sghmc=-0.2, naive=0.3, pnaive=0.5, mile=0.7, epoch_pnaive=0.9))
    failed = (frame["data set"] == "d1") & (frame["split"] == 0) & (frame["method"] == "psmile_naive") & (
        frame["budget"] == BATCH)
    frame.loc[failed, ["lppd", "rmse"]] = float("nan")
    verdicts = _verdicts(frame)
    assert _verdict(verdicts, BOTH_NAIVE) == CONTRADICTED and _verdict(verdicts, PRECONDITIONING) == CONTRADICTED
    assert _verdict(verdicts, MATCHING) == HELD  # its epoch-wise runs did not fail
    # SGHMC failing where the naive variants ran is no evidence against the claim
    frame = _frame(_levels(sghmc=-0.2, naive=0.3, pnaive=0.5, mile=0.7, epoch_pnaive=0.9))
    frame.loc[(frame["method"] == "sghmc_sa") & (frame["budget"] == BATCH), ["lppd", "rmse"]] = float("nan")
    assert _verdict(_verdicts(frame), BOTH_NAIVE) == HELD


def test_every_claim_names_its_place_and_the_untestable_ones_say_why():
    claims = smile_table2.claims(_frame(_levels(sghmc=-0.2, naive=0.3, pnaive=0.5, mile=0.7)))
    assert len(claims) == 8 and all(c.where for c in claims)
    untested = [c for c in claims if c.verdict == NOT_TESTABLE]
    assert len(untested) == 4 and all(len(c.reason) > 40 for c in untested)
    budget = next(c for c in untested if c.words.startswith("This provides"))
    assert "MILE 300" in budget.reason and "SMILE-naive 300" in budget.reason  # the counts of the frame


def test_a_paper_data_set_stands_beside_the_papers_cells():
    # ours at the paper's means on "energy" with a small spread: within; MILE's LPPD off by 1: differs
    levels = {key: (cells["energy"][0], cells["energy"][2]) for key, cells in smile_table2.PAPER_TABLE2.items()}
    levels[("mile", FULL)] = (levels[("mile", FULL)][0] - 1.0, levels[("mile", FULL)][1])
    levels[("de", FULL)] = (0.0, 0.5)
    frame = _frame(levels, noise=0.001, datasets=("energy",))
    shown = smile_table2.display(smile_table2.summary(frame)).set_index(["budget", "method"])
    assert shown.loc[(FULL, "MILE"), "LPPD verdict"] == "differs"
    assert shown.loc[(FULL, "MILE"), "RMSE verdict"] == "within"
    assert shown.loc[(EPOCH, "pSMILE-naive"), "paper LPPD"] == "2.018 ± 0.060"
    assert (shown.loc[(BATCH, "SMILE-naive"), ["LPPD verdict", "RMSE verdict"]] == "within").all()
    assert shown.loc[(FULL, "DE (start)"), "LPPD verdict"] == "no paper value"


@pytest.mark.parametrize("argv, message", [
    (["--splits", "0"], "--splits must be an integer >= 1"),
    (["--data", "energy"], "--data must be NAME=PATH"),
    (["--data", "energy=/nonexistent/energy.csv"], "/nonexistent/energy.csv"),
    (["--jobs", "0"], "--jobs must be an integer >= 1"),
    (["--jobs", "2", "--executor", "dask"], "--jobs shares the runs between local processes"),
])
def test_bad_requests_exit_2(tmp_path, capsys, argv, message):
    assert main(["reproduce", "smile-table2", *argv, "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.integration
def test_a_file_named_after_a_paper_data_set_runs_through_the_command(tmp_path, capsys, monkeypatch):
    """120 rows named "energy" at a tiny budget, 2 splits: every method and budget runs, the paper's energy cells
    stand beside ours, and a rerun takes every unit from the record."""
    path = _file(tmp_path)
    monkeypatch.setitem(smile_table2.SCALES, "quick", {"phases": (40, 10, 10), "sampling": 20, "splits": 1})
    argv = ["reproduce", "smile-table2", "--data", f"energy={path}", "--splits", "2", "--out", str(tmp_path),
            "--db", str(tmp_path / "r.sqlite"), "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert status == (1 if "CONTRADICTED" in out else 0), out
    assert "“Critically, pSMILE-naive markedly improves upon SMILE-naive”" in out
    page = (tmp_path / "smile_table2.html").read_text()
    assert "2.018 ± 0.060" in page and "data:image/png;base64" in page and str(path) in page
    lines = (tmp_path / "smile_table2_runs.jsonl").read_text().splitlines()
    assert len(lines) == 2 * 12
    assert main(argv) == status  # the rerun computes nothing: the record is as it was
    assert (tmp_path / "smile_table2_runs.jsonl").read_text().splitlines() == lines
