"""``sgbench device-check``'s measurements and its folder: what one short run on a GPU machine records (issue 46).

Parts, each written into the folder as soon as it is finished (an interrupted run keeps the finished ones):

- ``env.json``: the environment (``sgbench.bench.perf.device_environment``);
- ``chain_scaling.csv``: µs per chain-step against chains (``sgbench.bench.perf.chain_scaling``), a row at a time;
- ``bnn_overhead.csv``: SGLD's overhead on the d = 10^5 bnn (``sgbench.bench.perf.speed.bnn_overhead``);
- ``asv/``: the asv quick subset (run by the command, ``sgbench.bench.cli.device_check``);
- ``gate_dtypes.csv``: the quick gate's JAX cells in float32 and in float64 (``sgbench.bench.gate.dtypes``);
- ``device_check.html``: every table so far and the scaling figure, rewritten after each part.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd

from sgbench.bench.perf import chain_scaling

PARTS = ("scaling", "bnn", "asv", "gate")
QUICK_CHAIN_COUNTS = (10, 1_000)
QUICK_BUDGET = 10**5
PAGE = "device_check.html"
FILES = {"scaling": "chain_scaling.csv", "bnn": "bnn_overhead.csv", "gate": "gate_dtypes.csv"}
HEADINGS = {"scaling": "Per-chain-step time against chains (speed workload: 10-d icg, float32)",
            "bnn": "SGLD's overhead on the digits bnn (about 10^5 parameters)",
            "asv": "asv quick subset",
            "gate": "The quick gate's JAX cells in float32 and float64 (truth checks, no baselines)"}


@dataclasses.dataclass
class DeviceCheckFolder:
    """The folder of one device check: its environment, the tables of the parts finished so far, the page."""

    folder: Path
    machine: str
    environment: dict
    tables: dict = dataclasses.field(default_factory=dict)

    def start(self) -> None:
        """Make the folder and write ``env.json``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "env.json").write_text(json.dumps({"machine": self.machine, **self.environment}, indent=1)
                                              + "\n", encoding="utf-8")

    def keep(self, part: str, table: pd.DataFrame) -> None:
        """Record ``part``'s table (so far): its CSV (where it has one) and the page."""
        self.tables[part] = table
        if part in FILES:
            table.to_csv(self.folder / FILES[part], index=False)
        self.write_page()

    def written(self) -> list[str]:
        """The files and folders written so far, by name."""
        return sorted(path.name for path in self.folder.iterdir()) if self.folder.is_dir() else []

    def write_page(self) -> Path:
        """``device_check.html``: the environment, every table so far and the scaling figure."""
        from sgbench.bench.html import write_page

        environment = self.environment
        env_rows = {"machine (asv)": self.machine, "devices": environment["label"],
                    "JAX backend": environment["jax_backend"],
                    **{name: version for name, version in environment["libraries"].items()},
                    **environment["cuda_packages"], "nvidia-smi": environment["nvidia_smi"],
                    "CPU": f"{environment['cpu']} ({environment['cores']} cores)", "recorded": environment["recorded"]}
        tables = {"Environment": pd.DataFrame({"": list(env_rows), "value": list(env_rows.values())})}
        tables.update({HEADINGS[part]: table for part, table in self.tables.items()})
        figures = {}
        if "scaling" in self.tables and len(self.tables["scaling"]):
            figures["µs per chain-step against chains"] = chain_scaling.figure(self.tables["scaling"])
        gate, asv = self.tables.get("gate"), self.tables.get("asv")
        asv_failed = asv is not None and int(asv["asv status"].iloc[0]) != 0
        passed = (gate is None or bool(gate["passed"].all())) and not asv_failed
        verdict = f"{environment['label']}: {self.machine}"
        if asv_failed:
            verdict += f" — asv FAILED (status {int(asv['asv status'].iloc[0])})"
        if gate is not None:
            verdict += " — gate " + ", ".join(f"{row.dtype} {row.outcome}" for row in gate.itertuples())
        return write_page(self.folder / PAGE, "sgmcmc-bench device check", verdict, passed, tables, figures,
                          notes="Compile excluded, best of repeated runs; nothing here is asserted but the gate. "
                                "Parts left out or not yet run have no table.")
