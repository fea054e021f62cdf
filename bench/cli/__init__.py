"""sgbench: runs and sweeps, gates, validation, references, paper tables and timings of SG-MCMC samplers.

One module per command:

    sgbench list samplers|targets|metrics|suites
    sgbench run [--suite NAME | --sampler S --target T --step-size H [H ...] [options]]
    sgbench report [--db PATH] [--out DIR]
    sgbench reproduce NAME [--scale quick|paper] [--db PATH] [options] | --list
    sgbench tune SAMPLER --target T [--budget-grads N | --budget-seconds S] [--metric ksd|fssd] [--arm NAME=VALUES]
    sgbench reference build|check TARGET [--param KEY=VALUE ...] [options]
    sgbench gate [--suite quick|full] [--baseline PATH | --no-baseline] [--reseed N] [--power]
    sgbench baseline update --why TEXT
    sgbench design-bias
    sgbench validate MODULE:OBJECT [--param KEY=VALUE ...]
    sgbench conformance [--scale quick|default|full] [--library NAME ...] [--record FILE]
    sgbench asv [--quick] [--bench REGEX ...] [--config PATH] [--machine NAME] [-- ASV_ARG ...]
    sgbench dashboard [--config PATH] [--out DIR] [--results DIR ...] [--offline [--assets DIR]] [--serve [--port N]]
    sgbench nightly [--results DIR] [--suite quick|full] [--here] [--no-asv] [--factor F]
    sgbench speed [--steps N] [--numpy-steps N] [--grid-steps N] [--no-bnn] [--sampler S ...]
    sgbench px-overhead [--chains N] [--steps N] [--batch-size B]
    sgbench nuts-speed [--draws N] [--out PNG]
    sgbench device-check [--quick] [--skip scaling|bnn|asv|gate ...] [--out DIR] [--repeats N] [--machine NAME]

``gate`` and ``validate`` exit with status 1 when a check fails, ``reproduce`` when a paper's claim is
contradicted, ``nightly`` on a regression; ``asv`` exits with asv's status.

Bad input (unknown names, parameters out of range) prints one line to stderr and exits with
status 2. Without ``--out``, a command's pages go to a folder of its own under ``reports/history/`` and
are then copied into ``reports/latest/`` (:mod:`sgbench.bench.cli._report_folders`). Warnings raised while a
command runs (NumPy, ArviZ, matplotlib) are counted and summarised at its end (:mod:`sgbench.bench.cli._warnings`).
Each command module has ``add_parser(commands)``, which sets the handler
``execute(args, argv) -> exit status``, and ``heartbeat=True`` for a long command that reports its progress in
lines (``sgbench.bench.cli._common.progress``): it then says it is still working whenever 10 s pass without a line
(``_common.heartbeat``), unless ``--no-progress``.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
import signal
import sys
import threading
import time

from sgbench.bench.cli import (
    _report_folders,
    asv,
    baseline,
    conformance,
    dashboard,
    design_bias,
    device_check,
    gate,
    listing,
    nightly,
    nuts_speed,
    px_overhead,
    reference,
    report,
    reproduce,
    run,
    speed,
    tune,
    validate,
)
from sgbench.bench.cli._common import Parser, heartbeat, one_line
from sgbench.bench.cli._warnings import summarised_warnings
from sgbench.bench.running import interruption

COMMANDS = (listing, run, report, reproduce, tune, reference, gate, baseline, design_bias, validate, conformance,
            asv, dashboard, nightly, speed, px_overhead, nuts_speed, device_check)


def build_parser() -> Parser:
    """The ``sgbench`` parser with every command of ``COMMANDS``."""
    parser = Parser(prog="sgbench", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


INTERRUPTED = 130  # 128 + SIGINT; SIGTERM's is 143 (console)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python handles signals, so that a command stops as it does on Ctrl-C."""


def console() -> None:
    """The ``sgbench`` console script: :func:`main` in this process, with SIGINT and SIGTERM stopping the command
    (:func:`stop_on_signals`). The status is 130 (128 + SIGINT) or 143 (128 + SIGTERM). After an interruption the
    process ends with ``os._exit`` once the output is flushed (and multiprocessing's exit-time finalizers have run:
    :func:`_release_worker_semaphores`): what the command keeps is already written (records are appended and stores
    committed as results finish), while the interpreter's own shutdown, with XLA's threads stopped in the middle of a
    call, can crash (SIGSEGV, exit 139, measured on ``sgbench conformance``)."""
    stop_on_signals()
    status = main()
    for signum in (signal.SIGINT, signal.SIGTERM):  # the command is done: a signal now changes nothing (a SIGTERM
        signal.signal(signum, signal.SIG_IGN)       # in the interpreter's shutdown killed it, status -15, in a fuzz)
    if status == INTERRUPTED:
        _release_worker_semaphores()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + signal.SIGTERM if signal.SIGTERM in interruption.RECEIVED else INTERRUPTED)
    sys.exit(status)


