r"""Successive halving with pruning rate :math:`\eta` (MAMBA paper,
section 3.2, Algorithm 1; Karnin, Koren & Somekh 2013).

With :math:`M` arms, :math:`K = \lfloor\log_\eta M\rfloor` rounds and total budget :math:`T`, round
:math:`i = 0..K-1` gives each arm of :math:`S_i` the budget

.. math:: r_i = \frac{T}{|S_i|\,K},

observes its reward :math:`\nu_s` (higher is better) and keeps the :math:`\lfloor|S_i|/\eta\rfloor`
arms with the largest rewards. Every round spends at most :math:`T/K`, so the whole run at most
:math:`T`. After round :math:`K-1`, :math:`\lfloor M/\eta^K\rfloor` arms (1 to :math:`\eta - 1`) remain; the
winner is the arm with the largest reward in the last round (Algorithm 1 stops there; its
survivors were all observed with the same budget). Ties are broken by the arm's index (lower
first), so the outcome is a function of the rewards alone.

Theorem 1 (i) states the bound
:math:`(2\eta - 1)\log_\eta M \exp(-\eta T / (4\sigma^2 H_2 (\log_\eta M + 1)))`
on the probability of pruning the best arm, with :math:`H_2 = \max_{s \ne 1} s / \alpha_s^2` over arms
sorted by mean reward and gaps :math:`\alpha_s = \nu_1 - \nu_s`, for rewards observed with budget
:math:`r` at variance :math:`\sigma^2 / r` (Lemma 2); :func:`pruning_bound` evaluates it. It is not a
bound: on a Gaussian bandit of that model the best arm is pruned more often than it says
(``tests/test_tune_halving.py``: 0.094 where it says 0.05). Its proof compares arm :math:`s`'s estimate
with the best arm's mean instead of its estimate (the difference has variance :math:`2\sigma^2/r`), and
writes :math:`\eta^i/M` as :math:`\eta/s_i` where it is :math:`1/(\eta s_i)`, :math:`s_i = M/\eta^{i+1}`:
the exponent is :math:`\eta^2` times too large. :func:`corrected_pruning_bound` redoes the proof of
Lemma 3 with both estimates noisy and exact Gaussian tails; it holds in those tests.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np
import scipy.stats

from sgbench.base.arguments import integer_at_least, positive_finite

DEFAULT_ETA = 3


def num_rounds(num_arms: int, eta: int) -> int:
    r""":math:`K = \lfloor\log_\eta M\rfloor`, computed in integers (no rounding error at powers of eta).

    Args:
        num_arms: M >= eta.
        eta: the pruning rate, an integer >= 2.

    Returns:
        the number of rounds K >= 1.
    """
    rounds, size = 0, eta
    while size <= num_arms:
        rounds, size = rounds + 1, size * eta
    return rounds


def check_arms_and_eta(num_arms, eta) -> tuple[int, int]:
    """``(M, eta)`` validated: eta an integer >= 2 and M >= eta (at least one round).

    Raises:
        ValueError: naming ``eta`` or the number of arms, with the accepted range.
    """
    eta = integer_at_least("eta", eta, 2)
    num_arms = integer_at_least("the number of arms", num_arms, 1)
    if num_arms < eta:
        raise ValueError(f"the number of arms must be >= eta={eta} for one round of halving, got {num_arms}")
    return num_arms, eta


@dataclasses.dataclass(frozen=True)
class Round:
    """One round of Algorithm 1.

    Attributes:
        index: i, from 0.
        arms: the arms of S_i (indices into the grid), in grid order.
        budget_per_arm: r_i.
        rewards: the observed reward of each arm of ``arms`` (same order); -inf for a diverged arm.
        kept: the arms of S_{i+1}, best first.
    """

    index: int
    arms: tuple[int, ...]
    budget_per_arm: float
    rewards: tuple[float, ...]
    kept: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Halving:
    """The rounds of one run of Algorithm 1 and its winner (an index into the grid)."""

    rounds: tuple[Round, ...]
    winner: int

    @property
    def budget_spent(self) -> float:
        """The sum of r_i |S_i| over rounds (at most T)."""
        return float(sum(r.budget_per_arm * len(r.arms) for r in self.rounds))


def best_first(arms: Sequence[int], rewards: Sequence[float]) -> list[int]:
    """``arms`` sorted by decreasing reward, ties by increasing arm index; NaN counts as -inf."""
    cleaned = [-math.inf if math.isnan(r) else float(r) for r in rewards]
    return [arm for _, arm in sorted(zip(cleaned, arms), key=lambda pair: (-pair[0], pair[1]))]


def successive_halving(num_arms: int, total_budget: float, evaluate: Callable[[int, list[int], float], list[float]],
                       eta: int = DEFAULT_ETA) -> Halving:
    """Algorithm 1 of MAMBA on arms ``0..num_arms-1``.

    Args:
        num_arms: M >= eta.
        total_budget: T > 0 (gradient evaluations or seconds: whatever ``evaluate`` spends).
        evaluate: ``evaluate(round_index, arms, budget_per_arm) -> rewards``: runs every arm of ``arms``
            for ``budget_per_arm`` more (continuing what it ran in earlier rounds) and returns one reward per
            arm (higher is better; NaN or -inf for an arm that diverged).
        eta: the pruning rate, an integer >= 2 (default 3).

    Returns:
        the :class:`Halving`: each round's arms, budget, rewards and survivors, and the winner.
    """
    num_arms, eta = check_arms_and_eta(num_arms, eta)
    total_budget = positive_finite("total budget", total_budget)
    rounds_total = num_rounds(num_arms, eta)
    arms, rounds = list(range(num_arms)), []
    for i in range(rounds_total):
        budget = total_budget / (len(arms) * rounds_total)
        rewards = [float(r) for r in evaluate(i, list(arms), budget)]
        if len(rewards) != len(arms):
            raise ValueError(f"evaluate returned {len(rewards)} rewards for {len(arms)} arms in round {i}")
        ranked = best_first(arms, rewards)
        kept = ranked[:len(arms) // eta]
        rounds.append(Round(i, tuple(arms), budget, tuple(rewards), tuple(kept)))
        arms = sorted(kept)
    last = rounds[-1]
    return Halving(tuple(rounds), best_first(last.arms, last.rewards)[0])


def complexity(mean_rewards: Sequence[float]) -> float:
    r""":math:`H_2 = \max_{s \ge 2} s / \alpha_s^2` (Definition 1; Audibert, Bubeck & Munos 2010) of arms with
    these mean rewards, ``s`` the rank (1 = best) and :math:`\alpha_s` the gap to the best. The best arm must
    be unique (a zero gap makes :math:`H_2` infinite)."""
    ordered = np.sort(np.asarray(mean_rewards, dtype=float))[::-1]
    gaps = ordered[0] - ordered[1:]
    ranks = np.arange(2, ordered.size + 1)
    return float(np.max(ranks / gaps**2)) if np.all(gaps > 0) else math.inf


def pruning_bound(mean_rewards: Sequence[float], variance_proxy: float, total_budget: float,
                  eta: int = DEFAULT_ETA) -> float:
    r"""Theorem 1 (i): the bound :math:`(2\eta-1)\log_\eta M \exp(-\eta T / (4\sigma^2 H_2(\log_\eta M + 1)))`
    on the probability that Algorithm 1 prunes the best arm, for rewards whose estimate after budget r has
    sub-Gaussian variance proxy ``variance_proxy / r`` (:math:`\sigma^2`).

    Args:
        mean_rewards: the arms' mean rewards (the best unique).
        variance_proxy: :math:`\sigma^2` > 0.
        total_budget: T > 0.
        eta: the pruning rate (default 3).

    Returns:
        the bound (it may exceed 1: then it says nothing).
    """
    num_arms, eta = check_arms_and_eta(len(mean_rewards), eta)
    sigma2 = positive_finite("variance_proxy", variance_proxy)
    total_budget = positive_finite("total budget", total_budget)
    log_m = math.log(num_arms, eta)
    exponent = eta * total_budget / (4 * sigma2 * complexity(mean_rewards) * (log_m + 1))
    return (2 * eta - 1) * log_m * math.exp(-exponent)


def corrected_pruning_bound(mean_rewards: Sequence[float], variance_proxy: float, total_budget: float,
                            eta: int = DEFAULT_ETA) -> float:
    r"""A bound on the probability that Algorithm 1 prunes the best arm when each round observes every arm at
    its mean plus independent :math:`N(0, \sigma^2 / r_i)` noise: the proof of Lemma 3 with the best arm's
    estimate noisy too (module docstring).

    In round i (:math:`n_i` arms, :math:`k_i = \lfloor n_i/\eta\rfloor` kept), pruning the best arm needs
    :math:`k_i` arms above it, so at least :math:`k_i - j` of those outside the :math:`j` best others
    (:math:`0 \le j < k_i`). Markov's inequality on their number bounds the probability by
    :math:`\sum_s \bar\Phi(\alpha_s \sqrt{r_i / (2\sigma^2)}) / (k_i - j)` over the gaps of ranks
    :math:`j + 2 .. n_i` (the smallest gaps, the worst case for which arms survived); the best :math:`j` is
    taken, and a union bound adds the rounds.

    Args:
        mean_rewards: the arms' mean rewards.
        variance_proxy: :math:`\sigma^2` > 0.
        total_budget: T > 0.
        eta: the pruning rate (default 3).

    Returns:
        the bound (it may exceed 1).
    """
    num_arms, eta = check_arms_and_eta(len(mean_rewards), eta)
    sigma2 = positive_finite("variance_proxy", variance_proxy)
    total_budget = positive_finite("total budget", total_budget)
    gaps = np.sort(np.max(mean_rewards) - np.asarray(mean_rewards, dtype=float))
    rounds, n, bound = num_rounds(num_arms, eta), num_arms, 0.0
    for _ in range(rounds):
        budget, kept = total_budget / (n * rounds), n // eta
        tails = scipy.stats.norm.sf(gaps[1:n] * math.sqrt(budget / (2 * sigma2)))  # ranks 2 .. n
        bound += min(tails[j:].sum() / (kept - j) for j in range(kept))
        n = kept
    return float(bound)
