"""MILE's classification benchmark (``bench/reproduce/mile_classification.py``): the paper's claims about MILE
against the DE and about ensembling, tested at every data set by paired t-tests over the splits, the others not
testable; the outcome rendered from the record alone; at a tiny scale, the command runs end to end."""

from __future__ import annotations

import pandas as pd
import pytest

from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, mile_classification as mc
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, NOT_TESTABLE, WITHIN_NOISE

BASE = {"accuracy": 0.9, "lppd": -0.3, "ece": 0.05}


def _frame(gains, single=0.1, noise=0.01):
    """Rows of 3 splits per data set of ``gains``: the DE at ``BASE``; MILE better by ``gains[data set][metric]`` (in
    the metric's good direction) plus -``noise``, 0, +``noise`` at the 3 splits (paired differences of mean
    ``gain``, sd ``noise``, t = sqrt(3) gain / noise); each single member or chain worse than its ensemble by
    ``single`` plus the same spread; in ``one_split``'s order of the methods."""
    rows = []
    for dataset, gain in gains.items():
        for split in range(3):
            mile = {m: v + mc.SIGNS[m] * (gain[m] + noise * (split - 1)) for m, v in BASE.items()}
            for method, values in (("de", BASE), ("mile", mile)):
                worse = {m: v - mc.SIGNS[m] * (single + noise * (split - 1)) for m, v in values.items()}
                rows.append({"data set": dataset, "split": split, "method": f"{method}_single", **worse})
                rows.append({"data set": dataset, "split": split, "method": method, **values})
    return pd.DataFrame(rows)


ENSEMBLING = ("Additionally, we report the average performance of a single DE member and individual MCMC chain, which "
              "highlights the additional benefits of ensembling")
ACCURACY = "The results, presented in Table 2, ... confirm the accuracy ... improvements over the DE baseline"
UQ = "The results, presented in Table 2, ... confirm the ... UQ improvements over the DE baseline"
SUPERIOR = "... and clearly superior performance to the DE baseline"
BETTER = {"accuracy": 0.05, "lppd": 0.2, "ece": 0.01}
SMALL = {"accuracy": 0.005, "lppd": 0.005, "ece": 0.005}
WORSE = {"accuracy": -0.05, "lppd": -0.2, "ece": -0.01}


def _by_words(claims):
    """The tested claims' verdicts by their words."""
    return {c.words: c.verdict for c in claims if c.verdict != NOT_TESTABLE}


def test_claims_against_the_de_and_single_members_are_tested_at_every_data_set():
    claims = mc.claims(_frame({"breast_cancer": BETTER, "digits": BETTER}))
    assert _by_words(claims) == {ENSEMBLING: HELD, ACCURACY: HELD, UQ: HELD, SUPERIOR: HELD}
    assert "breast_cancer accuracy: MILE's gain over the DE +0.05" in claims[2].ours and "digits accuracy" in \
        claims[2].ours
    # 4 settings (2 data sets x DE and MILE): critical 2.24; t = sqrt(3) 0.1 / 0.01 = 17 is beyond it
    assert "critical |z| = 2.24" in claims[1].reason and claims[1].ours.count("the ensemble's gain") == 4
    assert "digits DE LPPD: the ensemble's gain" in claims[1].ours and "digits MILE LPPD" in claims[1].ours
    assert "critical |z| = 2.24" in claims[7].reason  # accuracy and LPPD at 2 data sets
    assert claims[2].paper == "accuracy: MILE above DE on 1 of the 2 data sets of Table 4"
    assert claims[1].paper == ("LPPD: DE above single DNN on 2 of the 2 data sets of Table 4; LPPD: MILE above "
                               "single chain (MILE) on 2 of the 2 data sets of Table 4")
    # MILE worse than the DE on breast cancer beyond the noise contradicts "improvements" there; a gain of 0.005 at
    # a noise of 0.01 (t = 0.87) is inside it
    claims = mc.claims(_frame({"breast_cancer": WORSE, "digits": SMALL}))
    assert _by_words(claims) == {ENSEMBLING: HELD, ACCURACY: CONTRADICTED, UQ: CONTRADICTED, SUPERIOR: CONTRADICTED}
    assert "reversed beyond the noise at breast_cancer accuracy" in claims[2].reason
    claims = mc.claims(_frame({"breast_cancer": BETTER, "digits": SMALL}, single=-0.1))
    assert _by_words(claims) == {ENSEMBLING: CONTRADICTED, ACCURACY: WITHIN_NOISE, UQ: WITHIN_NOISE,
                                 SUPERIOR: WITHIN_NOISE}
    assert "the ECE" in claims[3].reason  # ECE is reported, not claimed: moving it alone changes no verdict
    frame = _frame({"breast_cancer": {**BETTER, "ece": -1.0}, "digits": BETTER})
    assert _by_words(mc.claims(frame)) == {ENSEMBLING: HELD, ACCURACY: HELD, UQ: HELD, SUPERIOR: HELD}


