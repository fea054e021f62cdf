"""What one ``sgbench validate`` computed: :class:`Validation`, the verdict and what its page
(``sgbench.bench.validate.page``) shows besides."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from sgbench.bench.gate.resolution import Resolution
from sgbench.bench.validate.verdict import Verdict


@dataclasses.dataclass(frozen=True)
class Validation:
    """What one validation computed: its verdict and what its page shows besides
    (``sgbench.bench.validate.page``).

    Attributes:
        verdict: per target the outcome, its reason and basis; the checks, travel and metrics tables; the page's
            path.
        params: the candidate's hyperparameters as given (None: none given).
        alpha: the per-check false-failure rate (``ALPHA_RUN`` split over the plan's statistical checks).
        resolution: the bias the checks must resolve (``--detect``).
        temperatures: the distinct temperatures of the targets' runs, sorted.
        series: per run label (the candidate, ``suite NAME``), the targets it ran on, and per target the relative
            variance error per coordinate against the target at its temperature and its standard errors.
        differences: what an adapter says still differs from its reference ("" for a sampler that is not an
            adapter).
        budget: what the remedies could spend, in words.
        seed: the runs' seed (``--seed``): the same seed, sampler and settings give the same draws.
    """

    verdict: Verdict
    params: dict | None
    alpha: float
    resolution: Resolution
    temperatures: tuple[float, ...]
    series: dict[str, tuple[tuple, tuple, tuple]]
    differences: str = ""
    budget: str = ""
    seed: int = 0


def page_path(out, name: str) -> Path:
    """Where the page of sampler ``name``'s validation goes in folder ``out``: ``validate_<name>.html``, the name's
    characters other than letters, digits, ``_``, ``.`` and ``-`` made ``_``."""
    return Path(out) / f"validate_{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.html"


class Interrupted(KeyboardInterrupt):
    """A validation stopped (Ctrl-C) before its last target: ``validation`` holds the targets it decided."""

    def __init__(self, validation: Validation):
        super().__init__()
        self.validation = validation