def _release_worker_semaphores() -> None:
    """Run multiprocessing's exit-time finalizers, which ``os._exit`` skips: those of the named semaphores of an
    interrupted ``--jobs N`` pool's queues unlink them and tell multiprocessing's resource tracker, which otherwise
    unlinks them itself and warns of "5 leaked semaphore objects" after the command's last line (measured on
    ``sgbench reproduce smile-table2 --jobs 2`` interrupted). They only unlink names and close queues: nothing of
    XLA's runs here."""
    if "multiprocessing" in sys.modules:
        from multiprocessing import util

        util._run_finalizers(0)


def stop_on_signals():
    """Make SIGINT and SIGTERM raise KeyboardInterrupt (:class:`Terminated` for SIGTERM) where Python handles
    signals, so that every command's interruption path runs, and record them (``sgbench.bench.running.interruption``).
    A signal that arrives during a garbage collection is not raised there: the collection's callbacks (XLA's among
    them, and the two added here that mark the collection's start and end) would print the exception as "Exception
    ignored" with a traceback and swallow it. It is delivered again once the collection has ended (a daemon thread
    waits for the end and calls ``_thread.interrupt_main``; delivered inside a collection again, it is held again),
    unless the command's next progress line or progress-bar update has raised it first; a raised exception that is
    lost is raised again there too (``sgbench.bench.running.interruption``).

    Returns:
        the signal handler (for tests).
    """
    collecting = [False]  # inside a garbage collection
    held = [0]  # the raises so far when a signal was held: it is delivered again only if none came since
    wake, again = threading.Event(), threading.Event()  # a held signal to deliver; the delivery under way

    def first_gc_callback(phase, info):
        if phase == "start":
            collecting[0] = True

    def last_gc_callback(phase, info):
        if phase == "stop":
            collecting[0] = False

    ours = (first_gc_callback.__code__, last_gc_callback.__code__)

    def inside_our_callbacks(frame) -> bool:
        """Whether ``frame`` runs in one of the two callbacks (which are gc callbacks too), at any depth."""
        while frame is not None:
            if frame.f_code in ours:
                return True
            frame = frame.f_back
        return False

    def deliver_held() -> None:
        """A daemon thread: once woken, wait for the collection to end and deliver the held signal again, unless a
        progress update has raised it meanwhile."""
        while True:
            wake.wait()
            wake.clear()
            time.sleep(0.01)
            while collecting[0]:
                time.sleep(0.01)
            if len(interruption.RAISED) == held[0]:
                again.set()
                _thread.interrupt_main(interruption.RECEIVED[-1])

    def on_signal(signum, frame):
        if again.is_set():  # a held signal delivered again: received already
            again.clear()
        else:
            interruption.received(signum)
        if collecting[0] or inside_our_callbacks(frame):
            if frame is not None and frame.f_code is first_gc_callback.__code__:
                collecting[0] = True  # a collection is starting: hold the signal until it ends
            held[0] = len(interruption.RAISED)
            wake.set()
            return
        interruption.RAISED.append(signum)
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    threading.Thread(target=deliver_held, daemon=True).start()
    gc.callbacks.insert(0, first_gc_callback)
    gc.callbacks.append(last_gc_callback)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    return on_signal


def main(argv=None) -> int:
    """Run ``sgbench`` with ``argv`` (default: the process arguments); return the exit status. The command runs
    in JAX's 64-bit mode (``sgbench.base.float64``), the caller's setting restored afterwards. An interrupted
    command exits 130 after one line: the message of the KeyboardInterrupt it raises (its account of what it kept),
    else a generic one; printed after the summary of warnings, so that it is the last line."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)  # NAME's options load the reproductions' modules: seconds
    except SystemExit as exit_:
        return exit_.code
    except KeyboardInterrupt:
        print("sgbench: interrupted while reading the command line; nothing was done", file=sys.stderr)
        return INTERRUPTED
    new_folder = getattr(args, "out", None) is _report_folders.NEW_FOLDER
    try:
        if new_folder:
            args.out = _report_folders.new_folder(args.command)
        from sgbench.base.float64 import in_float64_mode  # here, not above: `sgbench --help` loads no JAX

        beats = getattr(args, "heartbeat", False) and not getattr(args, "no_progress", False)
        beating = heartbeat(args.command) if beats else contextlib.nullcontext()
        with summarised_warnings(), beating:
            return in_float64_mode(args.handler)(args, argv)
    except KeyboardInterrupt as stopped:  # its message: the command's own line (what it kept), printed last
        print(str(stopped) or f"sgbench: {args.command} interrupted before it finished", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (sgbench ... | head): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    # sgbench.bench.sweeps.store.StoreError is a ValueError
    except (ValueError, TypeError, LookupError, OSError) as error:
        print(f"sgbench: error: {one_line(error)}", file=sys.stderr)
        return 2
    finally:
        if new_folder and args.out is not _report_folders.NEW_FOLDER:
            copies = _report_folders.publish(args.out)
            if copies:
                print(f"copied into {copies[0].parent}/: {', '.join(path.name for path in copies)}")

