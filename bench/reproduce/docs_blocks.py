r"""The reproductions' tables in the docs, rendered from the records in the repository, so that docs and command
cannot drift.

A generated block of a Markdown page is written between two comments; the first names the command whose record
it renders::

    <!-- generated: sgbench reproduce sglrw-table2 --scale quick --db reports/reproductions/results.sqlite -->
    ...the claims' tally, the claims table, the table of ours beside the paper's, the outcome's other tables...
    <!-- end generated -->

A block ``<!-- generated: the claims of every block -->`` ... ``<!-- end generated -->`` holds the overview: each
block's reproduction, the scale and options it was recorded with, and its claims' tally (:func:`overview`).

That command, run from the repository's root, computes every unit missing from the record beside ``--db``
(``reports/reproductions/NAME_runs.jsonl``) and appends it there; rendering runs the same reproduction under
``sgbench.bench.reproduce._record.recorded_only`` on a copy of the record, computing nothing, and writes the
outcome's tables as Markdown (:func:`outcome_markdown`). ``python -m sgbench.bench.reproduce.docs_blocks``
rewrites the blocks of ``docs/reproductions.md`` (``--check``: exits 1 naming the blocks that differ, changing
nothing); ``tests/test_reproduction_docs.py`` checks that every block equals its rendering.
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

BLOCK = re.compile(r"(<!-- generated: (sgbench reproduce [^\n]*?) -->\n)(.*?)(<!-- end generated -->)", re.DOTALL)
OVERVIEW = re.compile(r"(<!-- generated: the claims of every block -->\n)(.*?)(<!-- end generated -->)", re.DOTALL)
TALLY = re.compile(r"^\*\*claims: (.*?)\*\*$", re.MULTILINE)
DEFAULT_PAGE = Path("docs/reproductions.md")


def cell(value) -> str:
    """One Markdown table cell: numbers to 4 significant digits (NaN and None blank), text on one line with ``|``
    escaped."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("\n", " ").replace("|", "\\|")


