"""What every stage4 trainer uses (mnist, names, gpt; chat through gpt): the device, the
mini-batches, the progress bar, the files a run leaves behind (CSV logs, a text log, a JSON
summary). Checkpoints are written and read by the program's ``checkpoint.CheckpointKind``
(``save``: ``tg.save``, atomic). The model packages import this module, the tokenizer and
each other never (``chat`` builds on ``gpt``).
"""
import csv
import json
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm   # widgets in Jupyter, text in a terminal

from stage2_tensor import backend


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
    """The folder ``out`` a run writes to, made if missing."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_csv(path, header, rows):
    """A CSV file: the ``header`` row, then ``rows``."""
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([header, *rows])
    return path


def write_losses(path, losses):
    """A run's loss per step as a CSV file (step, loss), each loss to 9 significant digits:
    enough to read a float32 back exactly."""
    return write_csv(path, ("step", "loss"), [(i, f"{v:.9g}") for i, v in enumerate(losses)])


def write_summary(path, summary):
    """A run's summary, a dict, as indented JSON."""
    Path(path).write_text(json.dumps(summary, indent=2) + "\n")


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
