"""Reports of a results store: a terminal table and a self-contained HTML page.

Both open with a headline: per line of runs (one sampler on one target with its settings, over
step sizes) the step size of lowest b^2 and that b^2 +- 1 bootstrap std over chains, or in words
why there is none. The page then says what was run, shows the best step size per line (when there
are several), a log-log plot of b^2 against step size (one line per setting, bootstrap error bars,
diverged points marked), the table of runs (only the settings that vary, per row only those that
apply), the running b^2 of each run, a note on how to read them and the provenance of the runs.
The terminal table keeps to 120 columns.

Modules, each importing only those before it: ``values`` (the columns read and how a value is
written), ``settings`` (which settings vary or are shared, and their text), ``best`` (lines of runs,
the best step size, the headline), ``tables`` (the table of runs, the terminal text), ``figures``
(the plots) and ``page`` (the HTML page).
"""

from sgbench.bench.sweeps.report.best import STD_MEANING, best_table, headline
from sgbench.bench.sweeps.report.figures import b2_figure, plot_b2, plot_running_b2, running_b2_figure
from sgbench.bench.sweeps.report.page import HOW_TO_READ, run_summary, write_report
from sgbench.bench.sweeps.report.settings import group_settings, shared_settings
from sgbench.bench.sweeps.report.tables import TERMINAL_WIDTH, display_frame, format_table, no_truth_note
from sgbench.bench.sweeps.report.values import B2, B2_STD, STEP_SIZE, THRESHOLD

__all__ = [
    "B2", "B2_STD", "HOW_TO_READ", "STD_MEANING", "STEP_SIZE", "TERMINAL_WIDTH", "THRESHOLD",
    "b2_figure", "best_table", "display_frame", "format_table", "group_settings", "headline", "no_truth_note",
    "plot_b2", "plot_running_b2", "run_summary", "running_b2_figure", "shared_settings", "write_report",
]
