"""Where the project's programs write what they produce, shared by every stage.

* figures go to ``$TRACEGRAD_FIGURES`` or the repository's ``figures/``,
* training logs to ``$TRACEGRAD_LOGS`` or ``chapters/logs/``,
* ``quick()`` is true when ``TRACEGRAD_QUICK=1``: notebooks and examples then run a few
  steps only, which is how the test suite executes them.

Tests point both folders at temporary directories so that a test run never rewrites the
committed figures.
"""
import csv
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _folder(variable, default):
    path = Path(os.environ.get(variable) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def figures_dir():
    return _folder("TRACEGRAD_FIGURES", REPO / "figures")


def logs_dir():
    return _folder("TRACEGRAD_LOGS", REPO / "chapters" / "logs")


def quick():
    return os.environ.get("TRACEGRAD_QUICK") == "1"


def write_loss_log(losses, name):
    """A training log, one row per step (``step,loss``), as ``logs_dir() / name``."""
    path = logs_dir() / name
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([("step", "loss")] + [(i, f"{l:.9g}") for i, l in enumerate(losses)])
    return path
