r"""The MAMBA paper's claims about its Tables 1, 2 and 3, in its words, each tested on the runs of
``sgbench reproduce mamba-tableN`` (``sgbench.bench.reproduce.mamba_tables``) at every sampler the paper states it
for.

The claims are the sentences of sections 4.1, 4.2 and 4.3 about each table, about the hyperparameters of its runs
(the paper's Tables 4 and 8), and about the figure presented beside it (Figures 1 to 3, the tuning runs' curves,
which the suite does not draw: not testable). Each table cell is the mean over runs (10 at ``--scale paper``, as
the paper's) of one method's final runs for one sampler; two cells are compared by Welch's t-test over their runs
(``claims.RunsComparison``), and a claim over several samplers with the Bonferroni correction of
``sgbench.bench.reproduce.claims``, so that its false-contradiction rate is at most ``FAMILY_RATE`` (5 %) under
normal run-to-run scatter. A cell with a diverged final run (a score that left the finite numbers) has an infinite
mean, above any finite one: a divergence seen once makes the expected score infinite.

The paper's "tend to" is read as "at more than half of the samplers" (:func:`most`); "perform the best" and
"consistently ... the lowest" as "below each other method at every sampler" (``ordering``); "for some samplers"
as "at one sampler at least" (``somewhere``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from sgbench.bench.reproduce.claims import (
    CONTRADICTED,
    FAMILY_RATE,
    HELD,
    WITHIN_NOISE,
    Claim,
    RunsComparison,
    critical_z,
    not_testable,
    ordering,
    somewhere,
)

SAMPLER_LABELS = {"sgld": "SGLD", "sgld_cv": "SGLD-CV", "sghmc": "SGHMC", "sghmc_cv": "SGHMC-CV", "sgnht": "SGNHT",
                  "sgnht_cv": "SGNHT-CV"}
METHOD_LABELS = {"mamba-ksd": "MAMBA-KSD", "mamba-fssd": "MAMBA-FSSD", "grid": "grid search", "heuristic": "heuristic"}
BASELINES = ("grid", "heuristic")
TEST = ("z: Welch's t over the two cells' runs, as the normal quantile of its tail probability; ± the standard error "
        "over the runs; a diverged final run makes its cell infinite")


def most(words: str, where: str, groups, lower_label: str, paper: str = "", reason: str = "",
         rate: float = FAMILY_RATE) -> Claim:
    """The claim "``lower_label``'s value is below every other's at most settings" (the paper's "tend to perform
    best"): held when it is below each other beyond the noise at more than half of the settings, contradicted when
    some other is below it beyond the noise at half of them or more (no majority is left), within noise otherwise.
    Every comparison is tested at the one-sided Bonferroni critical value of all ``m`` comparisons
    (``critical_z``). Its error rate is ``rate``: where the claim is true, the settings where it is false are fewer
    than half, so a contradiction needs a reversal beyond the noise at a setting where it is true, whose
    probability is at most ``rate / m`` per comparison there. A setting without comparisons (not run) counts as
    neither. Generic, but kept here while MAMBA's "tend to" is the only claim read as "most settings".

    Args:
        words: the claim in the paper's words.
        where: where the paper states it.
        groups: ``(setting, [(comparison, other_label), ...])`` for every setting the claim is about, each
            comparison's ``lower`` being ``lower_label``'s value (at least one comparison in all).
        lower_label: what the claim says is lowest ("MAMBA-KSD").
        paper: the paper's values behind the claim.
        reason: what else the reader needs.
        rate: the false-contradiction rate.

    Returns:
        the claim with its verdict; ``ours`` lists every comparison's values and ``z``.
    """
    groups = [(setting, list(pairs)) for setting, pairs in groups]
    m = sum(len(pairs) for _, pairs in groups)
    if not m:
        raise ValueError("a claim about most settings needs at least one comparison")
    z = critical_z(m, rate)
    scores = {s: [c.z() for c, _ in pairs] for s, pairs in groups}
    won = [s for s, pairs in groups if pairs and min(scores[s]) > z]
    lost = [s for s, pairs in groups if pairs and min(scores[s]) < -z]
    unrun = [s for s, pairs in groups if not pairs]
    n = len(groups)
    if 2 * len(won) > n:
        verdict, why = HELD, f"below every other beyond the noise at {len(won)} of {n}: {', '.join(won)}"
    elif 2 * len(lost) >= n:
        verdict, why = CONTRADICTED, f"another below it beyond the noise at {len(lost)} of {n}: {', '.join(lost)}"
    else:
        verdict = WITHIN_NOISE
        why = (f"below every other beyond the noise at {len(won)} of {n}" + (f" ({', '.join(won)})" if won else "")
               + f", another below it beyond the noise at {len(lost)}" + (f" ({', '.join(lost)})" if lost else "")
               + (f", not run at {', '.join(unrun)}" if unrun else ""))
    test = f"'most' read as more than half of the {n} settings; one-sided tests of {m} comparisons, critical " \
           f"|z| = {z:.2f} (Bonferroni)"
    ours = "; ".join(c.text(lower_label, other) for _, pairs in groups for c, other in pairs)
    return Claim(words, where, verdict, paper=paper, ours=ours,
                 reason="; ".join(part for part in (why, test, reason) if part), error_rate=rate)


def _values(frame: pd.DataFrame, method: str, sampler: str, key: str) -> np.ndarray:
    """The score ``key`` of every run of (``method``, ``sampler``)."""
    return frame.loc[(frame["method"] == method) & (frame["sampler"] == sampler), key].to_numpy(dtype=np.float64)


def _run(frame: pd.DataFrame, *methods: str) -> list[str]:
    """The samplers, in the paper's order, of which the runs hold every one of ``methods``."""
    cells = set(zip(frame["method"], frame["sampler"]))
    return [s for s in SAMPLER_LABELS if all((m, s) in cells for m in methods)]


def _unrun(claim: Claim, run: list[str], needs_all: str) -> Claim:
    """``claim``, stated for all six samplers and tested at those ``run`` only: a verdict ``needs_all`` (``held``
    for a claim at every sampler, ``contradicted`` for one at some sampler), which the samplers not run could
    overturn, becomes ``within noise``."""
    unrun = [label for s, label in SAMPLER_LABELS.items() if s not in run]
    if not unrun or claim.verdict != needs_all:
        return claim
    return dataclasses.replace(claim, verdict=WITHIN_NOISE, reason=f"{needs_all} at the samplers run, but not run at "
                               f"{', '.join(unrun)} (the paper states it for all six); {claim.reason}")


def _paper(table, key: str, methods) -> str:
    """The paper's values of ``key`` for ``methods`` at each sampler: ``SGLD 66 vs 106; ...``."""
    column = [k for k, _ in table.columns].index(key)
    return "; ".join(f"{label} " + " vs ".join(f"{table.paper[m][s][column]:g}" for m in methods)
                     for s, label in SAMPLER_LABELS.items())


def _pairwise(test, words: str, where: str, table, frame: pd.DataFrame, key: str, label: str, lower: str,
              higher: str, reason: str) -> Claim:
    """``test`` (``ordering``: at every sampler; ``somewhere``: at some sampler) of ``lower``'s ``key`` below
    ``higher``'s, over the samplers run (:func:`_unrun`); not testable when none has both methods run."""
    run = _run(frame, lower, higher)
    if not run:
        return not_testable(words, where, f"not run: no sampler has runs of both {METHOD_LABELS[lower]} and "
                                          f"{METHOD_LABELS[higher]}")
    comparisons = [RunsComparison.of(SAMPLER_LABELS[s], _values(frame, lower, s, key), _values(frame, higher, s, key))
                   for s in run]
    claim = test(words, where, comparisons, METHOD_LABELS[lower], METHOD_LABELS[higher],
                 paper=f"{label}: " + _paper(table, key, (lower, higher)), reason=f"{reason}; {TEST}")
    return _unrun(claim, run, HELD if test is ordering else CONTRADICTED)


def _lowest(table, frame: pd.DataFrame, words: str, where: str, key: str, label: str,
            lower: str = "mamba-ksd") -> list[Claim]:
    """``lower`` below each baseline in ``key`` at every sampler: one ``ordering`` claim per baseline."""
    return [_pairwise(ordering, words, where, table, frame, key, label, lower, other,
                      f"{label} of {METHOD_LABELS[lower]} below {METHOD_LABELS[other]}'s at every sampler")
            for other in BASELINES]


def _diverged(table, frame: pd.DataFrame, sampler: str) -> str:
    """``"0 of 10 MAMBA-KSD, 1 of 10 grid search, ..."``: per method, the final runs of ``sampler`` whose scores (the
    table's columns) are not finite."""
    parts = []
    for method in table.methods:
        runs = frame[(frame["method"] == method) & (frame["sampler"] == sampler)]
        scores = runs[[key for key, _ in table.columns]].to_numpy(dtype=np.float64)
        parts.append(f"{int((~np.isfinite(scores)).any(axis=1).sum())} of {len(runs)} {METHOD_LABELS[method]}")
    return ", ".join(parts)


def table1(table, frame: pd.DataFrame) -> tuple[Claim, ...]:
    """Section 4.1's claims about Figure 1 and the hyperparameters of Table 1's runs (the paper's Table 4), then
    about Table 1 (logistic regression)."""
    where = "section 4.1, the paragraph presenting Table 1"
    best = "We find that the MAMBA-optimized samplers perform the best in terms of KSD"
    not_here = ("stated of Figure 1 (the KSD curves of the tuning runs) and of the paper's one tuning per sampler "
                "(Table 4); the suite draws no such curves, and tunes once per run over its own grid, whose "
                "smallest batch is 1 % (the paper's has 0.1 %); the KSD of Table 1's final runs is tested by the "
                "claims of the paragraph presenting Table 1, below")
    return (
        not_testable("Our results from Figure 1 show that optimizing the hyperparameters with MAMBA, using either KSD "
                     "or FSSD, produces samples that have the lowest KSD over all but one of the six samplers. For "
                     "the SGNHT sampler, the heuristic approach gives the lowest KSD",
                     "section 4.1, the paragraph presenting Figure 1, fourth and fifth sentences", not_here),
        not_testable("for the five out of six samplers where MAMBA performs the best in terms of KSD, MAMBA chooses "
                     "an optimal batch size of 1%", "section 4.1, the paragraph presenting Figure 1, last sentence",
                     not_here + "; the batch fractions each method chose are in the table"),
        *_lowest(table, frame, best, f"{where}, fourth sentence", "ksd", "KSD", "mamba-ksd"),
        *_lowest(table, frame, best, f"{where}, fourth sentence", "ksd", "KSD", "mamba-fssd"),
        not_testable("As a result, the Monte Carlo estimates of the posterior standard deviations generally perform "
                     "well", f"{where}, fifth sentence",
                     "the paper sets no bound for 'perform well' (its own xi x 100 range from 0.8 to 3,084); ours "
                     "are in the table"),
    )


def table2(table, frame: pd.DataFrame) -> tuple[Claim, ...]:
    """Section 4.2's claims about Table 2 (probabilistic matrix factorisation)."""
    where = "section 4.2, the paragraph presenting Figure 2 and Table 2"
    lower_xi = _pairwise(somewhere, "... but that for some samplers the heuristic approach gives a lower error on the "
                         "estimated standard deviation", f"{where}, seventh sentence", table, frame, "xi_x100",
                         "xi x 100", "heuristic", "mamba-ksd",
                         "xi x 100 of the heuristic below MAMBA-KSD's at one sampler at least")
    return (
        not_testable("From Figure 2 we can see that the samplers tuned using MAMBA tend to outperform the ones tuned "
                     "with the other two methods", f"{where}, first sentence",
                     "stated of Figure 2 (the KSD curves of the tuning runs), which the suite does not draw; the "
                     "KSD of Table 2's final runs is tested by the next two claims"),
        *_lowest(table, frame, "We find that MAMBA consistently identifies hyperparameters that give the lowest KSD",
                 f"{where}, seventh sentence", "ksd", "KSD"),
        lower_xi,
        not_testable("This could be due to the random realisation of the SGMCMC chain", f"{where}, eighth sentence",
                     "a conjecture about the cause of the heuristic's lower xi, not a statement of the table's values; "
                     "whether the heuristic's xi is below MAMBA-KSD's beyond the run-to-run noise is the claim above: "
                     f"{lower_xi.verdict}"),
    )


def _batch(frame: pd.DataFrame, words: str, where: str) -> Claim:
    """"MAMBA finds a batch size of 1 % for all samplers": held when every MAMBA-KSD run of every sampler chose a
    1 % batch, contradicted when one chose another (an observed choice: no sampling tolerance)."""
    mamba = frame[frame["method"] == "mamba-ksd"]
    if not len(mamba):
        return not_testable(words, where, "not run: no MAMBA-KSD runs")
    other = mamba[mamba["batch_fraction"] != 0.01]
    others = [f"{SAMPLER_LABELS[s]} run {r} {100 * b:g} %"
              for s, r, b in zip(other["sampler"], other["run"], other["batch_fraction"])]
    ours = f"{len(mamba) - len(other)} of {len(mamba)} MAMBA-KSD runs chose 1 %" + (
        f"; the others: {', '.join(others)}" if others else "")
    claim = Claim(words, where, CONTRADICTED if others else HELD, paper="1 % for every sampler (Table 8)",
                  ours=ours, error_rate=0.0,
                  reason="every MAMBA-KSD tuning run's chosen batch fraction, over the paper's batch grid (100 %, "
                         "10 %, 1 %): an observed choice, so no sampling tolerance")
    return _unrun(claim, _run(frame, "mamba-ksd"), HELD)


def table3(table, frame: pd.DataFrame) -> tuple[Claim, ...]:
    """Section 4.3's claims about Table 3 (Bayesian neural network) and its runs' hyperparameters (Table 8)."""
    where = "section 4.3, last paragraph"
    overall = "Overall, the results in Table 3 show that MAMBA-optimized samplers tend to perform best"

    def tend(key: str, label: str, words: str, reason: str) -> Claim:
        pairs = {s: [(RunsComparison.of(SAMPLER_LABELS[s], _values(frame, "mamba-ksd", s, key),
                                        _values(frame, other, s, key)), METHOD_LABELS[other])
                      for other in BASELINES if s in _run(frame, "mamba-ksd", other)] for s in SAMPLER_LABELS}
        if not any(pairs.values()):
            return not_testable(words, f"{where}, first sentence", "not run: no sampler has runs of MAMBA-KSD and a "
                                                                   "baseline")
        paper = "" if key == "ksd" else f"{label} of " + ", ".join(
            METHOD_LABELS[m] for m in ("mamba-ksd", *BASELINES)) + ": " + _paper(table, key, ("mamba-ksd", *BASELINES))
        return most(words, f"{where}, first sentence", [(SAMPLER_LABELS[s], p) for s, p in pairs.items()],
                    "MAMBA-KSD", paper=paper,
                    reason=f"{label} of MAMBA-KSD below grid search's and the heuristic's; {reason}; {TEST}")

    return (
        not_testable("We find that the samplers tuned using MAMBA tend to outperform the other approaches in terms of "
                     "ECE", "section 4.3, second paragraph, second sentence",
                     "stated of Figure 3 (the ECE curves of the tuning runs), which the suite does not draw; the "
                     "ECE of Table 3's final runs is tested by the claims of the last paragraph, read on the ECE"),
        tend("ksd", "KSD", overall + " in terms of KSD",
             "the paper's Table 3 reports no KSD; ours is that of the same final runs"),
        tend("ece_pct", "ECE %", overall + " ...",
             "the sentence read on Table 3's own scores (it reports ECE and MCE, not KSD): the ECE"),
        tend("mce_pct", "MCE %", overall + " ...", "the sentence read on Table 3's own scores: the MCE"),
        not_testable("... and when not the best they produce results which are very close to the best performing "
                     "method", f"{where}, first sentence",
                     "the paper gives no tolerance for 'very close' (its own MAMBA-KSD ECE for SGNHT is 9.3 % against "
                     "grid search's 5.4 %)"),
        _batch(frame, "For all samplers, MAMBA finds an optimal batch size of 1%", f"{where}, second sentence"),
        not_testable("... which is ten times smaller than the batch size of the other methods and therefore results "
                     "in a faster and highly accurate algorithm", f"{where}, second sentence",
                     "'faster' is wall time, which the suite does not compare (budgets are in gradient evaluations), "
                     "and 'highly accurate' has no bound; our grid search chooses the batch fraction too (the paper's "
                     "fixes 10 %)"),
        not_testable("For SGNHT both MAMBA and grid search found a step size that was slightly too large ... which "
                     "caused the sampler to lose stability for longer chains. In contrast, the sampler tuned using the "
                     "heuristic method is the only one that remained stable", f"{where}, third and fourth sentences",
                     "about the paper's first tuning over its own step-size grid on MNIST (log10 h = -4.5 and -4), "
                     "which it replaced before Table 3 by a grid of smaller steps; ours tunes once over its grid, and "
                     "SGNHT's diverged final runs are " + _diverged(table, frame, "sgnht")),
    )


CLAIMS = {"mamba-table1": table1, "mamba-table2": table2, "mamba-table3": table3}


def claims(table, frame: pd.DataFrame) -> tuple[Claim, ...]:
    """The paper's claims about ``table`` (a ``sgbench.bench.reproduce.mamba_tables.Table``), tested on ``frame``,
    one row per (sampler, method, run) with its scores.

    Args:
        table: the table (its ``name``, ``columns`` and ``paper`` values are used).
        frame: every run, as ``mamba_tables.reproduce`` returns them.

    Returns:
        the claims, in the order the paper makes them.
    """
    return CLAIMS[table.name](table, frame)
