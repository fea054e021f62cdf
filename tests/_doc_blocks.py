"""The fenced code blocks of the documentation's Markdown pages, as the tests that run them read them: a block
preceded by a line ``<!-- not run: REASON -->`` is not run (its ``why`` is the reason); the others are."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]+?) -->\n)?```(?P<language>\w+)\n(?P<code>.*?)```", re.DOTALL)


def blocks(page: Path) -> list[dict]:
    """``page``'s blocks in order: ``{"why", "language", "code", "line"}`` each (``why`` None where it is run,
    ``code`` without the indentation of a block inside a list, ``line`` the page's line of the code's first line).
    """
    text = page.read_text()
    return [{**match.groupdict(), "code": textwrap.dedent(match["code"]),
             "line": text.count("\n", 0, match.start("code")) + 1} for match in BLOCK.finditer(text)]


def runnable_python(page: Path) -> list[dict]:
    """``page``'s Python blocks that are run, in order."""
    return [block for block in blocks(page) if block["language"] == "python" and not block["why"]]
