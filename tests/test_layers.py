"""The layers of DESIGN.md, imports only downward, checked by import-linter with the contracts in
``pyproject.toml``: base < targets | samplers < reference < bench, and inside bench running, adapters
< html < sweeps < gate | perf | reproduce < cli. The repository keeps them, and the same contracts
break on a tree of empty packages where one layer imports a layer above it or a sibling."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")  # import-linter, a test extra
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def lint_imports(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT_IMPORTS, "--config", "pyproject.toml", "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, env={"PYTHONPATH": str(pythonpath), "PATH": str(Path(sys.executable).parent)})


def test_the_repository_keeps_its_layers():
    result = lint_imports(ROOT, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(CONFIG['contracts'])} kept, 0 broken" in result.stdout


def _toml_list(values) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


@pytest.mark.parametrize("importer, imported", [
    ("sgbench.samplers", "sgbench.targets"), ("sgbench.targets", "sgbench.samplers"),
    ("sgbench.base", "sgbench.samplers"), ("sgbench.reference", "sgbench.bench"),
    ("sgbench.bench.running", "sgbench.bench.sweeps"), ("sgbench.bench.html", "sgbench.bench.gate"),
    ("sgbench.bench.gate", "sgbench.bench.perf"),
    ("sgbench.bench.sweeps", "sgbench.bench.cli"),
])
def test_an_upward_or_sideways_import_breaks_a_contract(tmp_path, importer, imported):
    """Every package the contracts name, empty, with one module each; ``importer``'s imports ``imported``."""
    packages = {layer.strip() for contract in CONFIG["contracts"] for line in contract["layers"]
                for layer in line.split("|")} | set(CONFIG["root_packages"])
    for package in packages:
        folder = tmp_path.joinpath(*package.split("."))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
        (folder / "module.py").write_text(f"import {imported}\n" if package == importer else "")
    config = "[tool.importlinter]\nroot_packages = " + _toml_list(CONFIG["root_packages"]) + "\n"
    for contract in CONFIG["contracts"]:
        config += (f'\n[[tool.importlinter.contracts]]\nname = "{contract["name"]}"\ntype = "{contract["type"]}"\n'
                   f"layers = {_toml_list(contract['layers'])}\n")
    (tmp_path / "pyproject.toml").write_text(config)
    result = lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{importer}.module -> {imported}" in result.stdout
