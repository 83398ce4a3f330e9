"""Execute the chapter notebooks.

    python chapters/run.py [--quick] [--timeout SECONDS] [NAMES...]

Runs every ``chapters/*.ipynb`` (or only the NAMES given, with or without ``.ipynb``) in a
``python3`` kernel whose working directory is ``chapters/``.

* Full mode (the default) writes each executed notebook back in place, outputs included,
  so that GitHub shows them; the notebooks' own code rewrites ``figures/`` and
  ``chapters/logs/``. It also records in the notebook's metadata the commit it ran on and
  a hash of each package source the kernel loaded (chapters/freshness.py, which ``make
  test`` runs to say which saved outputs predate changes to the code).
* ``--quick`` sets ``TRACEGRAD_QUICK=1`` (the notebooks then train for a few steps only)
  and never writes a notebook back. Unless ``TRACEGRAD_FIGURES`` / ``TRACEGRAD_LOGS`` are
  set, its figures and logs go to a temporary folder that is deleted afterwards, so a
  quick run never replaces the committed full-mode figures.

On a cell error the runner stops and exits with status 1, printing the notebook, the
failing cell's source and the error. Tests use ``execute`` directly (importing this file
by its path).
"""
import argparse
import contextlib
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

CHAPTERS = Path(__file__).resolve().parent
KERNEL = "python3"
CELL_TIMEOUT = 600          # seconds per cell, with room for full-mode BobNet's training


def _load_freshness():
    """chapters/freshness.py, by its path (this is a script, not a package: tests import it
    by path too, so "import freshness" would depend on sys.path)."""
    spec = importlib.util.spec_from_file_location("chapters_freshness", CHAPTERS / "freshness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


freshness = _load_freshness()


class NotebookError(RuntimeError):
    """A cell of a chapter notebook failed; the message names the notebook and the cell."""

    def __init__(self, notebook, cell_index, source, error):
        self.notebook, self.cell_index, self.source, self.error = notebook, cell_index, source, error
        rule = "-" * 72
        super().__init__(f"{notebook}: cell {cell_index} (counting from 0) failed\n{rule}\n{source}\n{rule}\n{error}")


@contextlib.contextmanager
def _environment(values):
    """Set environment variables (None removes one) and restore them afterwards. The kernel
    nbclient starts inherits this process's environment."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _error_text(cell, exc):
    """The error output the failing cell recorded (traceback without colour codes), or
    failing that the exception itself."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            tb = "\n".join(out.get("traceback", []))
            tb = re.sub(r"\x1b\[[0-9;]*m", "", tb)
            return tb or f"{out.get('ename')}: {out.get('evalue')}"
    return f"{type(exc).__name__}: {exc}"


def execute(path, quick, env=None, write_back=False, timeout=CELL_TIMEOUT, commit=None):
    """Run the notebook at ``path`` from top to bottom; raise NotebookError on a cell error.

    ``quick`` sets TRACEGRAD_QUICK=1 (otherwise it is removed); ``env`` adds or overrides
    environment variables for the kernel (TRACEGRAD_FIGURES, TRACEGRAD_LOGS, MPLBACKEND...).
    ``commit``: (HEAD's commit, dirty) to record with the hashes of the package sources the
    kernel loaded in the notebook's metadata (freshness.record); the question is asked in
    one more cell after the last, removed again before anything is saved. ``write_back``
    saves the executed notebook, outputs included, over ``path``; it is only done when every
    cell succeeded. Returns the executed notebook.
    """
    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    if commit is not None:
        nb.cells.append(nbformat.v4.new_code_cell(freshness.PROBE))
    values = {"TRACEGRAD_QUICK": "1" if quick else None, "MPLBACKEND": "Agg",
              "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    values.update(env or {})
    with contextlib.ExitStack() as stack:
        if quick:       # never let a quick run overwrite the committed figures and logs
            for var in ("TRACEGRAD_FIGURES", "TRACEGRAD_LOGS"):
                given = values.get(var) if var in values else os.environ.get(var)
                if not given:
                    values[var] = stack.enter_context(tempfile.TemporaryDirectory(prefix="tracegrad-"))
        stack.enter_context(_environment(values))

        failed = {}

        def on_cell_error(cell, cell_index, execute_reply):
            failed.setdefault("cell", (cell_index, cell))

        client = NotebookClient(nb, kernel_name=KERNEL, timeout=timeout,
                                resources={"metadata": {"path": str(path.parent)}},
                                record_timing=False, on_cell_error=on_cell_error)
        try:
            client.execute()
        except CellExecutionError as exc:
            index, cell = failed.get("cell", (None, None))
            if cell is None:                 # no hook call: find the cell with the error output
                for i, c in enumerate(nb.cells):
                    if any(o.get("output_type") == "error" for o in c.get("outputs", [])):
                        index, cell = i, c
                        break
            source = cell.source if cell is not None else "(cell not found)"
            raise NotebookError(path.name, index, source,
                                _error_text(cell or {}, exc)) from None
    if commit is not None:
        probe = nb.cells.pop()
        answer = "".join(o.get("text", "") for o in probe.outputs if o.get("output_type") == "stream")
        freshness.record(nb.metadata, freshness.parse_probe(answer), *commit)
    if write_back:
        nbformat.write(nb, path)
    return nb


def _resolve(names):
    if not names:
        found = sorted(CHAPTERS.glob("*.ipynb"))
        if not found:
            sys.exit(f"no notebooks in {CHAPTERS}")
        return found
    paths = []
    for name in names:
        p = Path(name)
        candidates = [p, CHAPTERS / p.name, CHAPTERS / f"{p.name}.ipynb"]
        match = next((c for c in candidates if c.suffix == ".ipynb" and c.is_file()), None)
        if match is None:
            sys.exit(f"no notebook named {name!r} in {CHAPTERS}")
        paths.append(match)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description="Execute the chapter notebooks.")
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="TRACEGRAD_QUICK=1, a few training steps, no write-back")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT, help="seconds per cell")
    args = parser.parse_args(argv)

    mode = "quick" if args.quick else "full"
    # the commit before the first notebook is written back (which makes the tree dirty)
    commit = None if args.quick else freshness.commit()
    for path in _resolve(args.names):
        print(f"[{mode}] {path.name} ...", flush=True)
        try:
            execute(path, quick=args.quick, write_back=not args.quick, timeout=args.timeout, commit=commit)
        except NotebookError as err:
            print(f"FAILED: {err}", file=sys.stderr)
            return 1
        print(f"[{mode}] {path.name} ok" + ("" if args.quick else " (written back)"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
