"""The reproductions' tables in docs/reproductions.md equal what their records in the repository produce
(``bench/reproduce/docs_blocks.py``): every generated block is rendered again, computing nothing, and compared."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sgbench.bench.reproduce import _record, docs_blocks

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reproductions.md"
BLOCKS = docs_blocks.blocks(PAGE.read_text())


def test_the_page_has_generated_blocks():
    assert len(BLOCKS) >= 1


@pytest.mark.parametrize("command, body", BLOCKS, ids=[command.split()[2] for command, _ in BLOCKS])
def test_every_generated_block_equals_its_record(command, body):
    assert docs_blocks.render(command, ROOT) == body, (
        f"docs/reproductions.md's block of `{command}` differs from its record: run "
        "`python -m sgbench.bench.reproduce.docs_blocks` from the repository's root")


def test_the_overview_block_tallies_every_block():
    text = PAGE.read_text()
    (body,) = [m.group(2) for m in docs_blocks.OVERVIEW.finditer(text)]
    assert body == docs_blocks.overview(text)
    assert body.count("\n") == len(BLOCKS) + 2  # the header, the rule, a row per block


def test_a_unit_missing_from_the_record_is_not_computed(tmp_path):
    record = tmp_path / "demo_runs.jsonl"
    assert _record.cached(record, {"n": 1}, ("a",), lambda: {"x": 1.0}) == {"x": 1.0}
    with _record.recorded_only():
        assert _record.cached(record, {"n": 1}, ("a",), lambda: 1 / 0) == {"x": 1.0}
        with pytest.raises(_record.NotRecorded, match=r"holds no finished unit \['b'\] under the settings"):
            _record.cached(record, {"n": 1}, ("b",), lambda: 1 / 0)
    assert _record.cached(record, {"n": 1}, ("b",), lambda: 2) == 2  # outside it, computed again


def test_markdown_tables_escape_their_cells():
    frame = pd.DataFrame({"a|b": ["x | y", None], "n": [0.123456, float("nan")], "k": [3, 4]})
    expected = "| a\\|b | n | k |\n|---|---|---|\n| x \\| y | 0.1235 | 3 |\n|  |  | 4 |"
    assert docs_blocks.markdown_table(frame) == expected


@pytest.mark.parametrize("command, message", [
    ("sgbench run --suite quick", "names `sgbench reproduce NAME ...`"),
    ("sgbench reproduce sglrw-table2 --scale quick", "give --db"),
    ("sgbench reproduce sglrw-table2 --db x --steps 3", "--steps is not an option of sglrw-table2"),
    ("sgbench reproduce sglrw-table2 --db x --scale huge", "--scale must be one of quick, paper"),
    ("sgbench reproduce sglrw-table2 --db", "every option takes one value"),
])
def test_a_block_names_a_reproduction_command_with_its_store(command, message):
    with pytest.raises(ValueError, match=message):
        docs_blocks.parse_command(command)


def test_the_command_rewrites_a_stale_block_and_check_says_so(tmp_path, monkeypatch, capsys):
    page = tmp_path / "page.md"
    command = "sgbench reproduce sglrw-table2 --scale quick --db reports/reproductions/results.sqlite"
    page.write_text(f"# t\n\n<!-- generated: {command} -->\nstale\n<!-- end generated -->\n")
    monkeypatch.setattr(docs_blocks, "render", lambda command, root: "fresh\n")
    assert docs_blocks.main([str(page), "--check"]) == 1 and "stale" in page.read_text()
    assert capsys.readouterr().out == f"differs: {command}\n"
    assert docs_blocks.main([str(page)]) == 0 and "\nfresh\n<!-- end generated -->" in page.read_text()
    assert docs_blocks.main([str(page), "--check"]) == 0
    with pytest.raises(SystemExit) as stop:
        docs_blocks.main([str(tmp_path / "missing.md")])
    assert stop.value.code == 2 and capsys.readouterr().err.count("\n") == 1  # one line
    monkeypatch.setattr(docs_blocks, "rewrite", lambda text, root: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(SystemExit) as stop:
        docs_blocks.main([str(page)])
    assert stop.value.code == 130 and f"interrupted: {page} and the pages after it are unchanged" in \
        capsys.readouterr().err
