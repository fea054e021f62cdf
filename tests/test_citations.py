"""Papers are cited, not pointed at (issue 43): no text file of the repository names a file outside it (the
papers' plain-text copies that a clone does not have), and every paper a registered sampler's citation
names, by short name ("SMILE paper", "MAMBA appendix D.3") or by author and year ("Welling & Teh (2011)"),
has its entry on ``docs/bibliography.md``. Deterministic."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from sgbench import samplers

ROOT = Path(__file__).resolve().parents[1]
BIBLIOGRAPHY = ROOT / "docs" / "bibliography.md"

# The pointers, built from parts so that this file does not contain them.
FORBIDDEN = ("seeds" + "/", ".." + "/shared")

WALKED = ("base", "bench", "samplers", "targets", "reference", "tests", "docs")
REPORTS = ("reports", (".md", ".py"))  # the reports folder: only its text, not its stored measurements
FILES = ("README.md", "pyproject.toml", "tox.ini", "mkdocs.yml", ".ci/run")
SKIPPED_DIRS = {"__pycache__", ".pytest_cache", ".hypothesis", ".asv", "site"}

# The five papers' short names as the citations use them, longest first ("PX-SGMCMC" before "PX"), and
# the author-year form "Name et al. (2014)", "Name & Name (2011)", with or without the parentheses.
PAPER = re.compile(r"\b(PX-SGMCMC|SMILE|MAMBA|SGLRW|MILE|PX)\b")
AUTHOR_YEAR = re.compile(r"\b([A-Z][\w-]+(?: et al\.| & [A-Z][\w-]+)) \(?(\d{4})\)?")


def text_files():
    """Every file the walk covers that reads as UTF-8 text (stored arrays and other binaries are skipped)."""
    paths = [ROOT / name for name in FILES]
    for folder, suffixes in [(name, None) for name in WALKED] + [REPORTS]:
        for directory, dirs, names in os.walk(ROOT / folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            paths += [Path(directory) / name for name in sorted(names)
                      if suffixes is None or name.endswith(suffixes)]
    for path in paths:
        try:
            yield path, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def cited_names(citation: str) -> set[str]:
    """The bibliography entries a citation needs: "SMILE paper", "Welling & Teh (2011)", ..."""
    names = {f"{short} paper" for short in PAPER.findall(citation)}
    return names | {f"{name} ({year})" for name, year in AUTHOR_YEAR.findall(citation)}


def test_no_text_file_points_at_a_file_outside_the_repository():
    checked, offenders = 0, []
    for path, text in text_files():
        checked += 1
        for number, line in enumerate(text.splitlines(), 1):
            if any(pointer in line for pointer in FORBIDDEN):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert checked > 100  # the walk found the repository
    assert not offenders, "cite the paper by its short name (docs/bibliography.md):\n" + "\n".join(offenders)


def test_the_walk_reads_the_files_that_cite():
    paths = {path.relative_to(ROOT).as_posix() for path, _ in text_files()}
    assert {"README.md", "docs/bibliography.md", "samplers/smile.py", "tests/test_citations.py"} <= paths


@pytest.mark.parametrize("citation, names", [
    ("SMILE paper (2025), sec. 3.1, eq. 3", {"SMILE paper"}),
    ("Kim et al. (2025), PX-SGMCMC paper, eq. (9); Algorithm 1 of the PX paper",
     {"Kim et al. (2025)", "PX-SGMCMC paper", "PX paper"}),
    ("Chen et al. (2014), eq. (15); MAMBA appendix D.1, eq. (6)", {"Chen et al. (2014)", "MAMBA paper"}),
    ("blackjax 1.7.1 blackjax.sgmcmc.sgld (Welling & Teh 2011)", {"Welling & Teh (2011)"}),
    ("pSMILE-naive", set()),
])
def test_cited_names_reads_short_names_and_author_years(citation, names):
    assert cited_names(citation) == names


def test_every_paper_a_sampler_cites_is_on_the_bibliography():
    bibliography = BIBLIOGRAPHY.read_text()
    missing = {}
    for name in samplers.names():
        citation = samplers.get(name).citation
        assert cited_names(citation), (name, citation)  # every citation names at least one paper
        absent = sorted(entry for entry in cited_names(citation) if entry not in bibliography)
        if absent:
            missing[name] = absent
    assert not missing, missing


def test_the_bibliography_lists_the_five_papers_with_title_and_link():
    bibliography = BIBLIOGRAPHY.read_text()
    for short in ("SMILE", "MAMBA", "SGLRW", "MILE", "PX-SGMCMC"):
        start = bibliography.index(f"\n### {short} paper\n")
        entry = bibliography[start:bibliography.find("\n### ", start + 1)]
        for field in ("**Title:**", "**Authors:**", "**Venue:**", "**Year:**", "**Link:** <https://"):
            assert field in entry, (short, field)
