"""The page writer (sgbench.bench.html): the error-bar figure puts each point on its own cell's row, whatever
order each series lists its cells in; vector cells are shortened and text wraps so a table fits the
page; a value and its standard error are rounded to the precision the error allows; a legend says in
words what a table's columns are. Deterministic, no browser."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from markupsafe import Markup

from sgbench.bench.html import figures, table, write_page
from sgbench.bench.html.cells import breakable, error_text, vector_text
from sgbench.bench.html.precision import value_with_error

NB = "\u00a0"  # the no-break space of "value ± se" and "… (N values)" in a table


@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib figure of each ``error_bar_figure`` call (its PNG is not written)."""
    kept = []
    monkeypatch.setattr(figures, "png_bytes", lambda fig: kept.append(fig) or b"")
    return kept


def points(fig) -> dict[str, list[tuple[float, float]]]:
    """``{series label: [(x, y) of each point]}`` of an error-bar figure (its errorbar containers, in order)."""
    ax = fig.axes[0]
    colour_label = {c.lines[0].get_color(): c.get_label() for c in ax.containers if not c.get_label().startswith("_")}
    found = {}
    for container in ax.containers:
        line = container.lines[0]
        found.setdefault(colour_label[line.get_color()], []).extend(zip(line.get_xdata(), line.get_ydata()))
    return found


def test_error_bars_sit_on_the_row_of_their_own_cell(drawn):
    """The reference lists its cells in another order than the candidate and lacks linreg."""
    series = {"candidate": (["icg", "linreg", "gmm"], [np.array([1.0, 2.0]), np.array([3.0]), np.array([4.0, 5.0])],
                            [np.full(2, 0.1), np.full(1, 0.1), np.full(2, 0.1)]),
              "reference": (["gmm", "icg"], [np.array([40.0, 50.0]), np.array([10.0, 20.0])],
                            [np.full(2, 0.1), np.full(2, 0.1)])}
    assert figures.error_bar_figure(series, "t") == b""
    (fig,) = drawn
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["icg", "linreg", "gmm"]
    found = points(fig)
    row = {x: round(y) for label in found for x, y in found[label]}  # offsets within a row are ±0.25
    assert row == {1.0: 0, 2.0: 0, 3.0: 1, 4.0: 2, 5.0: 2, 10.0: 0, 20.0: 0, 40.0: 2, 50.0: 2}
    assert {round(y) for _, y in found["reference"]} == {0, 2}  # no point on linreg's row
    assert ax.get_legend_handles_labels()[1] == ["candidate", "reference"]  # each named once
    assert ax.get_xlabel() == figures.ERROR_XLABEL


def test_the_rows_are_the_union_of_names_in_order_of_first_appearance(drawn):
    series = {"a": (["x"], [0.1], [0.01]), "b": (["y", "x", "z"], [0.2, 0.3, 0.4], [0.01, 0.01, 0.01])}
    figures.error_bar_figure(series, "t", xlabel="relative error at T = 0.5")
    (fig,) = drawn
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y", "z"]
    assert ax.get_xlabel() == "relative error at T = 0.5"
    assert {x: round(y) for x, y in points(fig)["b"]} == {0.2: 1, 0.3: 0, 0.4: 2}


def test_a_series_without_one_mean_per_name_is_refused():
    with pytest.raises(ValueError, match="'a' has 2 cell names, 1 means"):
        figures.error_bar_figure({"a": (["x", "y"], [0.1], [0.01, 0.02])}, "t")


def test_the_figure_is_a_png():
    assert figures.error_bar_figure({"a": (["x"], [np.array([0.1, 0.2])], [np.array([0.01, 0.02])])},
                                    "t").startswith(b"\x89PNG")


@pytest.mark.parametrize("value, se, text", [
    (0.0123456, 0.0021, "0.012 ± 0.002"),
    (12345.6, 230.0, "12300 ± 200"),
    (0.0123456, 0.0096, "0.01 ± 0.01"),  # se rounds up to 0.01: one digit, the value to the same place
    (-0.04, 0.3, "0.0 ± 0.3"),  # no "-0.0"
    (3.14159, 1.0, "3 ± 1"),
    (1.23456e-7, 2.1e-9, "(1.23 ± 0.02)e-7"),
    (2.5e8, 3.3e6, "(2.50 ± 0.03)e8"),
    (9.96e-7, 1e-9, "(9.96 ± 0.01)e-7"),
    (-5e-5, 1.2e-6, "(-5.0 ± 0.1)e-5"),
    (0.5, np.nan, "0.5"),  # precision unknown: 4 significant digits
    (0.123456, None, "0.1235"),
    (0.123456, 0.0, "0.1235"),
    (np.float32(0.25), np.float64(0.05), "0.25 ± 0.05"),
    (np.nan, 0.1, ""),
    (np.inf, 0.1, "inf"),
])
def test_a_value_is_written_to_the_precision_of_its_standard_error(value, se, text):
    assert value_with_error(value, se) == text


def test_two_digits_of_the_standard_error_on_request():
    assert value_with_error(0.0123456, 0.0012, digits=2) == "0.0123 ± 0.0012"


