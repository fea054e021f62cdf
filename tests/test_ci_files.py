"""The CI definitions (``.github/workflows/*.yml``): valid GitHub workflows, and the test job runs the README's test
command, as ``.ci/run`` does."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("check_jsonschema")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _validate(path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema against its bundled copy of the GitHub workflow schema (no network)."""
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True)


def _readme_test_command() -> str:
    block = (ROOT / "README.md").read_text().split("```bash\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()[1]


def test_the_workflows_are_valid_and_a_broken_one_is_not(tmp_path):
    assert [path.name for path in WORKFLOWS] == ["ci.yml", "nightly.yml"]
    for path in WORKFLOWS:
        checked = _validate(path)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOWS[0].read_text().replace("runs-on: ubuntu-latest", "runs-on: 3\n    needs: {a: b}"))
    assert _validate(broken).returncode != 0


def test_the_ci_job_runs_the_readme_test_command_like_ci_run():
    command = _readme_test_command()
    assert command.endswith("python -m pytest") and '".[test]"' in command
    assert f"run: {command}\n" in (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith(command)


def test_the_nightly_job_runs_sgbench_nightly_and_keeps_its_state():
    text = (ROOT / ".github" / "workflows" / "nightly.yml").read_text()
    assert "sgbench nightly --results reports/nightly" in text and "schedule:" in text
    assert "reports/nightly\n            bench/perf/asv/results" in text  # carried from night to night
    assert "if: always()" in text and "upload-artifact" in text and "fetch-depth: 0" in text


def test_the_nightly_job_runs_the_tiers_that_the_default_run_leaves_out():
    """The default run deselects ``statistical`` and ``integration`` (pyproject.toml); the nightly job runs both."""
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-m 'not statistical and not integration'" in addopts
    text = (ROOT / ".github" / "workflows" / "nightly.yml").read_text()
    assert 'python -m pytest -m "statistical or integration"' in text


def test_the_authors_workflow_template_is_valid():
    """docs/templates/validate-sampler.yml (docs/quickstart.md, "In CI"), for a sampler author's repository."""
    checked = _validate(ROOT / "docs" / "templates" / "validate-sampler.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
