"""What every stage4 trainer uses (stage4_models/training.py): the device, mini-batches,
the progress bar, the CSV logs, the text log and the summary; and the checkpoints they
write (checkpoint.CheckpointKind.save), read back by the same kind. And the rule the shared
module exists for: no model package imports another's modules, except chat building on gpt."""
import ast
import csv
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import stage2_tensor.nn as nn
import stage4_models
from stage4_models.checkpoint import CheckpointKind
from stage4_models.training import (Batches, Logger, progress_bar, run_folder, use_device, write_csv, write_run,
                                    write_summary)

# ---- mini-batches ------------------------------------------------------------------------
def test_batches_cover_each_example_once_per_epoch_with_a_partial_last_batch():
    x, y = np.arange(10)[:, None] * np.ones((1, 3)), np.arange(10)
    batches = list(Batches(x, y, 4, seed=1))
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert sorted(np.concatenate([b[1] for b in batches])) == list(range(10))
    for bx, by in batches:
        np.testing.assert_array_equal(bx[:, 0], by)              # rows stay paired
    again = list(Batches(x, y, 4, seed=1))
    assert all((a[1] == b[1]).all() for a, b in zip(batches, again))   # the seed repeats it
    other = np.concatenate([b[1] for b in Batches(x, y, 4, seed=2)])
    assert list(other) != list(np.concatenate([b[1] for b in batches]))
    assert [len(b[1]) for b in Batches(x, y, 4, drop_last=True)] == [4, 4]
    ordered = np.concatenate([b[1] for b in Batches(x, y, 4, shuffle=False)])
    assert list(ordered) == list(range(10))


def test_batches_forever_reshuffles_each_epoch():
    x, y = np.zeros((6, 1)), np.arange(6)
    stream = Batches(x, y, 6, seed=0).forever()
    first, second = next(stream)[1], next(stream)[1]
    assert sorted(first) == sorted(second) == list(range(6)) and list(first) != list(second)


# ---- the device, the progress bar ----------------------------------------------------------
def test_use_device_names_an_unknown_device():
    assert use_device("python") == "python"
    with pytest.raises((ValueError, RuntimeError), match="no-such-device"):
        use_device("no-such-device")


def test_progress_bar_counts_from_where_a_resumed_run_starts():
    bar = progress_bar("test", 5, show=False, first=2)
    assert list(bar) == [2, 3, 4] and bar.total == 5


# ---- what a run leaves behind ---------------------------------------------------------------
def test_csv_summary_and_log_files(tmp_path):
    write_csv(tmp_path / "loss.csv", ("step", "loss"), enumerate([0.5, 0.25]))
    with open(tmp_path / "loss.csv", newline="") as f:
        assert list(csv.reader(f)) == [["step", "loss"], ["0", "0.5"], ["1", "0.25"]]
    write_summary(tmp_path / "summary.json", {"steps": 2, "loss": 0.25})
    assert json.loads((tmp_path / "summary.json").read_text()) == {"steps": 2, "loss": 0.25}
    echoed = []
    Logger(tmp_path / "run", echoed.append, append=False)("first")
    Logger(tmp_path / "run", None, append=True)("second")
    assert (tmp_path / "run" / "train.log").read_text() == "first\nsecond\n" and echoed == ["first"]
    Logger(tmp_path / "run", None, append=False)("again")
    assert (tmp_path / "run" / "train.log").read_text() == "again\n"


def test_logs_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """loss.csv and summary.json rewritten in place would keep only part of a file after a
    run killed meanwhile: the old file stays until the new one is complete."""
    path, summary = tmp_path / "loss.csv", tmp_path / "summary.json"
    write_csv(path, ("step", "loss"), [(0, 0.5)])
    write_summary(summary, {"steps": 1})
    before = path.read_bytes(), summary.read_bytes()

    def rows():                                  # the run dies part way through the rows
        yield from ((i, 0.25) for i in range(572))
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        write_csv(path, ("step", "loss"), rows())

    def fail(*args):
        raise OSError("killed before the rename")
    monkeypatch.setattr(os, "replace", fail)     # the new bytes are complete, not yet the file's
    with pytest.raises(OSError, match="killed"):
        write_csv(path, ("step", "loss"), [(i, 0.25) for i in range(1500)])
    with pytest.raises(OSError, match="killed"):
        write_summary(summary, {"steps": 1500})
    monkeypatch.undo()
    assert (path.read_bytes(), summary.read_bytes()) == before
    assert sorted(os.listdir(tmp_path)) == ["loss.csv", "summary.json"]


def test_a_run_writes_its_checkpoint_logs_and_summary_together(tmp_path):
    written = []
    out = write_run(tmp_path / "run", lambda path: written.append(path) or path.write_bytes(b"ck"),
                    {"loss.csv": (("step", "loss"), [(0, "0.5")])}, {"steps": 1})
    assert written == [out / "checkpoint.tg"]
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.tg", "loss.csv", "summary.json"]
    write_run(out, lambda path: path.write_bytes(b"ck2"), {})          # no summary: it stays
    assert (out / "checkpoint.tg").read_bytes() == b"ck2" and (out / "summary.json").exists()


def test_a_run_folder_loses_the_temporary_files_of_killed_writes(tmp_path):
    """A write killed mid-way leaves .NAME.PID.HEX.tmp; a run starting in the folder removes
    those whose writer is gone (here a process that has exited), whatever file they were for."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name in ("checkpoint.tg", "loss.csv", "summary.json"):
        (tmp_path / f".{name}.{dead.pid}.0badcafe.tmp").write_bytes(b"half a file")
    (tmp_path / "notes.tmp").write_bytes(b"someone else's")
    run_folder(tmp_path)
    assert os.listdir(tmp_path) == ["notes.tmp"]


@dataclass
class TinyConfig:
    width: int = 3
    device: str = "python"


def test_a_saved_checkpoint_reads_back_with_its_entries(tmp_path):
    kind = CheckpointKind("tracegrad-test", "a test", "tests")
    model = nn.Linear(TinyConfig.width, 2, device="python")
    path = tmp_path / "checkpoint.tg"
    kind.save(path, TinyConfig(), model, step=7)
    saved = kind.read(path, "python", {"step": int})
    assert saved["step"] == 7 and kind.config(saved, TinyConfig, path) == TinyConfig()
    again = nn.Linear(TinyConfig.width, 2, device="python")
    kind.load_weights(again, saved, path)
    np.testing.assert_array_equal(again.weight.detach().numpy(), model.weight.detach().numpy())
    with pytest.raises(ValueError, match="not an other checkpoint"):
        CheckpointKind("tracegrad-other", "an other", "tests").read(path, "python")


# ---- the packages' imports ------------------------------------------------------------------
MODELS = ("mnist", "names", "gpt", "chat")
ALLOWED = {"chat": {"gpt"}}


def imported_packages(package):
    """The other stage4 model packages that the modules of ``package`` import."""
    found = set()
    for path in (Path(stage4_models.__file__).parent / package).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level != 1:   # level 1: the package itself
                module = ("stage4_models." if node.level == 2 else "") + (node.module or "")
                found |= {f"{module.rstrip('.')}.{alias.name}" for alias in node.names}
    named = {name.split(".")[1] for name in found if name.startswith("stage4_models.") and name.count(".") >= 1}
    return named & set(MODELS) - {package}


@pytest.mark.parametrize("package", MODELS)
def test_model_packages_import_no_other_model_package(package):
    assert imported_packages(package) <= ALLOWED.get(package, set())
