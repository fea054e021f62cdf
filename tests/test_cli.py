"""The sgbench command line, called in process (and once as ``python -m sgbench.bench.cli``)."""

import subprocess
import sys

import pytest

from sgbench.base import provenance
from sgbench.bench.cli import main
from sgbench.bench.cli._common import parse_value
from sgbench.bench.sweeps.store import ResultsStore


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("kind, expected",
                         [("samplers", "sgld"), ("targets", "icg"), ("metrics", "b2"), ("suites", "tiny")])
def test_list_prints_one_name_per_line(capsys, kind, expected):
    status, out, _ = _run(capsys, "list", kind)
    assert status == 0 and expected in out.splitlines()


def test_run_a_suite_then_report_from_the_store(capsys, tmp_path):
    db, out_dir = tmp_path / "results.sqlite", tmp_path / "out"
    tiny = ["run", "--suite", "tiny", "--db", str(db), "--out", str(out_dir), "--no-progress"]
    status, out, err = _run(capsys, *tiny)
    assert status == 0, err
    assert "2 new runs" in out and "sgld" in out and str(out_dir / "index.html") in out
    assert (out_dir / "index.html").is_file()
    with ResultsStore(db) as store:
        assert len(store) == 2
    status, out, _ = _run(capsys, *tiny)
    assert status == 0 and "0 new runs, 2 already" in out
    (out_dir / "index.html").unlink()
    status, out, _ = _run(capsys, "report", "--db", str(db), "--out", str(out_dir))
    assert status == 0 and "report:" in out and (out_dir / "index.html").is_file()


def test_an_adhoc_sweep_with_target_params(capsys, tmp_path):
    db = tmp_path / "results.sqlite"
    status, _, err = _run(capsys, "run", "--sampler", "sgld", "--target", "icg",
                          "--step-size", "0.001", "0.002",
                          "--target-param", "dim=3", "--target-param", "condition_number=100",
                          "--num-chains", "2", "--num-steps", "300", "--seed", "7", "--dtype", "float32",
                          "--db", str(db), "--out", str(tmp_path / "out"), "--no-progress")
    assert status == 0, err
    with ResultsStore(db) as store:
        frame = store.to_frame()
    assert sorted(frame["param_step_size"]) == [0.001, 0.002]
    assert set(frame["target_dim"]) == {3} and set(frame["target_condition_number"]) == {100.0}
    assert set(frame["seed"]) == {7} and set(frame["dtype"]) == {"float32"} and frame["suite"].isna().all()


def test_an_adhoc_sweep_with_sampler_params_and_a_schedule(capsys, tmp_path):
    db = tmp_path / "results.sqlite"
    status, _, err = _run(capsys, "run", "--sampler", "csgld", "--target", "icg", "--step-size", "0.001",
                          "--sampler-param", 'schedule={"kind": "cyclical", "cycle_length": 100}',
                          "--sampler-param", "exploration_fraction=0.25", "--target-param", "dim=3",
                          "--num-chains", "2", "--num-steps", "400", "--db", str(db), "--out", str(tmp_path / "out"),
                          "--no-progress")
    assert status == 0, err
    with ResultsStore(db) as store:
        row = store.to_frame().iloc[0]
    assert row["param_schedule"] == {"kind": "cyclical", "cycle_length": 100, "final_fraction": 0.0}
    assert row["param_exploration_fraction"] == 0.25
    assert "cyclical(cycle_length=100" in (tmp_path / "out" / "index.html").read_text()


def test_an_adhoc_sweep_on_the_reference_backend(capsys, tmp_path, monkeypatch):
    db = tmp_path / "results.sqlite"
    argv = ["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.001", "--backend", "numpy",
            "--num-chains", "2", "--num-steps", "50", "--num-burnin", "10", "--thin", "5",
            "--db", str(db), "--out", str(tmp_path / "out"), "--no-progress"]
    status, out, err = _run(capsys, *argv)
    assert status == 0, err
    with ResultsStore(db) as store:
        row = store.to_frame().iloc[0]
    assert (row["backend"], row["num_burnin"], row["thin"], row["grad_evals"]) == ("numpy", 10, 5, 120)
    # New code measures again, and the table shows only this code's rows.
    monkeypatch.setattr(provenance, "git_commit", lambda: "another-commit")
    status, out, _ = _run(capsys, *argv)
    assert status == 0 and "1 new runs, 0 already" in out
    assert out.count("numpy") == 1


