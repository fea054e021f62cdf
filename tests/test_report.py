"""Reports: the headline (best step size and its b² ± bootstrap std), the terminal table (at most
120 columns) and the HTML page (what was run, table, plots with y axes fitted to the points,
provenance), with a diverged grid point reported rather than dropped and settings shown only
where they vary and apply."""

import base64
import json
import re

import numpy as np
import pandas as pd
import pytest

from sgbench.bench.running import run as running
from sgbench.bench.sweeps.report import (
    B2,
    B2_STD,
    TERMINAL_WIDTH,
    b2_figure,
    best_table,
    display_frame,
    format_table,
    group_settings,
    headline,
    no_truth_note,
    run_summary,
    running_b2_figure,
    shared_settings,
    write_report,
)
from sgbench.bench.sweeps.store import ResultsStore


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two healthy step sizes and one far beyond SGLD's stability limit (every chain diverges)."""
    path = tmp_path_factory.mktemp("report") / "results.sqlite"
    results = running.run_grid("sgld", "icg", params_grid=[{"step_size": h} for h in (1e-3, 1e-2, 0.5)],
                               num_chains=2, num_steps=1000, dtype="float32", block_size=500,
                               target_params={"dim": 10, "noise": "isotropic", "noise_variance": 256.0})
    assert results[-1].metrics["num_diverged_chains"] == 2
    with ResultsStore(path) as store:
        for result in results:
            store.add(result, suite="test")
        yield store


def _runs(*lines) -> pd.DataFrame:
    """A results frame as ``ResultsStore.to_frame`` makes it: one row per (line, step size, b², std,
    diverged chains); a line is (sampler, target, {param or target_ column: value}, [(h, b2, std, d)])."""
    rows = []
    for sampler, target, settings, points in lines:
        for h, b2, std, diverged in points:
            rows.append({
                "created_at": "2025-01-01T00:00:00+00:00", "suite": "test", "sampler": sampler, "target": target,
                "seed": 0, "grad_evals": 10_000, "wall_seconds": 1.0, "git_commit": "abc", "machine": "m",
                "chain_steps_per_second": 1e6, "param_step_size": h, **settings, "backend": "jax", "dtype": "float32",
                "num_burnin": 0, "num_chains": 10, "num_steps": 1_000_000, "thin": 1, B2: b2, B2_STD: std,
                "b2_mean_pooled": b2, "b2_max_chain_average": b2, "num_diverged_chains": float(diverged),
                "curves": "{}", "versions": json.dumps({"numpy": "2"}),
            })
    return pd.DataFrame(rows)


def _langevin_like() -> pd.DataFrame:
    """Six samplers on one ICG at five step sizes, with schedules, vectors and long parameter names;
    csgld at two schedules, so its settings vary within the sampler."""
    icg = {"target_condition_number": 1e4, "target_dim": 10, "target_noise": "isotropic",
           "target_noise_variance": 256.0, "target_rotation_seed": 0}
    grid = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
    rng = np.random.default_rng(0)

    def points():
        return [(h, b2, b2 / 5, 0) for h, b2 in zip(grid, rng.uniform(0.001, 1.0, len(grid)))]

    constant = {"param_schedule": {"kind": "constant"}}
    lines = [
        ("sgld", "icg", {**icg, **constant, "param_convention": "standard"}, points()),
        ("psgld", "icg", {**icg, **constant, "param_epsilon": 1e-5, "param_initial_square_average": 0.0,
                          "param_smoothing": 0.99}, points()),
        ("sgld_cv", "icg", {**icg, **constant, "param_centre": [0.0] * 10, "param_centre_grad": [0.0] * 10},
         points()),
        ("clipped_sgld", "icg", {**icg, **constant, "param_clip_threshold_of_the_gradient_norm": 1e3}, points()),
        ("sglrw", "icg", {**icg, **constant}, points()),
    ]
    for cycle in (10_000, 250_000):
        schedule = {"kind": "cyclical", "cycle_length": cycle, "final_fraction": 0.0, "exploration_fraction": 0.25}
        lines.append(("csgld", "icg", {**icg, "param_schedule": schedule, "param_exploration_fraction": 0.0,
                                       "param_temperature_of_the_sampling_stage": 1.0}, points()))
    return _runs(*lines)


