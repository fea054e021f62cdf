"""What a reproduction reports: the paper's claims with their verdicts (``sgbench.bench.reproduce.claims``; one
contradicted makes ``sgbench reproduce`` exit 1), its table of ours beside the paper's with a verdict per cell, and
its HTML page, which leads with the claims table."""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import pandas as pd
from markupsafe import Markup, escape

from sgbench.bench.html import image, render_page, table as html_table
from sgbench.bench.reproduce.claims import CONTRADICTED, HELD, Claim, claims_frame, tally

WITHIN, DIFFERS, NO_PAPER_VALUE, NO_RESULT = "within", "differs", "no paper value", "no result"
NO_INTERVAL = "no interval"  # neither value has a standard deviation (one run against a bare number)


def verdict(ours: float, ours_sd: float, paper: float, paper_sd: float = 0.0, z: float = 2.0) -> str:
    r"""``"within"`` when :math:`|ours - paper| \le z\sqrt{sd_{ours}^2 + sd_{paper}^2}` (the combined error of two
    independent estimates; a missing sd counts as 0), ``"differs"`` otherwise; ``"no result"`` when ours is not
    finite (diverged or not run), ``"no paper value"`` when the paper's is missing, ``"no interval"`` when neither
    has an sd (a single run against a bare number) and they are not equal.

    Args:
        ours: our estimate.
        ours_sd: its standard deviation.
        paper: the paper's value.
        paper_sd: its standard deviation (0 where the paper gives none).
        z: the number of combined standard deviations allowed (2: about 5 % of agreeing cells flagged).

    Returns:
        one of WITHIN, DIFFERS, NO_PAPER_VALUE, NO_RESULT, NO_INTERVAL.
    """
    if ours is None or not math.isfinite(ours):
        return NO_RESULT
    if paper is None or not math.isfinite(paper):
        return NO_PAPER_VALUE
    known = [s for s in (ours_sd, paper_sd) if s is not None and math.isfinite(s)]
    if not known and ours != paper:
        return NO_INTERVAL
    spread = math.hypot(*(s if s is not None and math.isfinite(s) else 0.0 for s in (ours_sd, paper_sd)))
    return WITHIN if abs(ours - paper) <= z * spread else DIFFERS


def timed(function, *args, **kwargs) -> tuple:
    """``(function(*args, **kwargs), seconds of wall time it took)``."""
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A finished reproduction.

    Attributes:
        name: the reproduction's name (the page is ``name`` with ``_`` for ``-``, ``.html``).
        title: the page's title.
        table: ours beside the paper's, a ``verdict`` column where there is a paper value per cell.
        claims: the paper's claims with their verdicts, at least one (any contradicted: ``failed`` is True, the
            command exits 1).
        intro: the setting in a sentence or two (scale, steps, time, commits).
        sections: further ``(heading, body)`` pairs of the page: a DataFrame, PNG bytes, or text/Markup.
        text_notes: lines printed after the table.
    """

    name: str
    title: str
    table: pd.DataFrame
    claims: tuple[Claim, ...]
    intro: str = ""
    sections: tuple = ()
    text_notes: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.claims:
            raise ValueError(f"{self.name}: a reproduction states the paper's claims about its table (at least one)")

    @property
    def failed(self) -> bool:
        """Whether a claim is contradicted."""
        return any(claim.verdict == CONTRADICTED for claim in self.claims)

    def claims_line(self) -> str:
        """``claims: 2 held, 1 contradicted, 0 within noise, 1 not testable``."""
        return f"claims: {tally(self.claims)}"

    def text(self) -> str:
        """The claims' tally, the claims table, the table and the notes, as printed by ``sgbench reproduce``."""
        lines = [self.title, "", self.claims_line()]
        for number, claim in enumerate(self.claims, 1):
            lines += claim.lines(number)
        lines += ["", self.table.to_string(index=False), "", *self.text_notes]
        if self.intro:
            lines.append(self.intro)
        return "\n".join(lines).rstrip() + "\n"

    def write_page(self, folder: Path) -> Path:
        """Write ``folder/NAME.html``: the claims' tally as its headline (red when a claim is contradicted, green
        when every claim is held, neutral otherwise), the claims table, the table, then ``sections``."""
        def body(content):
            if isinstance(content, pd.DataFrame):
                return html_table(content)
            if isinstance(content, bytes):
                return image(content, "figure")
            return content if isinstance(content, Markup) else Markup(f"<p>{escape(content)}</p>")

        sections = [("The paper's claims", html_table(claims_frame(self.claims))),
                    ("Ours beside the paper's", html_table(self.table))]
        sections += [(heading, body(content)) for heading, content in self.sections]
        path = Path(folder) / f"{self.name.replace('-', '_')}.html"
        held = all(claim.verdict == HELD for claim in self.claims)
        return render_page(path, self.title, sections, headline=self.claims_line(),
                           passed=False if self.failed else True if held else None, intro=self.intro)
