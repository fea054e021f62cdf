"""``sgbench conformance``'s ``external targets`` settings at the default scale: each library adapter that has one
(blackjax's and SGMCMCJax's SGLD) on posteriordb's mesquite, two-component mixture and eight schools
(``sgbench.bench.adapters._adapted.EXTERNAL_TARGETS``), through the report's own task runner
(``sgbench.bench.conformance.conformance.run_task``, 4min a row), one JSON line a row in ``records.jsonl``.

    python reports/conformance_external/measure.py [--summary]

The full report (``sgbench conformance``) runs these settings with the others.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("records.jsonl")
sys.path.insert(0, str(ROOT))

from reports.case_record import append, arguments, commit, finished  # noqa: E402


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    from sgbench.bench.conformance.conformance import SCALES, Task, adapters_of, run_task

    rows = finished(RECORD)
    if not args.summary:
        for library in ("blackjax", "sgmcmcjax", "posteriors"):
            adapters, _ = adapters_of(library)
            for adapter in adapters:
                for index, setting in enumerate(adapter.settings):
                    wanted = [f"{adapter.name}@{key.strip()}" for key in setting.targets.split(",")]
                    if setting.label != "external targets" or all(case in rows for case in wanted):
                        continue
                    for row in run_task(Task(library, adapter.name, index), SCALES["default"]):
                        case = f"{adapter.name}@{row['target']}"
                        if case in rows:
                            continue
                        row = {**row, "case": case, "commit": commit()}
                        append(RECORD, row)
                        rows[case] = row
                        print(f"{case}: {row['outcome']}", flush=True)
    for case, row in rows.items():
        print(f"{case:32s} {row['outcome']:13s} {row.get('reason', '')[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