def test_format_table_opens_with_the_headline_lists_every_run_and_marks_divergence(store):
    lines = format_table(store.to_frame()).splitlines()
    assert lines[0].startswith("Best step size: sgld on icg, h = 0.01, b² = ")  # 0.5 diverged
    header = next(i for i, line in enumerate(lines) if line.startswith("sampler"))
    assert "step size" in lines[header] and "b²" in lines[header]
    rows = lines[header + 1:header + 4]
    assert "0.01*" in rows[1] and "*" not in rows[0] and "±" in rows[0] and "0/2" in rows[0]  # * marks the best
    assert "diverged" in rows[2] and "2/2" in rows[2]
    assert any("noise_variance=256" in line for line in lines[:header])


def test_report_is_an_html_page_with_headline_summary_table_png_and_provenance(store, tmp_path):
    path = write_report(store, tmp_path / "out")
    assert path == tmp_path / "out" / "index.html"
    page = path.read_text(encoding="utf-8")
    assert re.search(r'<p class="headline">Best step size: sgld on icg, h = 0.01, b² = [0-9.]+ ± [0-9.]+ '
                     r"\(± 1 bootstrap std over chains\)", page)
    assert "3 runs of sgld on icg (" in page and "3 step sizes from 0.001 to 0.5, 2 chains × 1,000 steps" in page
    assert f"results store <code>{store.path}</code>" in page and "suite test" in page
    assert "<table" in page and page.count("<tr") == 1 + 3
    pngs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert pngs and all(base64.b64decode(png).startswith(b"\x89PNG") for png in pngs)
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


