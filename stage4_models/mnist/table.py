"""The thesis's optimizer table reproduced (thesis, "Optimizing optimizers"): MnistNet
trained with SGD, SGD with momentum, RMSprop and Adam at the thesis's settings, on
several seeds, the mean test accuracy of each set beside the thesis's. Written to
``chapters/logs/mnist_results.json`` (or ``$TRACEGRAD_LOGS``).
"""
import json
import os
import platform
import statistics

from stage1_scalargrad.workspace import logs_dir
from stage2_tensor.atomic import atomic_write_text

from . import data
from .training import THESIS, Config, evaluate, summary_line, train

OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam")
GOAL_POINTS = 0.5            # the goal: within 0.5 percentage points of the thesis


def reproduce(seeds=(123,), steps=60000, device="cpu", optimizers=OPTIMIZERS, subset=None,
              progress=True, datasets=None):
    """Train every optimizer on every seed; write the table and return it with the runs
    ({optimizer: [Result per seed]})."""
    datasets = datasets or {split: data.load(split) for split in ("train", "test")}
    runs = {name: run_seeds(name, seeds, steps, device, subset, progress, datasets) for name in optimizers}
    table = build(runs, seeds, steps, device, datasets["train"])
    write(table)
    return table, runs


def run_seeds(name, seeds, steps, device, subset, progress, datasets):
    """One optimizer at the thesis's settings, trained once per seed: a Result per seed."""
    results = []
    for seed in seeds:
        config = Config(optim=name, steps=steps, device=device, seed=seed, subset=subset)
        results.append(train(config, datasets, progress=progress))
        print(summary_line(results[-1], config), flush=True)
    return results


def build(runs, seeds, steps, device, train_set):
    """The table: per optimizer, its mean accuracy beside the thesis's, and the details."""
    return {name: row(name, results, seeds, steps, device, train_set) for name, results in runs.items()}


def write(table, path=None):
    """Write the table as JSON (default: logs_dir()/mnist_results.json); return the path."""
    path = path or logs_dir() / "mnist_results.json"
    atomic_write_text(path, json.dumps(table, indent=2) + "\n")     # the old table or the whole new one
    return path


def row(name, results, seeds, steps, device, train_set):
    accuracies = [r.accuracy for r in results]
    mean = statistics.fmean(accuracies)
    train_losses = [evaluate(r.model, *train_set)["loss"] for r in results]
    thesis = THESIS[name]
    return {
        "accuracy": round(mean, 5),
        "thesis_accuracy": thesis["accuracy"],
        "difference_points": round(100 * (mean - thesis["accuracy"]), 3),
        "within_goal": abs(100 * (mean - thesis["accuracy"])) <= GOAL_POINTS,
        "steps": steps,
        "seeds": list(seeds),
        "accuracies": [round(a, 5) for a in accuracies],
        "accuracy_std": round(statistics.stdev(accuracies), 5) if len(accuracies) > 1 else 0.0,
        "train_loss": round(statistics.fmean(train_losses), 2),
        "thesis_train_loss": thesis["train_loss"],
        "lr": thesis["lr"],
        "wall_seconds": round(statistics.median(r.wall_seconds for r in results), 2),
        "examples_per_second": round(statistics.median(r.examples_per_second for r in results)),
        "device": device,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
