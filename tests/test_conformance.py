"""``sgbench conformance`` (``sgbench.bench.conformance.conformance``): every adapter declares two or more settings; a
task's rows carry the verdict, the biases with intervals, the detectable bias and the speed beside the suite's;
the record resumes; the page and the JSON are written; bad input exits 2. The whole quick scale (every adapter's
first setting, through the CLI) is an ``integration`` test."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from sgbench.bench.cli import main
from sgbench.bench.conformance import conformance, page as conformance_page
from sgbench.bench.conformance.conformance import SCALES, Task

TINY = dataclasses.replace(SCALES["quick"], name="tiny", chains={"jax": 16, "batched": 16, "numpy": 2},
                           steps={"jax": 100, "batched": 100, "numpy": 20})


def test_every_adapter_declares_two_or_more_settings():
    todo, not_run = conformance.tasks(("blackjax",), SCALES["default"])
    assert not not_run
    per_adapter = {}
    for task in todo:
        per_adapter[task.spec] = per_adapter.get(task.spec, 0) + 1
    assert set(per_adapter) == {"blackjax:sgld", "blackjax:sghmc", "blackjax:sgnht", "blackjax:mclmc",
                                   "blackjax:csgld"}
    assert min(per_adapter.values()) >= 2
    quick, _ = conformance.tasks(("blackjax",), SCALES["quick"])
    assert [t.setting for t in quick] == [0] * len(per_adapter)
    everything, not_run = conformance.tasks(tuple(conformance.LIBRARIES), SCALES["default"])
    assert not not_run
    counts = {}
    for task in everything:
        counts[task.spec] = counts.get(task.spec, 0) + 1
    assert len({spec.split(":")[0] for spec in counts}) == 3 and min(counts.values()) >= 2, counts


def test_a_task_resumes_from_its_record_and_writes_the_page(tmp_path, monkeypatch):
    monkeypatch.setitem(SCALES, "tiny", TINY)
    monkeypatch.setattr(conformance, "tasks", lambda libraries, scale: ([Task("blackjax", "blackjax:sgld", 1)], {}))
    record, lines = tmp_path / "records.jsonl", []
    rows, not_run = conformance.conformance(("blackjax",), "tiny", record=record, progress=lines.append)
    assert len(rows) == 1 and not not_run
    row = rows[0]
    assert row["adapter"] == "blackjax:sgld" and row["setting"] == "T = 0.5, h = 0.01" and row["target"] == "icg"
    assert row["outcome"] in ("PASSED", "FAILED", "INCONCLUSIVE") and row["version"] == "1.7.1"
    assert row["r_reference_low"] <= row["r_reference"] <= row["r_reference_high"]
    assert row["r_truth_low"] <= row["r_truth"] <= row["r_truth_high"]
    assert row["detectable"] > 0 and row["suite"] == "suite sgld"
    assert row["grad_evals_per_s"] > 0 and row["suite_grad_evals_per_s"] > 0
    assert math.isclose(row["chain_steps_per_s"], row["grad_evals_per_s"])  # one gradient per step
    assert "1 tasks, 0 already" in lines[0] and lines[1].startswith("[1/1] blackjax:sgld")
    again = []
    assert conformance.conformance(("blackjax",), "tiny", record=record, progress=again.append)[0] == rows
    assert again == [f"conformance (tiny): 1 tasks, 1 already in {record}"]  # nothing rerun
    json_path, page = conformance_page.write(rows, {"sgmcmcjax": "not installed"}, "tiny", 0, tmp_path)
    written = json.loads(json_path.read_text())
    assert written["versions"]["blackjax"] == "1.7.1" and written["rows"][0]["adapter"] == "blackjax:sgld"
    assert written["not_run"] == {"sgmcmcjax": "not installed"}
    html = page.read_text()
    assert "blackjax 1.7.1" in html and "not run: not installed" in html and "data:image/png" in html


@pytest.mark.parametrize("argv, message", [
    (["--library", "nope"], "--library"),
    (["--scale", "huge"], "--scale"),
    (["--seed", "-1"], "--seed"),
    (["--record", "missing/records.jsonl"], "--record: the folder"),
])
def test_bad_input_exits_2_naming_the_option(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --record is looked up here
    assert main(["conformance", *argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.integration
def test_quick_scale_runs_every_adapter(tmp_path, capsys):
    record = tmp_path / "records.jsonl"
    assert main(["conformance", "--scale", "quick", "--out", str(tmp_path), "--record", str(record)]) == 0
    written = json.loads((tmp_path / "conformance.json").read_text())
    adapters = {row["adapter"] for row in written["rows"]}
    assert {"blackjax:sgld", "blackjax:sghmc", "blackjax:sgnht", "blackjax:mclmc"} <= adapters
    assert all(row["outcome"] in ("PASSED", "FAILED", "INCONCLUSIVE") for row in written["rows"])


def test_tasks_run_as_dask_tasks_and_record_as_in_one_process(tmp_path, monkeypatch):
    """The same two tasks on a LocalCluster of one worker: the rows come back to this process, which alone writes
    the record; a second run resumes from it."""
    from sgbench.bench.sweeps import dask_tasks

    pytest.importorskip("distributed")
    monkeypatch.setitem(SCALES, "tiny", TINY)
    two = [Task("blackjax", "blackjax:sgld", 0), Task("blackjax", "blackjax:sgld", 1)]
    monkeypatch.setattr(conformance, "tasks", lambda libraries, scale: (two, {}))
    record, lines = tmp_path / "records.jsonl", []
    client = dask_tasks.client_for(workers=1)
    with client.cluster, client:
        rows, _ = conformance.conformance(("blackjax",), "tiny", record=record, client=client, progress=lines.append)
    assert [row["setting"] for row in rows] == ["h = 0.02", "T = 0.5, h = 0.01"]  # in task order
    assert len(record.read_text().splitlines()) == 2 and len(lines) == 3
    again = []
    assert conformance.conformance(("blackjax",), "tiny", record=record, progress=again.append)[0] == rows
    assert again == [f"conformance (tiny): 2 tasks, 2 already in {record}"]


def test_an_interval_is_written_in_few_digits_whatever_its_size():
    """A weighted estimate over the few chains left after most diverged can be astronomically large: the page
    writes it in three significant digits, not as a row of digits wider than the table."""
    row = {"r_truth": 1.04e93, "r_truth_low": -4.26e92, "r_truth_high": 6.3e93}
    assert conformance_page._interval_text(row, "r_truth") == "+1.04e+93 [-4.26e+92, +6.3e+93]"
    assert conformance_page._interval_text({"r": 0.0361, "r_low": -0.004, "r_high": 0.077}, "r") == (
        "+0.036 [-0.004, +0.077]")
    assert conformance_page._interval_text({"r": float("nan"), "r_low": 0.0, "r_high": 0.0}, "r") == ""


def test_the_figure_names_an_interval_too_wide_to_draw(monkeypatch):
    """An r of 1e93 is named under the axis and left out, so that the other rows keep their scale."""
    labels = []
    from sgbench.base import figures

    real = figures.png_bytes
    monkeypatch.setattr(figures, "png_bytes", lambda fig: labels.append(fig.axes[0].get_xlabel()) or real(fig))
    rows = [{"adapter": "a", "setting": "s", "target": "icg", "outcome": "PASSED", "r_truth": 0.02,
             "r_truth_low": -0.03, "r_truth_high": 0.07},
            {"adapter": "b", "setting": "s", "target": "icg", "outcome": "FAILED", "r_truth": 1.04e93,
             "r_truth_low": -4.3e92, "r_truth_high": 6.3e93}]
    assert conformance_page.figure(rows, "lib")[:4] == b"\x89PNG"
    assert "not drawn, beyond ±100: b · s · icg (r 1.04e+93)" in labels[0]
