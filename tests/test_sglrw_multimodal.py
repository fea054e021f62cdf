"""Figures 2 and 8 of the SGLRW paper (``bench/reproduce/sglrw_multimodal.py``): the histogram's bins and its
Kolmogorov-Smirnov distance, the claims on constructed runs (held, contradicted, within noise, at the noise scales
named), the record and the rendering from it alone, and a tiny run of the command (``integration``)."""

from __future__ import annotations

import math

import jax
import numpy as np
import pandas as pd
import pytest

from sgbench import targets
from sgbench.bench.cli import main
from sgbench.bench.reproduce import _record, docs_blocks, sglrw_multimodal

TARGET = targets.get("multimodal1d")
START = float(TARGET.initial_position()[0])


def test_bins_are_two_lattice_cells_with_edges_midway_between_lattice_points():
    edges = sglrw_multimodal.bin_edges(START)
    cell = math.sqrt(2 * sglrw_multimodal.STEP_SIZE)
    offsets = (edges - START) / cell
    np.testing.assert_allclose(offsets - np.round(offsets - 0.5), 0.5, atol=1e-9)  # midway between lattice points
    np.testing.assert_allclose(np.diff(edges), 2 * cell)
    assert edges[0] >= START - sglrw_multimodal.HALF_WIDTH and edges[-1] <= START + sglrw_multimodal.HALF_WIDTH
    assert edges[0] - 2 * cell < START - sglrw_multimodal.HALF_WIDTH  # as far as the half width allows


def test_chain_counts_place_every_sample():
    edges = np.array([0.0, 1.0, 2.0])
    counts = sglrw_multimodal.chain_counts(np.array([[-5.0, 0.5, 0.5, 3.0], [np.inf, np.nan, 1.5, -np.inf]]), edges)
    np.testing.assert_array_equal(counts, [[1, 2, 0, 1, 0], [0, 0, 1, 0, 3]])  # below, 2 bins, above, non-finite


def test_binned_ks_of_exact_draws_shifted_lost_and_lattice_valued_ones():
    edges = sglrw_multimodal.bin_edges(START)
    exact = np.asarray(TARGET.sample(jax.random.key(0), 20_000))[:, 0].reshape(100, 200)

    def ks(samples):
        return sglrw_multimodal.binned_ks(sglrw_multimodal.chain_counts(samples, edges).sum(axis=0), edges,
                                          TARGET.mixture)

    assert ks(exact) < 0.02  # exact draws: about 1/sqrt(n)
    assert ks(exact + 2.0) > 0.2
    lost = exact.copy()
    lost[:25] = np.inf
    assert ks(lost) >= 0.25  # a quarter of the mass at infinity
    assert ks(np.full((2, 5), np.nan)) == 1.0
    # the same draws rounded to SGLRW's lattice fall in the same bins: the lattice is no disagreement
    cell = math.sqrt(2 * sglrw_multimodal.STEP_SIZE)
    assert ks(START + np.round((exact - START) / cell) * cell) == ks(exact)
    per_chain = sglrw_multimodal.chain_counts(exact, edges)  # independent draws: about 0.6 / sqrt(n)
    assert 0.002 < sglrw_multimodal.ks_bootstrap_sd(per_chain, edges, TARGET.mixture, np.random.default_rng(0)) < 0.01


def test_the_targets_spread():
    exact = np.asarray(TARGET.sample(jax.random.key(1), 200_000))[:, 0]
    assert sglrw_multimodal.spread(TARGET.mixture) == pytest.approx(np.subtract(*np.percentile(exact, [99, 1])),
                                                                    abs=0.1)


def _runs(ks, sd=0.01, diverged=None):
    """Constructed runs: ``ks`` maps (alpha, scale) to the distances of SGLD, SGLRW and Clipped-SGLD."""
    rows = [{"alpha": alpha, "noise scale": scale, "sampler": name, "ks": value, "ks_sd": sd,
             "diverged": (diverged or {}).get((alpha, scale, name), 0), "spread": 10.0, "counts": []}
            for (alpha, scale), values in ks.items() for name, value in zip(sglrw_multimodal.SAMPLERS, values)]
    return pd.DataFrame(rows)


def _as_the_paper(changes=None):
    """Distances in the paper's pattern: SGLD's growing with the scale, SGLRW's lowest, Clipped-SGLD's between."""
    ks = {(alpha, scale): values for alpha in sglrw_multimodal.ALPHAS
          for scale, values in zip(sglrw_multimodal.NOISE_SCALES,
                                   [(0.05, 0.02, 0.07), (0.1, 0.03, 0.08), (0.4, 0.05, 0.15), (0.8, 0.1, 0.3)])}
    ks.update(changes or {})
    return ks


