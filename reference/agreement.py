r"""Agreement of two NUTS references of one target: z-test every E[x_i] and E[x_i^2],

.. math:: z = \frac{\hat\mu_a - \hat\mu_b}{\sqrt{\mathrm{se}_a^2 + \mathrm{se}_b^2}},

two-sided at family-wise false-failure rate ``alpha`` with a Bonferroni correction over the
``2 dim`` tests (each at ``alpha / (2 dim)``). Used by the reproducibility check (another seed) and
by the build's cross-check (another NUTS implementation)."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from sgbench.reference.metrics import moment_mcse


@dataclasses.dataclass(frozen=True)
class Agreement:
    """The largest |z| over the tests, the threshold it is compared with, and where it occurred."""

    max_abs_z: float
    threshold: float
    worst: str

    @property
    def passed(self) -> bool:
        return self.max_abs_z <= self.threshold


def moments(draws) -> dict:
    """What :func:`compare` reads of ``draws`` (chains, draws, dim): E[x] and E[x^2] with their ArviZ Monte Carlo
    standard errors (``store.summarize`` gives them too, beside a covariance whose products take dim^2 the memory)."""
    x = np.asarray(draws, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    se = moment_mcse(x)
    return {"mean": flat.mean(0), "mean_se": se.mean, "second_moment": (flat**2).mean(0),
            "second_moment_se": se.second_moment}


def compare(new: dict, old: dict, alpha: float = 1e-3) -> Agreement:
    """z-tests of the moments of two ``store.summarize`` dicts (values may be lists)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    z = {}
    for key in ("mean", "second_moment"):
        a, b = np.asarray(new[key]), np.asarray(old[key])
        se = np.sqrt(np.asarray(new[f"{key}_se"]) ** 2 + np.asarray(old[f"{key}_se"]) ** 2)
        z[key] = np.abs(a - b) / se
    tests = sum(v.size for v in z.values())
    key = max(z, key=lambda k: np.max(z[k]))
    return Agreement(float(np.max(z[key])), float(stats.norm.isf(alpha / (2 * tests))),
                     f"{key}[{int(np.argmax(z[key]))}]")
