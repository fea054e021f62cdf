"""A signal fuzz pass over the long commands (issue 45): each command runs as a subprocess the way a user runs it,
with piped output, and gets SIGINT (two times in three) or SIGTERM at a uniformly random moment; each trial is one
JSON line: the exit status, whether stderr holds a traceback ("Traceback" or "Exception ignored"), the last line,
whether the count it says it kept equals the record's or the store's, how long it took to stop, the first line's
time and the longest silence on stderr.

    python tests/signal_fuzz.py [--trials 33] [--latest 20] [--seed 0] [--out FOLDER] [COMMAND ...]

COMMAND: any of ``COMMANDS`` (default: all, in turn). A signalled trial passes when the command printed no traceback,
the kept count (where its line gives one) is what the record or store holds, and it either stopped (exit 130 or 143,
its "sgbench: ..." line last) or, signalled as it was ending, finished normally (exit 0, 1 or 3); a crash status
(negative, 134, 139) fails. The summary counts them. Each trial's folder (store, record, stderr) stays in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NORMAL = (0, 1, 3)  # the statuses of a command that finished (3: a gate INCONCLUSIVE); a signal in its last moments


def commands(folder: Path, asv_config: Path) -> dict:
    """The long commands at small settings, each writing into ``folder``."""
    db, out = folder / "r.sqlite", folder / "out"
    sgbench = [sys.executable, "-m", "sgbench.bench.cli"]
    return {
        "run": [*sgbench, "run", "--db", db, "--out", out],
        "gate": [*sgbench, "gate", "--db", db, "--out", out],
        "gate-reseed": [*sgbench, "gate", "--reseed", "2", "--cell", "sgld@icg4-isotropic-h0.02", "--out", out],
        "validate": [*sgbench, "validate", "sgbench.bench.adapters.blackjax:sgld", "--param", "step_size=0.02",
                     "--targets", "icg", "--out", out],
        "tune": [*sgbench, "tune", "sgld", "--target", "icg", "--db", db, "--out", out],
        "reproduce": [*sgbench, "reproduce", "mile-table5", "--db", db, "--out", out],
        "reproduce-px": [*sgbench, "reproduce", "px-modes", "--db", db, "--out", out],
        "conformance": [*sgbench, "conformance", "--scale", "quick", "--library", "posteriors", "--out", out,
                        "--record", folder / "records.jsonl"],
        "nightly": [*sgbench, "nightly", "--results", folder / "nightly", "--no-asv"],
        "speed": [*sgbench, "speed", "--steps", "20000", "--grid-steps", "20000", "--numpy-steps", "200", "--repeats",
                  "1", "--out", out],
        "asv": [*sgbench, "asv", "--quick", "--config", asv_config, "--machine", "signal-fuzz", "--bench",
                r"samplers\.TimeRun\.time_run\('sg\w+', 'jax', 10, 10, 'icg'\)"],
    }


COMMANDS = tuple(commands(Path("."), Path(".")))


def complete_lines(path: Path) -> int:
    """The complete JSON lines of a record (0 when it is missing)."""
    from sgbench.base.unit_record import entries

    return sum(1 for _ in entries(path))


def kept_matches(last: str, folder: Path) -> bool | None:
    """Whether the count that the interruption line ``last`` says was kept is what is stored; None when it gives
    no count of a record or store."""
    if match := re.search(r"run interrupted: (\d+) of the", last):
        db = folder / "r.sqlite"
        rows = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0] if db.exists() else 0
        return int(match[1]) == rows
    for pattern in (r"(\d+) of the \d+ gate cells finished and are kept in (\S+) ",
                    r"(\d+) finished tasks are kept in (\S+);", r"(\d+) finished units? (?:is|are) kept in (\S+) "):
        if match := re.search(pattern, last):
            return int(match[1]) == complete_lines(Path(match[2]))
    return None


def trial(name: str, command: list, folder: Path, when: float, signum: int, env: dict) -> dict:
    """Run ``command``, send ``signum`` after ``when`` seconds unless it has finished, and describe what happened."""
    stamps, lines = [], []
    started = time.monotonic()
    with open(folder / "stdout", "w") as stdout:
        process = subprocess.Popen([str(part) for part in command], stdout=stdout, stderr=subprocess.PIPE,
                                   text=True, cwd=REPO, env=env,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

        def read() -> None:
            for line in process.stderr:
                stamps.append(time.monotonic() - started)
                lines.append(line)

        reader = threading.Thread(target=read)
        reader.start()
        try:
            process.wait(timeout=when)
            sent = None
        except subprocess.TimeoutExpired:
            process.send_signal(signum)
            sent = time.monotonic() - started
        try:
            process.wait(timeout=180)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join()
    stopped = time.monotonic() - started - (sent or 0)
    stderr = "".join(lines)
    (folder / "stderr").write_text(stderr)
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    gaps = [b - a for a, b in zip([0.0, *stamps], stamps)]
    record = {"command": name, "when_s": when, "signal": signum, "signalled": sent is not None,
              "status": process.returncode, "traceback": "Traceback" in stderr or "Exception ignored" in stderr,
              "kept_matches": kept_matches(last, folder) if sent is not None else None,
              "stop_s": round(stopped, 2) if sent is not None else None, "last": last,
              "first_line_s": round(stamps[0], 1) if stamps else None,
              "longest_silence_s": round(max(gaps), 1) if gaps else None, "folder": str(folder)}
    interrupted = record["status"] in (130, 143)
    record["passed"] = (not record["signalled"] or (
        not record["traceback"] and record["kept_matches"] is not False
        and (interrupted and last.startswith("sgbench:")  # stopped, with its one line last
             or record["status"] in NORMAL and "interrupted" not in last)))  # signalled as it was ending: done
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="COMMAND", help=f"any of: {', '.join(COMMANDS)} (default: all)")
    parser.add_argument("--trials", type=int, default=33)
    parser.add_argument("--latest", type=float, default=20.0, help="the latest moment of a signal, in seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="folder of the trials (default: a new temporary one)")
    args = parser.parse_args(argv)
    names = args.names or list(COMMANDS)
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        parser.error(f"unknown COMMAND {unknown[0]!r}; choose from {', '.join(COMMANDS)}")
    out = args.out or Path(tempfile.mkdtemp(prefix="signal_fuzz_"))
    out.mkdir(parents=True, exist_ok=True)
    home = out / "home"  # asv keeps its machine file in ~/.asv-machine.json
    home.mkdir(exist_ok=True)
    sys.path.insert(0, str(REPO))
    from tests.test_dashboard import write_config

    asv_config = write_config(out)
    env = {**os.environ, "HOME": str(home)}
    rng = random.Random(args.seed)
    results = []
    with open(out / "trials.jsonl", "a") as log:
        for k in range(args.trials):
            name = names[k % len(names)]
            when = round(rng.uniform(1.0, args.latest), 1)
            signum = rng.choice([signal.SIGINT, signal.SIGINT, signal.SIGTERM])
            folder = Path(tempfile.mkdtemp(prefix=f"{name}_", dir=out))
            result = trial(name, commands(folder, asv_config)[name], folder, when, int(signum), env)
            results.append(result)
            log.write(json.dumps(result) + "\n")
            log.flush()
            print(f"[{k + 1}/{args.trials}] {name} at {when} s, signal {int(signum)}: "
                  f"{'PASSED' if result['passed'] else 'FAILED'} (status {result['status']}) {result['last'][:100]}",
                  flush=True)
    signalled = [r for r in results if r["signalled"]]
    failed = [r for r in signalled if not r["passed"]]
    sigint = sum(r["signal"] == signal.SIGINT for r in signalled)
    longest = max((r["stop_s"] for r in signalled), default=0.0)
    print(f"{len(signalled)} of {len(results)} trials signalled ({sigint} SIGINT); {len(failed)} failed; longest stop "
          f"{longest:.1f} s; "
          f"record: {out / 'trials.jsonl'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
