"""Without --out, each invocation writes its own folder under reports/history/ and copies its pages
into reports/latest/; with --out, pages go there alone; bad input leaves nothing behind."""

import pytest

from sgbench.bench.cli import main


def test_each_invocation_has_its_own_folder_and_latest_holds_the_newest(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert main(["run", "--suite", "tiny", "--no-progress"]) == 0
    assert "copied into reports/latest/: index.html" in capsys.readouterr().out
    history = sorted((tmp_path / "reports" / "history").iterdir())
    assert len(history) == 2 and all(folder.name.endswith(f"-run-{folder.name.split('-')[-1]}") for folder in history)
    pages = [(folder / "index.html").read_text() for folder in history]
    assert "already in" not in pages[0]
    assert (tmp_path / "reports" / "latest" / "index.html").read_text() == pages[1]
    assert not list((tmp_path / "reports" / "latest").glob(".*partial"))


def test_an_explicit_out_is_written_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--suite", "tiny", "--no-progress", "--out", "mine"]) == 0
    assert (tmp_path / "mine" / "index.html").is_file()
    assert not (tmp_path / "reports" / "history").exists() and not (tmp_path / "reports" / "latest").exists()


def test_bad_input_writes_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--sampler", "sgld", "--target", "icg", "--step-size", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "sgbench: error: --step-size takes finite numbers > 0, got -1"
    assert not (tmp_path / "reports" / "history").exists()


@pytest.mark.parametrize("blocked", ["reports/latest", "reports/history"])
def test_a_file_where_the_report_folders_go_is_refused_before_work(tmp_path, monkeypatch, capsys, blocked):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / blocked).write_text("a file")
    assert main(["run", "--suite", "tiny", "--no-progress"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("sgbench: error: --out") and blocked in error and error.count("\n") == 1
    assert not (tmp_path / "reports" / "results.sqlite").exists()