@pytest.mark.parametrize("argv, named", [
    (["run", "--sampler", "nope", "--target", "icg", "--step-size", "0.1"], ["'nope'", "sgld"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "-0.1"], ["--step-size", "> 0"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "-1e-3"], ["--step-size", "> 0", "-0.001"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "1e-3", "-1e-3"], ["--step-size", "> 0"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "1e-3", "--sampler-param", "step_size=0.1"],
     ["given twice", "--step-size"]),
    (["run", "--sampler", "sgld", "--target", "nope", "--step-size", "0.1"], ["'nope'", "icg"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.1", "--target-param", "colour=red"],
     ["colour", "dim"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.1", "--target-param", "dim"],
     ["KEY=VALUE"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.1", "--num-chains", "0"],
     ["--num-chains must be an integer >= 1, got 0"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.1", "--num-steps", "10", "--thin", "20"],
     ["--thin must be an integer in [1, num_steps=10], got 20"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "1e-3", "0.01", "1e-3"],
     ["--step-size lists 0.001 twice"]),
    (["run", "--suite", "nope"], ["'nope'", "quick", "tiny"]),
    (["run", "--suite", "tiny", "--sampler", "sgld", "--target", "icg", "--step-size", "0.1"], ["--suite"]),
    (["run", "--num-steps", "10"], ["--sampler"]),
    (["run", "--sampler", "psgld", "--target", "icg", "--step-size", "0.1", "--sampler-param", "smoothng=0.9"],
     ["smoothng", "smoothing"]),
    (["run", "--sampler", "psgld", "--target", "icg", "--step-size", "0.1", "--sampler-param", "smoothing=-1"],
     ["smoothing", "[0, 1]"]),
    (["run", "--sampler", "sgld", "--target", "icg", "--step-size", "0.1", "--sampler-param", "schedule={kind"],
     ["JSON"]),
])
def test_bad_input_exits_2_with_a_one_line_message(capsys, tmp_path, argv, named):
    """Each bad value is refused by name before any work starts, and nothing is written."""
    status, _, err = _run(capsys, *argv, "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "out"))
    assert status == 2
    assert err.startswith("sgbench: error:") and len(err.strip().splitlines()) == 1
    for word in named:
        assert word in err
    assert not (tmp_path / "out").exists()


def test_report_without_a_store_exits_2(capsys, tmp_path):
    status, _, err = _run(capsys, "report", "--db", str(tmp_path / "missing.sqlite"), "--out", str(tmp_path))
    assert status == 2 and "no results store" in err and not (tmp_path / "missing.sqlite").exists()


def test_parse_value_tries_int_then_float_then_string():
    assert parse_value("10") == 10 and isinstance(parse_value("10"), int)
    assert parse_value("1e4") == 1e4 and isinstance(parse_value("1e4"), float)
    assert parse_value("isotropic") == "isotropic"
    assert parse_value('{"kind": "constant"}') == {"kind": "constant"} and parse_value("[1, 2]") == [1, 2]


def test_module_entry_point_in_a_subprocess(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sgbench.bench.cli", "list", "samplers"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "sgld" in done.stdout.splitlines()
    done = subprocess.run([sys.executable, "-m", "sgbench.bench.cli", "run", "--sampler", "nope", "--target", "icg",
                           "--step-size", "0.1", "--db", str(tmp_path / "r.sqlite")],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "unknown sampler 'nope'" in done.stderr


@pytest.mark.parametrize("command", [["run", "--suite", "tiny"], ["report"], ["gate"]])
def test_unusable_paths_exit_2_naming_the_flag_before_any_work(capsys, tmp_path, command):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    store = tmp_path / "r.sqlite"
    if command == ["report"]:  # report reads an existing store
        assert _run(capsys, "run", "--suite", "tiny", "--db", str(store), "--out", str(tmp_path / "first"),
                    "--no-progress")[0] == 0
    for flag, value, words in [("--out", a_file, "--out names a file"),
                               ("--out", a_file / "below", "is a file"),
                               ("--db", tmp_path, "--db names a folder"),
                               ("--db", a_file / "r.sqlite", "--db: cannot create the folder")]:
        if command == ["report"] and flag == "--db":
            continue  # report's --db must exist: its own error
        paths = {"--db": str(store), "--out": str(tmp_path / "out"), flag: str(value)}
        status, _, err = _run(capsys, *command, *[x for item in paths.items() for x in item])
        assert status == 2 and err.startswith("sgbench: error:") and len(err.strip().splitlines()) == 1, err
        assert words in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag, path", [("--db", "missing/results.sqlite"), ("--out", "missing/report")])
def test_a_path_in_a_missing_folder_exits_2_and_creates_nothing(capsys, tmp_path, flag, path):
    """A mistyped --db or --out never creates a tree of folders: only its last component is made."""
    paths = {"--db": str(tmp_path / "r.sqlite"), "--out": str(tmp_path / "out"), flag: str(tmp_path / path)}
    status, _, err = _run(capsys, "run", "--suite", "tiny", *[x for item in paths.items() for x in item])
    assert status == 2 and f"{flag}: the folder {tmp_path / 'missing'} does not exist" in err, err
    assert not (tmp_path / "missing").exists()


def test_help_loads_neither_jax_nor_arviz():
    """`sgbench --help` (measured: 0.26 s, was 3 s) builds every command's parser without the heavy
    libraries; they load when a command runs."""
    code = ("import sys; from sgbench.bench.cli import build_parser; build_parser().format_help(); "
            "print(sorted(m for m in ('jax', 'arviz', 'pandas', 'scipy', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout
