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
class Check:
    """An acceptance check: the paper's claim in one sentence, whether our numbers bear it out, and why.
    ``passed`` is True (they do), False (they contradict it beyond the sampling noise: the command exits 1) or
    None (not resolved: the numbers go against it only within the noise, so a larger scale is needed)."""

    statement: str
    passed: bool | None
    detail: str = ""

    def line(self) -> str:
        """``PASSED: statement (detail)``, ``FAILED: ...`` or ``NOT RESOLVED: ...``."""
        label = {True: "PASSED", False: "FAILED", None: "NOT RESOLVED"}[self.passed]
        detail = f" ({self.detail})" if self.detail else ""
        return f"{label}: {self.statement}{detail}"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A finished reproduction.

    Attributes:
        name: the reproduction's name (the page is ``name`` with ``_`` for ``-``, ``.html``).
        title: the page's title.
        table: ours beside the paper's, a ``verdict`` column where there is a paper value per cell.
        claims: the paper's claims with their verdicts (any contradicted: ``failed`` is True, the command exits 1).
        checks: the acceptance checks (any failed: ``failed`` is True and the command exits 1).
        intro: the setting in a sentence or two (scale, steps, time, commits).
        sections: further ``(heading, body)`` pairs of the page: a DataFrame, PNG bytes, or text/Markup.
        text_notes: lines printed after the table.
    """

    name: str
    title: str
    table: pd.DataFrame
    claims: tuple[Claim, ...] = ()
    checks: tuple[Check, ...] = ()
    intro: str = ""
    sections: tuple = ()
    text_notes: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a claim is contradicted or an acceptance check failed (one not resolved does not fail)."""
        return (any(claim.verdict == CONTRADICTED for claim in self.claims)
                or any(check.passed is False for check in self.checks))

    def claims_line(self) -> str:
        """``claims: 2 held, 1 contradicted, 0 within noise, 1 not testable`` ("" without claims)."""
        return f"claims: {tally(self.claims)}" if self.claims else ""

    def text(self) -> str:
        """The claims table, the table, the notes and the checks, as printed by ``sgbench reproduce``."""
        lines = [self.title, ""]
        if self.claims:
            lines += [self.claims_line()]
            for number, claim in enumerate(self.claims, 1):
                lines += claim.lines(number)
            lines.append("")
        lines += [self.table.to_string(index=False), ""]
        lines += list(self.text_notes)
        lines += [check.line() for check in self.checks]
        if self.intro:
            lines.append(self.intro)
        return "\n".join(lines).rstrip() + "\n"

    def write_page(self, folder: Path) -> Path:
        """Write ``folder/NAME.html``: the claims' tally (and the checks') as its headline (red when a claim is
        contradicted or a check failed, green when every claim is held and every check passed, neutral
        otherwise), the claims table, the table, then ``sections``."""
        def body(content):
            if isinstance(content, pd.DataFrame):
                return html_table(content)
            if isinstance(content, bytes):
                return image(content, "figure")
            return content if isinstance(content, Markup) else Markup(f"<p>{escape(content)}</p>")

        checks = Markup("<ul>" + "".join(f"<li>{escape(check.line())}</li>" for check in self.checks) + "</ul>")
        unresolved = sum(c.passed is None for c in self.checks)
        checked = (f"{sum(c.passed is True for c in self.checks)} of {len(self.checks)} acceptance checks passed"
                   + (f", {unresolved} not resolved at this scale" if unresolved else "") if self.checks else "")
        headline = "; ".join(part for part in (self.claims_line(), checked) if part)
        all_held = all(claim.verdict == HELD for claim in self.claims)
        sections = [("The paper's claims", html_table(claims_frame(self.claims)))] if self.claims else []
        sections.append(("Ours beside the paper's", html_table(self.table)))
        if self.checks:
            sections.append(("Acceptance checks", checks))
        sections += [(heading, body(content)) for heading, content in self.sections]
        path = Path(folder) / f"{self.name.replace('-', '_')}.html"
        return render_page(path, self.title, sections, headline=headline,
                           passed=False if self.failed else True if (self.checks or self.claims) and all_held
                           and unresolved == 0 else None,
                           intro=self.intro)
