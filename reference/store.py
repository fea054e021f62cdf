"""Stored gold-standard references in ``reference/data/``: per target, ``<name>-<params hash>.npz``
(the thinned draws, float32, compressed) and a ``.json`` header with the moments, their Monte
Carlo standard errors, the diagnostics, the provenance (command, seed, library versions) and the
sha256 of the ``.npz``, and ``header_sha256``, the sha256 of the header's own canonical JSON (every
field but itself). Loading checks both checksums, so that neither the draws nor anything the gates
read from the header (moments, standard errors, diagnostics, parameters) can be edited by hand, and
that the header is the target's."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from sgbench.reference.metrics import ess, moment_mcse
from sgbench.reference.metrics._arviz import per_dimension
from sgbench.targets._truth import Truth

DATA_DIR = Path(__file__).resolve().parent / "data"
FORMAT_VERSION = 1


class ReferenceFileError(ValueError):
    """A stored reference that is missing, corrupted, or not the target's."""


def canonical_params(target) -> dict:
    """``target.params`` that define the posterior, as JSON sees them (tuples become lists), keys
    sorted: the gradient-noise model (``noise`` and ``noise_*``) changes no density and is left out."""
    kept = {key: value for key, value in target.params.items() if key != "noise" and not key.startswith("noise_")}
    return json.loads(json.dumps(kept, sort_keys=True, default=str))


def build_command(target) -> str:
    """The ``sgbench reference build`` command line of ``target``'s reference, one ``--param`` per parameter
    that defines its posterior (lists as JSON)."""
    params = " ".join(f"--param {key}={json.dumps(value) if isinstance(value, list) else value}"
                      for key, value in canonical_params(target).items() if value is not None)
    return f"sgbench reference build {target.name}" + (f" {params}" if params else "")


def stem(target) -> str:
    """``<name>-<first 12 hex digits of sha256 of the canonical params>``."""
    digest = hashlib.sha256(json.dumps(canonical_params(target), sort_keys=True).encode()).hexdigest()
    return f"{target.name}-{digest[:12]}"


def paths(target, directory=None) -> tuple[Path, Path]:
    """The (draws ``.npz``, header ``.json``) paths of ``target``'s reference in ``directory``."""
    directory = DATA_DIR if directory is None else Path(directory)
    return directory / f"{stem(target)}.npz", directory / f"{stem(target)}.json"