def test_claims_held_at_the_scales_the_paper_states_them_for():
    claims = sglrw_multimodal.claims(_runs(_as_the_paper()))
    assert [claim.verdict for claim in claims] == ["held"] * 6
    caption, fails, stable, both, across, hypothesis = claims
    assert caption.ours.count("α-stable (α = 1.5), scale") == 2 and "scale 10:" in caption.ours  # the large scales
    assert "Gaussian" not in caption.ours and "scale 0.1:" not in caption.ours
    assert fails.ours.count("SGLD at scale 0.1 vs") == 2
    assert stable.error_rate == 0.0 and "scale 100: 0" in stable.ours
    assert both.ours.count("vs SGLD") == 4 and "critical |z| = 2.24" in both.reason
    assert across.ours.count("scale") == 4  # every scale
    assert hypothesis.ours.count("Gaussian (α = 2)") == 2 and hypothesis.ours.count("α-stable") == 2


def test_claims_within_noise_and_contradicted():
    # Clipped-SGLD below SGLRW at the smallest scale beyond the noise; SGLRW equal to SGLD under Gaussian noise at 10
    runs = _runs(_as_the_paper({(1.5, 0.1): (0.05, 0.09, 0.02), (2.0, 10.0): (0.4, 0.4, 0.15)}),
                 diverged={(1.5, 100.0, "sglrw"): 2})
    caption, fails, stable, both, across, hypothesis = sglrw_multimodal.claims(runs)
    assert across.verdict == "contradicted" and "reversed beyond the noise at α-stable (α = 1.5), scale 0.1" in \
        across.reason
    assert hypothesis.verdict == "within noise" and "inside the noise at Gaussian (α = 2), scale 10" in \
        hypothesis.reason
    assert stable.verdict == "contradicted" and "scale 100: 2" in stable.ours
    assert caption.verdict == "held" and fails.verdict == "held"


def test_the_docs_block_renders_from_the_record_alone(tmp_path, monkeypatch):
    """A record of every run of the command's grid (constructed), rendered running nothing; a run missing from the
    record is an error, not a computation."""
    from sgbench.base.unit_record import append
    from sgbench.bench.running import run as running

    command = "sgbench reproduce sglrw-multimodal --scale quick --db r.sqlite --chains 4 --steps 100"
    with pytest.raises(_record.NotRecorded, match="sglrw_multimodal_runs.jsonl holds no finished unit"):
        docs_blocks.render(command, tmp_path)
    record = _record.record_path(tmp_path / "r.sqlite", "sglrw-multimodal")
    settings = sglrw_multimodal.unit_settings(4, 100, 0)
    counts = np.zeros(len(sglrw_multimodal.bin_edges(START)) + 2, dtype=int)
    counts[len(counts) // 2] = 1000
    for (alpha, scale), values in _as_the_paper().items():
        for name, ks in zip(sglrw_multimodal.SAMPLERS, values):
            append(record, settings, (alpha, scale, name),
                   {"counts": counts.tolist(), "ks": ks, "ks_sd": 0.01, "diverged": 0, "spread": 10.0})
    monkeypatch.setattr(running, "run", None)  # rendering runs nothing
    body = docs_blocks.render(command, tmp_path)
    assert body.startswith("**claims: 6 held, 0 contradicted, 0 within noise, 0 not testable**")
    assert "| noise | noise scale | SGLD | SGLRW | Clipped SGLD |" in body
    assert "| α-stable (α = 1.5) | 100 | 0.800 ± 0.010 | 0.100 ± 0.010 | 0.300 ± 0.010 |" in body
    assert "**Spread of the kept samples" in body


@pytest.mark.integration
def test_tiny_run_prints_its_claims_and_writes_its_page(tmp_path, capsys):
    argv = ["reproduce", "sglrw-multimodal", "--chains", "8", "--steps", "500", "--out", str(tmp_path), "--db",
            str(tmp_path / "r.sqlite"), "--no-progress"]
    status = main(argv)
    out = capsys.readouterr().out
    assert "claims: " in out and "Figure 2 caption" in out and status == (1 if "CONTRADICTED" in out else 0), out
    page = (tmp_path / "sglrw_multimodal.html").read_text()
    assert "The paper&#39;s claims" in page and "data:image/png;base64" in page
