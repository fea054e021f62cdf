"""MkDocs hook: the docstrings' Sphinx markup, made readable on the API pages.

The docstrings use Sphinx roles (:math:`x`, :class:`Name`) and ``.. math::`` blocks, which Markdown
renders literally. On the ``api/`` pages the role prefix is dropped (the code span stays) and a
``.. math::`` paragraph becomes a code block of its LaTeX. The docstrings are not changed.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:math|class|func|meth|mod|attr|data|obj|exc|ref|py:\w+):(?=<code)")
MATH_BLOCK = re.compile(r"<p>\.\. math::\s*(.*?)</p>", re.DOTALL)


def readable(html: str) -> str:
    """``html`` with Sphinx role prefixes removed and ``.. math::`` paragraphs as code blocks."""
    html = ROLE.sub("", html)
    return MATH_BLOCK.sub(lambda m: "<pre><code>" + m.group(1).strip() + "</code></pre>", html)


def on_page_content(html, page, config, files):
    return readable(html) if page.file.src_uri.startswith("api/") else html