@pytest.mark.parametrize("seed", range(5))
def test_the_headline_names_the_step_size_of_lowest_b2_with_its_std(seed):
    rng = np.random.default_rng(seed)
    grid = np.logspace(-4, -2, 7)
    b2 = rng.uniform(0.01, 1.0, len(grid))
    std = b2 / 10
    order = rng.permutation(len(grid))  # rows in any order
    frame = _runs(("sgld", "icg", {}, [(grid[i], b2[i], std[i], 0) for i in order]))
    best = int(np.argmin(b2))
    (sentence,) = headline(frame)
    assert sentence.startswith(f"Best step size: sgld on icg, h = {grid[best]:.3g}, "
                               f"b² = {b2[best]:.3g} ± {std[best]:.2g} (± 1 bootstrap std over chains)")
    assert format_table(frame).startswith(sentence[:TERMINAL_WIDTH // 2])
    assert ("smallest step size run" in sentence) == (best == 0)
    assert ("largest step size run" in sentence) == (best == len(grid) - 1)


def test_the_best_run_is_one_without_diverged_chains_and_a_tie_is_named():
    frame = _runs(("sgld", "icg", {}, [(1e-3, 0.20, 0.02, 0), (3e-3, 0.05, 0.01, 0), (1e-2, 0.06, 0.01, 0),
                                       (3e-2, 0.001, 0.001, 4), (0.1, np.nan, np.nan, 10)]))
    (sentence,) = headline(frame)
    assert "h = 0.003, b² = 0.05 ± 0.01" in sentence  # not h = 0.03: 4 of its 10 chains diverged
    assert "within 1 std of it: h = 0.01 (b² = 0.06)" in sentence and "h = 0.001 (" not in sentence


def test_several_samplers_a_target_without_truth_and_one_where_every_chain_diverged():
    frame = _runs(
        ("sgld", "icg", {}, [(1e-3, 0.10, 0.01, 0), (1e-2, 0.30, 0.03, 0)]),
        ("psgld", "icg", {}, [(1e-2, 0.20, 0.02, 0), (1e-1, 0.04, 0.005, 0), (1.0, np.nan, np.nan, 10)]),
        ("sghmc", "icg", {}, [(1e-2, 0.08, 0.01, 0), (1e-1, 0.09, 0.01, 0)]),
        ("sgld", "logreg", {"target_dataset": "breast_cancer"}, [(1e-4, np.nan, np.nan, 0)]),
        ("sgld", "funnel", {"target_scale": 3.0}, [(1.0, np.nan, np.nan, 10), (2.0, np.nan, np.nan, 10)]),
    )
    sentences = headline(frame)
    assert sentences[0].startswith("Lowest b² on icg: psgld at h = 0.1, b² = 0.04 ± 0.005 (± 1 bootstrap std")
    assert "No b² on logreg: no known truth for the target." in sentences
    assert "No b² on funnel: every chain diverged." in sentences
    table = best_table(frame)
    assert list(table["line"][:3]) == ["psgld on icg", "sghmc on icg", "sgld on icg"]  # lowest b² first
    assert list(table["best step size"][:3]) == ["0.1", "0.01", "0.001"]
    assert set(table["note"][3:]) == {"no known truth for the target", "every chain diverged"}


def test_b2_plot_fits_its_y_axis_to_the_points_and_mentions_a_far_1_over_n():
    b2 = [0.3, 0.05, 0.02, 0.2]
    std = [0.05, 0.01, 0.005, 0.04]
    frame = _runs(("sgld", "icg", {}, [(h, v, s, 0) for h, v, s in zip([1e-4, 1e-3, 1e-2, 1e-1], b2, std)]))
    ax = b2_figure(frame).axes[0]
    low, high = ax.get_ylim()
    assert low <= min(v - s for v, s in zip(b2, std)) and high >= max(v + s for v, s in zip(b2, std))
    assert high / low < 100  # 1/n = 1e-6 does not stretch the axis down ...
    legend = " ".join(t.get_text() for t in b2_figure(frame).legends[0].get_texts())
    assert "1/n = 1e-06" in legend and "below the plot" in legend  # ... it is named in the legend
    near = frame.assign(num_steps=20)  # 1/n = 0.05, among the points: drawn as a line
    ax = b2_figure(near).axes[0]
    assert any(list(line.get_ydata()) == [0.05, 0.05] for line in ax.get_lines())


def test_many_lines_get_distinct_styles_and_a_legend_inside_the_figure():
    lines = [(f"sampler{i:02d}", "icg", {}, [(1e-3, 0.1 + i / 100, 0.01, 0), (1e-2, 0.2, 0.01, 0)]) for i in range(14)]
    fig = b2_figure(_runs(*lines))
    drawn = [line for line in fig.axes[0].get_lines() if line.get_marker() not in ("None", "", "_")]
    styles = {(str(line.get_color()), line.get_marker(), line.get_linestyle()) for line in drawn}
    assert len(styles) == 14
    fig.canvas.draw()
    (legend,) = fig.legends
    box, figure = legend.get_window_extent(), fig.bbox
    assert box.x0 >= figure.x0 and box.x1 <= figure.x1 and box.y0 >= figure.y0 and box.y1 <= figure.y1
    assert len(legend.get_texts()) == 14 + 1  # the lines and 1/n


def test_running_b2_has_a_panel_per_line_and_one_colour_per_step_size():
    curve = json.dumps({"b2_mean_pooled": {"grad_evals": [1e3, 1e4, 1e5], "value": [0.5, 0.1, 0.02]}})
    frame = _runs(("sgld", "icg", {}, [(1e-3, 0.1, 0.01, 0), (1e-2, 0.2, 0.01, 0)]),
                  ("psgld", "icg", {}, [(1e-2, 0.1, 0.01, 0), (10 * 1e-3, 0.1, 0.01, 0)])).assign(curves=curve)
    fig = running_b2_figure(frame)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["psgld", "sgld"]
    colours = [[str(line.get_color()) for line in ax.get_lines() if len(line.get_xdata()) == 3] for ax in panels]
    assert len(set(colours[1])) == 2 and colours[0][0] == colours[1][1]  # h = 0.01 alike in both panels
    assert running_b2_figure(frame.assign(curves="{}")) is None


def test_a_langevin_like_table_fits_in_120_columns():
    frame = _langevin_like()
    text = format_table(frame)
    assert max(len(line) for line in text.splitlines()) <= TERMINAL_WIDTH
    assert text.startswith("Lowest b² on icg: ")
    assert text.count("*") == 1 + 7  # the best of each of the 7 lines, and the footnote
    assert "cycle_length=250,000" in text and "epsilon=1e-05" in text  # moved under or above the table, not lost


def test_settings_of_a_mixed_frame_show_only_where_they_apply():
    frame = _runs(
        ("sgld", "icg", {"target_dim": 10, "target_noise": "isotropic", "target_noise_variance": 256.0,
                         "param_convention": "standard", "param_schedule": {"kind": "constant"},
                         "param_temperature": 2.0}, [(1e-3, 0.1, 0.01, 0), (1e-2, 0.2, 0.01, 0)]),
        ("sghmc", "icg", {"target_dim": 4, "target_noise": "none", "param_friction": 0.01,
                          "param_schedule": {"kind": "constant"}}, [(1e-2, 0.1, 0.01, 0)]),
        ("csgld", "funnel", {"target_dim": 10, "target_scale": 3.0,
                             "param_schedule": {"kind": "cyclical", "cycle_length": 500}}, [(1e-3, 0.3, 0.01, 0)]),
        ("sgld", "logreg", {"target_dataset": "breast_cancer", "param_convention": "standard",
                            "param_schedule": {"kind": "constant"}}, [(1e-4, np.nan, np.nan, 0)]),
    ).assign(param_unused=None, target_unused=np.nan)
    shown = display_frame(frame)
    texts = [format_table(frame), shared_settings(frame), *group_settings(frame).values(),
             *shown["target"], *shown["setting"]]
    assert not any(re.search(r"\bnan\b|\bNone\b|=—|unused", text) for text in texts)
    assert shared_settings(frame) == "num_chains=10, num_steps=1,000,000, num_burnin=0, thin=1, backend=jax, " \
                                     "dtype=float32, seed=0"
    assert group_settings(frame)["sampler sghmc"] == "schedule=constant, friction=0.01"
    assert "target funnel" in group_settings(frame) and "scale=3" in group_settings(frame)["target funnel"]
    assert list(shown["target"]) == ["funnel", "icg (dim=4, noise=none)", "icg (dim=10, noise=isotropic, "
                                     "noise_variance=256)", "icg (dim=10, noise=isotropic, noise_variance=256)",
                                     "logreg"]
    assert list(shown["setting"]) == ["", "", "temperature=2", "temperature=2", ""]  # only where it applies
    assert "—" not in " ".join(shown.columns)
    assert run_summary(frame).startswith("5 runs of 3 samplers (csgld, sghmc, sgld) on 3 targets (funnel, icg, "
                                         "logreg): 1 or 2 step sizes per line from 0.0001 to 0.01, 10 chains × 10⁶")


def test_one_run_has_no_constant_columns_and_says_its_target_chains_and_steps_elsewhere():
    """A column that is the same in every row says nothing, one run's included: its target, chains and steps are
    in the page's opening line and the settings shared by all runs."""
    frame = _runs(("sgld", "icg", {"target_dim": 10}, [(1e-3, 0.1, 0.01, 0)]))
    assert not {"target", "chains", "steps"} & set(display_frame(frame).columns)
    assert run_summary(frame).startswith("1 run of sgld on icg (dim=10): 1 step size 0.001, 10 chains × 10⁶ steps")
    text = format_table(frame)
    header = next(line for line in text.splitlines() if line.startswith("sampler"))
    assert header.split() == ["sampler", "step", "size", "b²", "±", "boot.", "std", "diverged", "grad", "evals",
                              "wall", "s"]
    assert "One step size: sgld on icg, h = 0.001" in text
    assert "dim=10" in shared_settings(frame) and "num_chains=10, num_steps=1,000,000" in text


def _suites(n: int, tiny: bool = False) -> pd.DataFrame:
    """sgld on icg as ``n`` suites run it into one store: lines of two step sizes told apart by their chains, steps
    and checkpoints, each with a running b²; with ``tiny``, one more line without a running b² (the tiny suite)."""
    curve = json.dumps({"b2_mean_pooled": {"grad_evals": [1e3, 1e4, 1e5], "value": [0.5, 0.1, 0.02]}})
    frames = [_runs(("sgld", "icg", {"target_dim": 10}, [(1e-3, 0.1, 0.01, 0), (1e-2, 0.2, 0.01, 2)]))
              .assign(num_chains=10 + i, num_steps=1_000_000 + 1000 * i, num_checkpoints=20 + i, curves=curve)
              for i in range(n)]
    if tiny:
        frames.append(_runs(("sgld", "icg", {"target_dim": 10}, [(1e-3, 0.4, 0.01, 0), (1e-2, 0.2, 0.01, 0)]))
                      .assign(num_chains=2, num_steps=2000, num_checkpoints=0))
    return pd.concat(frames, ignore_index=True)


def _cut_text(fig) -> list[str]:
    """The titles, axis labels, annotations and legend entries of ``fig`` that reach beyond it, and the pairs of
    titles and axis labels that overlap, as Agg renders them."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible()]
    heads = [t for t in [*fig.texts, *(t for ax in panels for t in (ax.title, ax.xaxis.label, ax.yaxis.label))]
             if t.get_visible() and t.get_text()]
    legends = [legend for legend in [*fig.legends, *(ax.get_legend() for ax in panels)] if legend is not None]
    texts = heads + [t for ax in panels for t in ax.texts] + [t for legend in legends for t in legend.get_texts()]
    page = fig.bbox
    cut = [f"cut: {t.get_text()!r}" for t in texts if not (
        page.x0 <= (box := t.get_window_extent(renderer)).x0 and box.x1 <= page.x1
        and page.y0 <= box.y0 and box.y1 <= page.y1)]
    return cut + [f"overlap: {a.get_text()!r} and {b.get_text()!r}" for i, a in enumerate(heads) for b in heads[i + 1:]
                  if a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer))]


@pytest.mark.parametrize("figure", [b2_figure, running_b2_figure])
@pytest.mark.parametrize("frame", [
    _suites(1), _suites(1, tiny=True), _suites(2), _suites(3), _suites(5),
    _langevin_like().assign(curves=_suites(1)["curves"][0]),
], ids=["one suite", "quick and tiny", "two", "three", "five", "langevin"])
def test_no_title_label_or_legend_entry_of_a_figure_is_cut(figure, frame):
    """A title over a panel or the figure, or a legend entry, wider than its room is broken into lines: none runs
    past the figure's edges (a suptitle naming the one line with a running b² did, cut at both ends) or over
    another."""
    assert _cut_text(figure(frame)) == []


def test_a_long_suptitle_is_broken_into_lines_not_shortened():
    """Of quick and tiny only quick records a running b²: the suptitle names its line in full, on two lines."""
    title = running_b2_figure(_suites(1, tiny=True)).get_suptitle()
    assert "\n" in title
    assert title.replace("\n", " ") == "Running second-moment bias: sgld (num_chains=10, num_steps=1,000,000, " \
                                        "num_checkpoints=20)"