def summarize(draws) -> dict:
    r"""Moments of ``draws`` (chains, draws, dim) and their standard errors, as JSON-ready lists.

    E[x], E[x^2], E[x^4] with ArviZ's MCSE (sd/sqrt(ESS_mean), ``sgbench.reference.metrics.mcse``);
    Var[x^2] = E[x^4] - E[x^2]^2 with the MCSE of the mean of its influence function
    :math:`(x^2 - \hat E[x^2])^2` (delta method); the covariance with SE
    :math:`\operatorname{sd}((x_i - \bar x_i)(x_j - \bar x_j)) / \sqrt{n_{eff}}`, :math:`n_{eff}` the
    smallest bulk ESS over coordinates (capped at the number of draws).
    """
    x = np.asarray(draws, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    mean, second, fourth = flat.mean(0), (flat**2).mean(0), (flat**4).mean(0)
    se = moment_mcse(x)
    centred = flat - mean
    products = centred[:, :, None] * centred[:, None, :]
    n_eff = min(float(np.nanmin(ess(x, method="bulk"))), flat.shape[0])
    return {
        "mean": mean, "mean_se": se.mean, "second_moment": second, "second_moment_se": se.second_moment,
        "fourth_moment": fourth, "fourth_moment_se": per_dimension("mcse", x**4, method="mean"),
        "second_moment_var": fourth - second**2,
        "second_moment_var_se": per_dimension("mcse", (x**2 - second) ** 2, method="mean"),
        "covariance": np.cov(flat, rowvar=False).reshape(x.shape[-1], x.shape[-1]),
        "covariance_se": products.std(0, ddof=1) / np.sqrt(n_eff),
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def header_digest(header: dict) -> str:
    """sha256 of ``header``'s canonical JSON (sorted keys, no spaces), ``header_sha256`` left out."""
    body = {key: value for key, value in header.items() if key != "header_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def save(target, stored, diagnostics: dict, provenance: dict, directory=None) -> tuple[Path, Path]:
    """Write ``stored`` draws (chains, draws, dim) and their header for ``target``; return the paths."""
    npz, header_path = paths(target, directory)
    npz.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, draws=np.asarray(stored, dtype=np.float32))
    npz.write_bytes(buffer.getvalue())
    moments = {key: np.asarray(value).tolist() for key, value in summarize(stored).items()}
    label = getattr(target, "reference_quantities_label", None)
    header = {"format_version": FORMAT_VERSION, "target": target.name, "params": canonical_params(target),
              **({} if label is None else {"quantities": label}),
              "dim": int(np.shape(stored)[-1]), "draws_file": npz.name, "sha256": _sha256(npz), "moments": moments,
              "diagnostics": diagnostics, **provenance}
    header["header_sha256"] = header_digest(header)
    header_path.write_text(json.dumps(header, indent=1) + "\n")
    return npz, header_path


def read_header(target, directory=None) -> dict:
    """The verified header of ``target``'s reference: ReferenceFileError if a file is missing, the
    header is not ``target``'s, the header was edited (its ``header_sha256``), or the draws' sha256
    differs from the header's."""
    npz, header_path = paths(target, directory)
    for path in (header_path, npz):
        if not path.is_file():
            raise ReferenceFileError(f"no stored reference for {target!r}: {path} is missing; build it with "
                                     f"`{build_command(target)}`")
    try:
        header = json.loads(header_path.read_text())
    except json.JSONDecodeError as error:
        raise ReferenceFileError(f"reference header {header_path} is not valid JSON: {error}") from None
    if header.get("header_sha256") != header_digest(header):
        raise ReferenceFileError(f"reference header {header_path} was edited after it was built (its moments, "
                                 "diagnostics or parameters no longer match its header_sha256); rebuild it with "
                                 f"`{build_command(target)}`")
    if header.get("target") != target.name or header.get("params") != canonical_params(target):
        raise ReferenceFileError(f"reference header {header_path} is for {header.get('target')!r} with params "
                                 f"{header.get('params')}, not for {target!r}")
    if header.get("sha256") != _sha256(npz):
        raise ReferenceFileError(f"reference draws {npz} are corrupted: sha256 {_sha256(npz)} differs from "
                                 f"the header's {header.get('sha256')}")
    return header


def load_draws(target, directory=None) -> np.ndarray:
    """The stored thinned draws (chains, draws, dim) of ``target``, checksum verified: of its
    ``reference_quantities`` (the header's ``quantities`` says which) where the target defines them."""
    read_header(target, directory)
    with np.load(paths(target, directory)[0]) as data:
        return np.asarray(data["draws"], dtype=np.float64)


def load(target, directory=None) -> Truth:
    """``target``'s stored reference as a :class:`Truth` with standard errors, checksum verified;
    ``source`` names the file, its sha256 and the backend."""
    header = read_header(target, directory)
    if "quantities" in header:
        raise ReferenceFileError(f"the reference of {target!r} keeps {header['quantities']}, not the parameters: "
                                 "no parameter moments to load (its draws: sgbench.reference.store.load_draws)")
    m = {key: np.asarray(value, dtype=np.float64) for key, value in header["moments"].items()}
    return Truth(mean=m["mean"], second_moment=m["second_moment"], second_moment_var=m["second_moment_var"],
                 covariance=m["covariance"], mean_se=m["mean_se"], second_moment_se=m["second_moment_se"],
                 second_moment_var_se=m["second_moment_var_se"], covariance_se=m["covariance_se"],
                 source=f"NUTS reference {header['draws_file']} (sha256 {header['sha256'][:12]}, "
                        f"{header.get('backend')} NUTS, seed {header.get('seed')})")