def test_claims_about_bde_larger_models_and_the_papers_cells_are_not_testable():
    untested = [c for c in mc.claims(_frame({"digits": BETTER})) if c.verdict == NOT_TESTABLE]
    assert len(untested) == 5 and all(c.reason for c in untested)
    assert sum("BDE (NUTS chains started from the deep ensemble) is not run" in c.reason for c in untested) == 3
    assert "CNNs and attention networks" in untested[1].reason
    assert "Ionosphere, Income" in untested[-1].reason


def test_the_predictive_metrics_of_ensembles_and_single_members():
    from sgbench import targets

    target = targets.get("bnn", task="classification", noise="none", dataset="breast_cancer")
    x = target.initial_position()
    ensemble, single = mc.predictive_metrics(target, [[x], [x]])  # two identical members: the same as one
    assert ensemble == pytest.approx(single) and 0.0 <= ensemble["accuracy"] <= 1.0 and ensemble["lppd"] < 0


def test_the_outcome_is_rendered_from_the_record_alone(tmp_path, monkeypatch):
    frame = _frame({"breast_cancer": BETTER, "digits": SMALL})

    def fake_split(dataset, split, phases, sampling, seed, path=None):
        rows = frame[(frame["data set"] == dataset) & (frame["split"] == split)]
        return [{**row, "nan chains": 0, "seconds": 1.0, "commit": "abc"} for row in rows.to_dict("records")]

    monkeypatch.setattr(mc, "one_split", fake_split)
    db = tmp_path / "results.sqlite"
    first = mc.run("quick", {}, db, tmp_path, progress=False)
    assert (tmp_path / "mile_classification_runs.jsonl").exists()
    monkeypatch.setattr(mc, "one_split", None)  # nothing may be computed now
    with _record.recorded_only():
        again = mc.run("quick", {}, db, tmp_path, progress=False)
        with pytest.raises(_record.NotRecorded):
            mc.run("quick", {"splits": 4}, db, tmp_path, progress=False)
    assert again.table.equals(first.table) and again.claims == first.claims
    assert first.sections[0][1][:8] == b"\x89PNG\r\n\x1a\n"  # the hold-out metrics' bars
    assert again.sections[1][1].equals(first.sections[1][1])  # the per-split table
    assert list(first.table["method"][:4]) == list(mc.METHODS.values())


@pytest.mark.integration
def test_the_command_runs_end_to_end(tmp_path, capsys, monkeypatch):
    """Both data sets, 2 splits, a tiny budget, through the command (about a minute on 2 cores)."""
    monkeypatch.setitem(mc.SCALES, "quick", {"phases": (60, 10, 10), "sampling": 40, "splits": 2})
    status = main(["reproduce", "mile-classification", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
                   "--no-progress"])
    out = capsys.readouterr().out
    assert UQ in out and status == (1 if "CONTRADICTED" in out else 0), out
    page = (tmp_path / "mile_classification.html").read_text()
    assert "Table 4 (its data sets, for reference)" in page and "digits" in page
    assert page.count("data:image/png;base64") == 1  # the hold-out metrics' bars


def _classes_file(tmp_path, labels):
    """A small .csv of 3 features and the given labels (column y)."""
    path = tmp_path / "classes.csv"
    rows = [{"x0": k % 7, "x1": (k * 3) % 5, "x2": k / len(labels), "y": y} for k, y in enumerate(labels)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("labels, message", [
    (None, "--dataset-file: data file '/nonexistent/classes.csv' does not exist"),
    ([0.5, 1.5] * 30, "--dataset-file: "),  # labels that are not classes
])
def test_a_bad_dataset_file_is_refused_in_one_line(tmp_path, capsys, labels, message):
    path = "/nonexistent/classes.csv" if labels is None else str(_classes_file(tmp_path, labels))
    assert main(["reproduce", "mile-classification", "--dataset-file", path, "--out", str(tmp_path), "--db",
                 str(tmp_path / "r.sqlite"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert labels is None or "task='classification'" in err[0], err


@pytest.mark.integration
def test_a_users_file_runs_through_the_command(tmp_path, capsys, monkeypatch):
    """A generated 2-class file of 120 rows through the command at a tiny budget, 2 splits."""
    path = _classes_file(tmp_path, [k % 2 for k in range(120)])
    monkeypatch.setitem(mc.SCALES, "quick", {"phases": (60, 10, 10), "sampling": 40, "splits": 2})
    status = main(["reproduce", "mile-classification", "--dataset-file", str(path), "--out", str(tmp_path), "--db",
                   str(tmp_path / "r.sqlite"), "--no-progress"])
    out = capsys.readouterr().out
    assert UQ in out and status == (1 if "CONTRADICTED" in out else 0) and "file accuracy:" in out, out
    assert str(path) in (tmp_path / "mile_classification.html").read_text()
