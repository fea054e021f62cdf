"""Reports: the terminal table and the HTML page (table, embedded PNG, notes, provenance),
with a diverged grid point reported rather than dropped."""

import base64
import re

import numpy as np
import pandas as pd
import pytest

import bench
from bench.sweeps.report import B2, format_table, no_truth_note, write_report
from bench.sweeps.store import ResultsStore


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two healthy step sizes and one far beyond SGLD's stability limit (every chain diverges)."""
    path = tmp_path_factory.mktemp("report") / "results.sqlite"
    results = bench.run_grid("sgld", "icg", params_grid=[{"step_size": h} for h in (1e-3, 1e-2, 0.5)],
                             num_chains=2, num_steps=1000, dtype="float32", block_size=500,
                             target_params={"dim": 10, "noise": "isotropic", "noise_variance": 256.0})
    assert results[-1].metrics["num_diverged_chains"] == 2
    with ResultsStore(path) as store:
        for result in results:
            store.add(result, suite="test")
        yield store


def test_format_table_lists_every_run_and_marks_divergence(store):
    text = format_table(store.to_frame())
    lines = text.splitlines()
    assert "step size" in lines[1] and "b² mean" in lines[1]
    assert len(lines) == 2 + 3
    assert "diverged" in lines[-1] and "2/2" in lines[-1]
    assert "0/2" in lines[2] and "±" in lines[2]
    assert "noise_variance=256" in lines[0]


def test_report_is_an_html_page_with_table_png_and_provenance(store, tmp_path):
    path = write_report(store, tmp_path / "out")
    assert path == tmp_path / "out" / "index.html"
    page = path.read_text(encoding="utf-8")
    assert "<table" in page and page.count("<tr") == 1 + 3
    png = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert png and base64.b64decode(png.group(1)).startswith(b"\x89PNG")
    assert "How to read this" in page and "Hoffman" in page and "bootstrap" in page
    frame = store.to_frame()
    assert frame["git_commit"].iloc[0] in page and "jax backend" in page and "numpy" in page


def test_report_from_a_frame_and_from_an_empty_store(store, tmp_path):
    frame = store.to_frame()
    assert "<table" in write_report(frame[frame["param_step_size"] < 0.1], tmp_path / "a").read_text()
    with ResultsStore(tmp_path / "empty.sqlite") as empty:
        assert "No runs" in write_report(empty, tmp_path / "b").read_text()
    assert format_table(frame.iloc[:0]) == "(no runs)"
    with pytest.raises(TypeError, match="store_or_frame"):
        write_report("results.sqlite", tmp_path / "c")


def test_a_target_without_truth_is_said_in_words():
    """b² is missing because the target has no truth (not because every chain diverged): the note names it."""
    frame = pd.DataFrame({"target": ["bnn", "icg", "icg"], "num_chains": [2, 2, 2],
                          "num_diverged_chains": [0, 2, 0], B2: [np.nan, np.nan, 0.1]})
    note = no_truth_note(frame)
    assert note.startswith("no known truth for target bnn ") and "sgbench reference build" in note
    assert no_truth_note(frame.iloc[1:]) == ""  # icg: one run diverged, one has its b²
    assert no_truth_note(frame.drop(columns=B2).iloc[:1]) == no_truth_note(frame.iloc[:1])  # no b² column at all
