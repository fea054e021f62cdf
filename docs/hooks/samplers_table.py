"""MkDocs hook: the table of every registered sampler, built from the registry at build time.

``docs/samplers.md`` holds the marker ``<!-- samplers-table -->``; this hook imports ``samplers`` and
puts in its place one row per ``samplers.names()``: the name, the citation, what its benchmark settings
declare (the gate's ``icg4`` and ``linreg`` hyperparameters, the target adapter it needs) and its
hyperparameters (the fields of its ``Params``).
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys

MARKER = "<!-- samplers-table -->"


def cell(value) -> str:
    """``value`` as the text of a Markdown table cell (pipes escaped)."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def hyperparameters(params: dict | None) -> str:
    """``{"step_size": 0.02, ...}`` as ``step_size=0.02, ...`` in code; an em dash for None."""
    if params is None:
        return "— (full batch)"
    return ", ".join(f"`{key}={cell(value)}`" for key, value in params.items())


def table() -> str:
    """The Markdown tables of every registered sampler: its benchmark settings, then its hyperparameters."""
    from sgbench import samplers

    settings_rows = ["| name | citation | gate `icg4` | gate `linreg` | target adapter |", "|---|---|---|---|---|"]
    params_rows = ["| name | hyperparameters (the fields of `Params`) |", "|---|---|"]
    for name in samplers.names():
        sampler = samplers.get(name)
        settings = sampler.benchmarks
        if settings is None:
            icg4 = linreg = wrapper = "no benchmark settings"
        else:
            icg4, linreg = hyperparameters(settings.gate.icg4), hyperparameters(settings.gate.linreg)
            wrapper = f"`{settings.wrapper}`" if settings.wrapper else "—"
        settings_rows.append(f"| `{name}` | {cell(sampler.citation)} | {icg4} | {linreg} | {wrapper} |")
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(sampler.Params))
        params_rows.append(f"| `{name}` | {fields} |")
    return "\n".join(settings_rows + ["", "Their hyperparameters:", ""] + params_rows)


def on_config(config):
    root = str(pathlib.Path(config["config_file_path"]).parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return config


def on_page_markdown(markdown, page, config, files):
    return markdown.replace(MARKER, table()) if MARKER in markdown else markdown