def markdown_table(frame: pd.DataFrame) -> str:
    """``frame`` as a Markdown table (its index left out), every cell by :func:`cell`."""
    header = "| " + " | ".join(cell(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def outcome_markdown(outcome) -> str:
    """A reproduction's :class:`~sgbench.bench.reproduce.outcome.Outcome` as the body of a generated block: the
    claims' tally in bold, the claims table, the table of ours beside the paper's, then each further section that
    is a table, under its heading in bold. Its intro, figures and text are left out (they may hold wall times)."""
    from sgbench.bench.reproduce.claims import claims_frame

    parts = []
    if outcome.claims:
        parts += [f"**{outcome.claims_line()}**", markdown_table(claims_frame(outcome.claims).drop(
            columns="where").assign(claim=[f"{c.row()['claim']} ({c.where})" for c in outcome.claims]))]
    parts.append(markdown_table(outcome.table))
    parts += [f"**{heading}**\n\n{markdown_table(body)}" for heading, body in outcome.sections
              if isinstance(body, pd.DataFrame)]
    return "\n\n".join(parts) + "\n"


def parse_command(command: str) -> tuple:
    """``(reproduction, scale, db, options)`` of a block's ``sgbench reproduce NAME [--scale S] --db PATH
    [its own options]`` (a ValueError naming what is wrong otherwise)."""
    from sgbench.bench.reproduce import _registry

    words = shlex.split(command)
    if words[:2] != ["sgbench", "reproduce"] or len(words) < 3:
        raise ValueError(f"a generated block names `sgbench reproduce NAME ...`, not `{command}`")
    entry = _registry.get(words[2])
    flags = {option.flag: option for option in entry.options}
    scale, db, options = "quick", None, {}
    pairs = words[3:]
    if len(pairs) % 2:
        raise ValueError(f"`{command}`: every option takes one value")
    for flag, text in zip(pairs[::2], pairs[1::2]):
        if flag == "--scale":
            scale = text
        elif flag == "--db":
            db = Path(text)
        elif flag in flags:
            value = flags[flag].type(text)
            if flags[flag].repeatable:
                options.setdefault(flags[flag].dest, []).append(value)
            else:
                options[flags[flag].dest] = value
        else:
            raise ValueError(f"`{command}`: {flag} is not an option of {entry.name}")
    if db is None:
        raise ValueError(f"`{command}`: give --db, the store beside the record the block is rendered from")
    if scale not in _registry.SCALES:
        raise ValueError(f"`{command}`: --scale must be one of {', '.join(_registry.SCALES)}")
    return entry, scale, db, options


def render(command: str, root: Path) -> str:
    """The body of the block of ``command``, rendered from the record in the repository at ``root``, computing
    nothing (a ``sgbench.bench.reproduce._record.NotRecorded`` when the record lacks a unit)."""
    from sgbench.bench.reproduce._record import record_path, recorded_only

    entry, scale, db, options = parse_command(command)
    record = record_path(Path(root) / db, entry.name)
    with tempfile.TemporaryDirectory() as folder:
        copy = record_path(Path(folder) / "results.sqlite", entry.name)
        if record.is_file():
            shutil.copyfile(record, copy)
        with recorded_only():
            outcome = entry.run(scale, options, db=Path(folder) / "results.sqlite", out=Path(folder), progress=False)
    return outcome_markdown(outcome)


def blocks(text: str) -> list[tuple[str, str]]:
    """``(command, body)`` of every generated block of a page's ``text``."""
    return [(match.group(2), match.group(3)) for match in BLOCK.finditer(text)]


def overview(text: str) -> str:
    """The body of the overview block of a page's ``text``: a table of every reproduction block's
    ``sgbench reproduce`` name, the options it was recorded with (``--db`` left out) and its claims' tally (as its
    body states it)."""
    rows = []
    for command, body in blocks(text):
        words = shlex.split(command)
        options = [f"{flag} {value}" for flag, value in zip(words[3::2], words[4::2]) if flag != "--db"]
        tally = TALLY.search(body)
        rows.append({"sgbench reproduce": words[2], "recorded with": " ".join(options),
                     "claims": tally.group(1) if tally else "no claims"})
    return markdown_table(pd.DataFrame(rows, columns=["sgbench reproduce", "recorded with", "claims"])) + "\n"


def rewrite(text: str, root: Path) -> str:
    """``text`` with every generated block's body rendered again, then the overview block's from them."""
    text = BLOCK.sub(lambda m: m.group(1) + render(m.group(2), root) + m.group(4), text)
    return OVERVIEW.sub(lambda m: m.group(1) + overview(text) + m.group(3), text)


def main(argv=None) -> int:
    """``python -m sgbench.bench.reproduce.docs_blocks [--check] [PAGE ...]``: render the generated blocks of each
    page (default ``docs/reproductions.md``, run from the repository's root); exit 1 with ``--check`` when one
    differs, 2 on a bad request (one line), 130 when interrupted (a page is written whole or not at all)."""
    parser = argparse.ArgumentParser(prog="python -m sgbench.bench.reproduce.docs_blocks",
                                     description="render the reproductions' generated blocks of Markdown pages "
                                                 "from the records in the repository")
    parser.add_argument("pages", nargs="*", type=Path, default=[DEFAULT_PAGE], help="the pages (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a block differs")

    def one_line_error(message):
        parser.exit(2, f"{parser.prog}: {message}\n")

    parser.error = one_line_error
    args = parser.parse_args(argv)
    from sgbench.bench.reproduce._record import NotRecorded

    stale = []
    for page in args.pages:
        if not page.is_file():
            parser.error(f"PAGE: no file {page}")
        text = page.read_text()
        try:
            new = rewrite(text, Path.cwd())
        except KeyboardInterrupt:
            parser.exit(130, f"{parser.prog}: interrupted: {page} and the pages after it are unchanged\n")
        except (ValueError, NotRecorded) as error:
            parser.error(f"{error} (run the block's command to compute it)" if isinstance(error, NotRecorded)
                         else str(error))
        if new != text:
            stale += [command for (command, body), (_, fresh) in zip(blocks(text), blocks(new)) if body != fresh]
            stale += ["the claims of every block"] * (OVERVIEW.findall(text) != OVERVIEW.findall(new))
            if not args.check:
                page.write_text(new)
    for command in stale:
        print(f"{'differs' if args.check else 'rewritten'}: {command}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