def test_vector_cells_are_shortened_to_a_few_rounded_numbers_and_their_count():
    assert vector_text(np.array([0.0123456, 0.45678, 1.23456])) == "0.0123, 0.457, 1.23"
    assert vector_text(np.arange(10.0) / 3) == f"0, 0.333, 0.667, …{NB}(10{NB}values)"
    assert vector_text(np.ones((2, 3))) == f"1, 1, 1, …{NB}(6{NB}values)"
    assert vector_text([1, 2]) == "1, 2" and vector_text(("a", "b")) == "a, b" and vector_text([]) == ""
    assert error_text(np.array([0.0123, 0.31, 0.5, 0.7]), 0.002) == (
        f"0.012{NB}±{NB}0.002, 0.310{NB}±{NB}0.002, 0.500{NB}±{NB}0.002, …{NB}(4{NB}values)")
    assert error_text(0.0123456, 0.0021) == f"0.012{NB}±{NB}0.002"


def test_text_is_escaped_and_may_break_after_underscores_and_slashes():
    assert breakable("a_b/<c>") == Markup("a_<wbr>b/<wbr>&lt;c&gt;")
    assert breakable(Markup("<i>x_y</i>")) == Markup("<i>x_y</i>")  # trusted HTML as it is
    assert breakable("x " * 40).startswith('<span class="long">')  # a paragraph: a column wide enough to read


def test_a_wide_table_is_shortened_and_scrolls_in_its_box_as_a_last_resort():
    frame = pd.DataFrame({"per_coordinate_estimate": [np.linspace(0, 1, 50)], "count": [3],
                          "path": ["reports/latest/validate_<x>.html"], "ratio": [0.123456789], "gap": [np.nan]})
    html = table(frame)
    assert html.startswith('<div class="table">') and html.rstrip().endswith("</div>")
    assert f"0, 0.0204, 0.0408, …{NB}(50{NB}values)" in html and "0.5102" not in html
    assert "per_<wbr>coordinate_<wbr>estimate</th>" in html
    assert "reports/<wbr>latest/<wbr>validate_<wbr>&lt;x&gt;.html" in html
    assert "<td>0.1235</td>" in html and "<td>3</td>" in html and "<td></td>" in html  # as before
    assert table(frame.iloc[:0]) == Markup("<p>(none)</p>")


def test_trusted_cells_are_written_as_they_are():
    html = table(pd.DataFrame({"line": [Markup('<span class="wrap">a_b</span>')]}), classes="runs report",
                 escape_cells=False)
    assert '<span class="wrap">a_b</span>' in html and 'class="dataframe runs report"' in html


def test_value_and_standard_error_columns_merge_only_when_asked():
    frame = pd.DataFrame({"target": ["icg", "gmm"], "estimate": [0.0123456, 1.5], "standard_error": [0.0021, np.nan]})
    merged = table(frame, errors={"estimate": "standard_error"})
    assert f"<td>0.012{NB}±{NB}0.002</td>" in merged and "<td>1.5</td>" in merged
    assert "standard_<wbr>error" not in merged and merged.count("<th>") == 2
    plain = table(frame)
    assert "<td>0.01235</td>" in plain and "<td>0.0021</td>" in plain and "standard_<wbr>error</th>" in plain
    with pytest.raises(ValueError, match="errors names columns the table does not have: se"):
        table(frame, errors={"estimate": "se"})


def test_a_legend_in_words_under_the_table_in_column_order():
    frame = pd.DataFrame({"ksd": [0.1], "b2": [0.2], "target": ["icg"]})
    html = table(frame, legend={"target": "the target's name", "b2": "the second-moment bias <b²>",
                                "absent": "a column this table lacks"})
    legend = html[html.index("</table>"):]
    assert legend.count("<dt>") == 2 and "absent" not in legend
    assert re.search(r'<dl class="legend"><dt>b2</dt><dd>the second-moment bias &lt;b²&gt;</dd>'
                     r"<dt>target</dt><dd>the target&#39;s name</dd></dl>", legend)
    assert "<dl" not in table(frame)


def test_write_page_takes_a_legend_and_value_error_pairs_per_table(tmp_path):
    checks = pd.DataFrame({"name": ["mean"], "estimate": [0.0123456], "standard_error": [0.0021]})
    metrics = pd.DataFrame({"ksd": [0.5]})
    page = write_page(tmp_path / "v.html", "Validation", "PASSED", True, {"Checks": checks, "Metrics": metrics}, {},
                      legends={"Checks": {"estimate": "the estimate ± its standard error"}},
                      errors={"Checks": {"estimate": "standard_error"}}).read_text(encoding="utf-8")
    assert f"0.012{NB}±{NB}0.002" in page and page.count('<dl class="legend">') == 1
    assert "<dd>the estimate ± its standard error</dd>" in page
    plain = write_page(tmp_path / "p.html", "Validation", "PASSED", True, {"Checks": checks}, {}).read_text()
    assert "<dl" not in plain and "0.01235" in plain
    with pytest.raises(ValueError, match="name tables the page does not have: Chekcs"):
        write_page(tmp_path / "x.html", "V", "", True, {"Checks": checks}, {}, legends={"Chekcs": {}})
