"""MkDocs hook: the API reference pages of ``sgbench`` and its subpackages base, samplers, targets, reference
and bench (the repository's top-level folders), generated at build time.

One page per package directory (``api/sgbench.<dotted package>.md``), one mkdocstrings section per module
found on disk, so a new module (a new sampler is one file) is documented without editing anything here.
Directories that are not importable packages (the asv suite under ``bench/perf/asv``) are left out.
"""

from __future__ import annotations

import pathlib

from mkdocs.structure.files import File

PACKAGES = ("base", "samplers", "targets", "reference", "bench")


def package_dirs(root: pathlib.Path) -> list[pathlib.Path]:
    """Every package directory (with an ``__init__.py``) under the packages of ``PACKAGES``, sorted."""
    dirs = []
    for name in PACKAGES:
        found = (p.parent for p in (root / name).rglob("__init__.py") if "__pycache__" not in p.parts)
        dirs += sorted(d for d in found if all((a / "__init__.py").is_file() for a in _ancestors(root, d)))
    return dirs


def _ancestors(root: pathlib.Path, directory: pathlib.Path) -> list[pathlib.Path]:
    """``directory`` and its parents below ``root``."""
    return [directory, *(a for a in directory.parents if root in a.parents)]


def page(root: pathlib.Path, directory: pathlib.Path) -> tuple[str, str]:
    """(page path, markdown) of the API page of the package in ``directory``."""
    package = ".".join(("sgbench", *directory.relative_to(root).parts))
    modules = sorted(p.stem for p in directory.glob("*.py") if p.stem != "__init__")
    subpackages = sorted(d.name for d in directory.iterdir() if (d / "__init__.py").is_file())
    lines = [f"# `{package}`", "",
             "Generated from the docstrings (`docs/hooks/api_pages.py`).", ""]
    if subpackages:
        lines += ["Subpackages: " + ", ".join(f"[`{package}.{s}`]({package}.{s}.md)" for s in subpackages) + ".", ""]
    lines += [f"::: {package}", "    options:", "      show_submodules: false", ""]
    lines += [f"::: {package}.{module}\n" for module in modules]
    return f"api/{package}.md", "\n".join(lines)


def on_files(files, config):
    root = pathlib.Path(config["config_file_path"]).parent
    for directory in package_dirs(root):
        path, markdown = page(root, directory)
        files.append(File.generated(config, path, content=markdown))
    files.append(File.generated(config, "api/sgbench.md", content=(
        "# `sgbench`\n\nGenerated from the docstrings (`docs/hooks/api_pages.py`).\n\n"
        + "Subpackages: " + ", ".join(f"[`sgbench.{name}`](sgbench.{name}.md)" for name in PACKAGES) + ".\n\n"
        + "::: sgbench\n    options:\n      show_submodules: false\n")))
    return files
