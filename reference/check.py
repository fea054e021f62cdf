r"""Reproducibility check of a stored reference: rebuild with another seed and z-test every E[x_i]
and E[x_i^2] against the stored ones,

.. math:: z = \frac{\hat\mu_{new} - \hat\mu_{stored}}{\sqrt{\mathrm{se}_{new}^2 + \mathrm{se}_{stored}^2}},

two-sided at family-wise false-failure rate ``alpha`` with a Bonferroni correction over the
``2 dim`` tests (each at ``alpha / (2 dim)``)."""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from reference import store
from reference.build import run_accepted


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The largest |z| over the tests, the threshold it is compared with, and the verdict."""

    max_abs_z: float
    threshold: float
    worst: str

    @property
    def passed(self) -> bool:
        return self.max_abs_z <= self.threshold


def compare(new: dict, old: dict, alpha: float = 1e-3) -> CheckResult:
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
    return CheckResult(float(np.max(z[key])), float(stats.norm.isf(alpha / (2 * tests))),
                       f"{key}[{int(np.argmax(z[key]))}]")


def check(target, seed: int, backend="numpyro", num_chains=4, num_warmup=1000, num_draws=2500, contract=None,
          directory=None, alpha: float = 1e-3, target_accept=0.8) -> CheckResult:
    """Rebuild ``target``'s reference with ``seed`` (not stored) and compare it with the stored one."""
    header = store.read_header(target, directory)
    if seed == header.get("seed"):
        raise ValueError(f"seed must differ from the stored reference's seed {header.get('seed')}, got {seed}")
    _, stored, _ = run_accepted(target, backend, num_chains, num_warmup, num_draws, seed, contract,
                               target_accept=target_accept)
    return compare(store.summarize(stored), header["moments"], alpha)
