"""The layers of DESIGN.md, imports only downward (base < targets | samplers < reference < bench),
checked by import-linter with the contract in ``pyproject.toml``: the repository keeps it, and the
same contract breaks on a tree where a sampler imports a target or the base layer imports a sampler."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")  # import-linter, a test extra


def lint_imports(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT_IMPORTS, "--config", "pyproject.toml"], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(pythonpath), "PATH": str(Path(sys.executable).parent)})


def test_the_repository_keeps_its_layers():
    result = lint_imports(ROOT, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("importer, imported", [("samplers", "targets"), ("targets", "samplers"),
                                                ("base", "samplers"), ("reference", "bench")])
def test_an_upward_or_sideways_import_breaks_the_contract(tmp_path, importer, imported):
    """A tree of the five packages, one module each, where ``importer`` imports ``imported``."""
    for package in ("base", "targets", "samplers", "reference", "bench"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        body = f"import {imported}\n" if package == importer else ""
        (tmp_path / package / "module.py").write_text(body)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = config["contracts"][0]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.importlinter]\nroot_packages = " + repr(config["root_packages"]).replace("'", '"') + "\n\n"
        "[[tool.importlinter.contracts]]\n" + f'name = "{contract["name"]}"\ntype = "layers"\n'
        "layers = " + repr(contract["layers"]).replace("'", '"') + "\n")
    result = lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{importer}.module -> {imported}" in result.stdout
