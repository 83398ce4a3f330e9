"""What every stage4 trainer uses (mnist, names, gpt; chat through gpt): the device, the
mini-batches, the progress bar, the files a run leaves behind (``write_run``: the checkpoint,
CSV logs and a JSON summary, each written atomically and all at the same moments; a text
log). Checkpoints are written and read by the program's ``checkpoint.CheckpointKind``
(``save``: ``tg.save``, atomic). The model packages import this module, the tokenizer and
each other never (``chat`` builds on ``gpt``).
"""
import csv
import io
import json
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm   # widgets in Jupyter, text in a terminal

from stage2_tensor import backend
from stage2_tensor.atomic import atomic_write_text, remove_stale_temporaries


def use_device(name):
    """Device ``name``, made available ("cpu" and "cuda" load stage3_native on first use);
    an unknown or unavailable device raises, naming what exists."""
    backend.get(name)
    return name


class Batches:
    """Mini-batches of (inputs, labels) rows, epoch after epoch.

    Each epoch visits every example once, in a fresh random order when ``shuffle`` (drawn
    from ``seed``, so a run is repeatable), else in order. The last batch of an epoch is
    smaller when the batch size does not divide the dataset, unless ``drop_last``.
    Iterating gives one epoch; ``forever()`` never stops.
    """

    def __init__(self, inputs, labels, batch_size, shuffle=True, seed=0, drop_last=False):
        if len(inputs) != len(labels):
            raise ValueError(f"Batches: {len(inputs)} inputs but {len(labels)} labels")
        if len(inputs) == 0:
            raise ValueError("Batches: the dataset is empty")
        if batch_size < 1:
            raise ValueError(f"Batches: batch_size must be at least 1, got {batch_size}")
        if drop_last and batch_size > len(inputs):
            raise ValueError(f"Batches: drop_last with batch_size {batch_size} > {len(inputs)} examples "
                             "would give no batch at all")
        self.inputs, self.labels, self.batch_size = inputs, labels, batch_size
        self.shuffle, self.drop_last = shuffle, drop_last
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        n, b = len(self.inputs), self.batch_size
        return n // b if self.drop_last else -(-n // b)

    def __iter__(self):
        n = len(self.inputs)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            rows = order[start:start + self.batch_size]
            yield self.inputs[rows], self.labels[rows]

    def forever(self):
        while True:
            yield from self


def progress_bar(name, steps, show=True, first=0):
    """The steps ``first`` .. ``steps`` - 1 of a run named ``name``, with a progress bar
    when ``show`` (redrawn at most twice a second, so it costs the loop nothing); the bar
    counts from ``first``, where a resumed run starts."""
    return tqdm(range(first, steps), desc=name, disable=not show, mininterval=0.5, unit="step",
                initial=first, total=steps)


def run_folder(out):
    """The folder ``out`` a run writes to, made if missing. Temporary files that killed
    writes left there (stage2_tensor/atomic.py) are removed now, when a run starts, rather
    than only when the same file is written again."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out)
    return out


def write_run(out, save_checkpoint, logs, summary=None):
    """A run's files at one moment, in the folder ``out``: ``save_checkpoint(path)`` writes
    checkpoint.tg, then each CSV log of ``logs`` ({file name: (header, rows)}), then
    summary.json (when ``summary``, a dict, is given). Each file is written atomically, so
    a kill leaves it as it was or whole and new; all are written at the same moments, so
    the logs beside a checkpoint are its own. The checkpoint goes first: a run killed
    between two files leaves logs a moment behind it, never ahead (a resumed run takes its
    logs from the checkpoint and writes them anew). Returns the folder."""
    out = run_folder(out)
    save_checkpoint(out / "checkpoint.tg")
    for name, (header, rows) in logs.items():
        write_csv(out / name, header, rows)
    if summary is not None:
        write_summary(out / "summary.json", summary)
    return out


def write_csv(path, header, rows):
    """A CSV file: the ``header`` row, then ``rows``, written atomically (``atomic_write``)."""
    text = io.StringIO()
    csv.writer(text).writerows([header, *rows])
    atomic_write_text(path, text.getvalue())
    return path


def loss_log(losses):
    """A run's loss per step as a CSV log's (header, rows): step, loss, each loss to 9
    significant digits, enough to read a float32 back exactly."""
    return ("step", "loss"), [(i, f"{v:.9g}") for i, v in enumerate(losses)]


def write_summary(path, summary):
    """A run's summary, a dict, as indented JSON, written atomically (``atomic_write``)."""
    text = json.dumps(summary, indent=2) + "\n"
    atomic_write_text(path, text)
    return path


class Logger:
    """Prints a line (through ``echo``, when given) and appends it to out/train.log (when
    ``out`` is given; a fresh log unless ``append``)."""

    def __init__(self, out, echo, append):
        self.path, self.echo = (run_folder(out) / "train.log" if out else None), echo
        if self.path and not append:
            self.path.write_text("")

    def __call__(self, line):
        if self.echo:
            self.echo(line)
        if self.path:
            with self.path.open("a") as f:
                f.write(line + "\n")
