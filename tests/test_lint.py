"""ruff, with the rules of ``pyproject.toml`` ([tool.ruff]: pycodestyle, pyflakes, bugbear, pyupgrade and import
sorting), passes on the whole repository, as the pre-commit hook (``.pre-commit-config.yaml``) checks before each
commit; the same configuration fails on a file that breaks one of its rules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"  # the test extra's pinned ruff


def ruff_check(*paths: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([RUFF, "check", "--no-cache", *paths], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_repository_passes_ruff():
    result = ruff_check(".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_fails_on_unsorted_imports_and_an_unused_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "module.py").write_text("import sys\nimport os\n\nprint(os.sep)\n")
    result = ruff_check(".", cwd=tmp_path)
    assert result.returncode == 1
    assert "I001" in result.stdout and "F401" in result.stdout
