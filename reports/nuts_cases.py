"""What ``posteriordb_nuts/measure.py`` and ``inference_gym_nuts/measure.py`` share: the suite's two NUTS backends at
one setting, and the resumable loop over (target, backend) cases with its table (``case_record``)."""

from __future__ import annotations

from case_record import append, arguments, finished

from sgbench.reference.blackjax_nuts import run_blackjax
from sgbench.reference.nuts import run_numpyro

RUNNERS = {"numpyro": run_numpyro, "blackjax": run_blackjax}
SETTINGS = dict(num_chains=4, num_warmup=1000, num_draws=2500, seed=0, target_accept=0.9)


def quantities_of_run(target, backend: str, quantities) -> tuple[object, object, float]:
    """``backend``'s NUTS on ``target`` at ``SETTINGS``: (the result, ``quantities(draws)`` of its (chains x draws,
    dim) draws reshaped to (chains, draws, q), its seconds)."""
    import time

    start = time.perf_counter()
    result = RUNNERS[backend](target, **SETTINGS)
    seconds = time.perf_counter() - start
    chains, draws, _ = result.draws.shape
    values = quantities(result.draws.reshape(-1, target.dim), (chains, draws))
    return result, values.reshape(chains, draws, -1), seconds


def run(description: str, record, names, measure, argv=None) -> None:
    """Measure every ``name/backend`` case not in ``record`` (``names`` in the order given), then print the table.

    Args:
        description: the command line's description.
        record: the JSON-lines record.
        names: the targets' names.
        measure: ``(name, backend) -> row`` (``case``, ``passed``, ``max_abs_z``, ``threshold``, ``worst``,
            ``divergences``, ``seconds``; ``gradient_ms`` optional).
        argv: the command line (None: ``sys.argv``).
    """
    args = arguments(description, argv)
    done = finished(record)
    if not args.summary:
        for name in names:
            for backend in RUNNERS:
                case = f"{name}/{backend}"
                if case in done or (args.only and case not in args.only and name not in args.only):
                    continue
                row = measure(name, backend)
                append(record, row)
                done[case] = row
                print(f"{case}: {'agrees' if row['passed'] else 'DISAGREES'} (max |z| {row['max_abs_z']} vs "
                      f"{row['threshold']}, worst {row['worst']}; {row['divergences']} divergences, "
                      f"{row['seconds']} s)", flush=True)
    for row in done.values():
        cost = f"  {row['gradient_ms']} ms/grad" if "gradient_ms" in row else ""
        print(f"{row['case']:55s} {'agrees' if row['passed'] else 'DISAGREES':9s} max|z| {row['max_abs_z']:7.2f} "
              f"/ {row['threshold']:.2f}  worst {row['worst']:34s} div {row['divergences']:5d}  {row['seconds']} s"
              + cost)
    print(f"{sum(r['passed'] for r in done.values())} of {len(done)} agree")
