"""The installed package beside other code (issue 43): one import name, ``sgbench``, whose subpackages are the
repository's top-level folders (docs/architecture.md, "One import name"); the wheel carries no tests and no asv
suite; a project with its own ``samplers`` package imports it and the suite's side by side; no module of the
repository imports the folders under their own top-level names (which would load a second copy of a module)."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("base", "bench", "samplers", "targets", "reference")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, text=True, timeout=600)
    return zipfile.ZipFile(next(out.glob("*.whl")))


def test_the_wheel_adds_one_top_level_name(wheel):
    names = wheel.namelist()
    assert {name.split("/")[0] for name in names if ".dist-info/" not in name} == {"sgbench"}
    top_level = next(name for name in names if name.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["sgbench"]
    for folder in FOLDERS:
        assert f"sgbench/{folder}/__init__.py" in names, folder
    assert "sgbench/py.typed" in names and "sgbench/bench/html/templates/page.html.j2" in names


def test_the_wheel_carries_no_tests_and_no_asv_suite(wheel):
    names = wheel.namelist()
    assert not [name for name in names if name.startswith(("tests/", "sgbench/tests/")) or "/test_" in name]
    assert not [name for name in names if name.startswith("sgbench/bench/perf/asv/")]


def test_a_project_with_its_own_samplers_package_imports_both(tmp_path):
    own = tmp_path / "samplers"
    own.mkdir()
    (own / "__init__.py").write_text("OWN = True\n")
    script = ("import samplers, sgbench.samplers\n"
              "assert samplers.OWN and not hasattr(sgbench.samplers, 'OWN')\n"
              "assert 'sgld' in sgbench.samplers.names() and not hasattr(samplers, 'names')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def _old_name_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {m}" for m in modules if m.split(".")[0] in FOLDERS]
    return found


def _repository_modules() -> list[Path]:
    """The repository's Python files: the folders, tests and docs hooks (not ``sgbench/``, whose subpackages are
    links to the folders, nor environments and asv's working folders)."""
    asv = ROOT / "bench" / "perf" / "asv"
    skipped = [asv / "env", asv / "results", asv / "html"]
    return [path for folder in (*FOLDERS, "tests", "docs") for path in (ROOT / folder).rglob("*.py")
            if not any(path.is_relative_to(s) for s in skipped)]


def test_no_module_imports_a_folder_by_its_own_top_level_name():
    files = _repository_modules()
    assert len(files) > 300
    assert [hit for path in files for hit in _old_name_imports(path)] == []
