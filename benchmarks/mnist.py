"""The thesis's MNIST run, timed: 60,000 SGD steps of MnistNet at batch 32 with the
thesis's loss, on tracegrad's device "cpu" (the program `python -m stage4_models.mnist
train` runs, data batching and per-step loss logging included), against the same loop in
PyTorch (when installed) on the same batches, in the same process, with the same threads.
Goal: under 30 s on a 2-core machine; the thesis: 17.6 s, 108,825
examples/s on an 8-core Ryzen 5800X.

    python benchmarks/mnist.py [--steps 60000] [--runs 3] [--threads N]

Prints each run and the medians: wall time, examples/s, test accuracy, and the ratio
PyTorch time / tracegrad time of each pair of runs (> 1: tracegrad is faster).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage3_native  # noqa: E402
from stage4_models.mnist import data  # noqa: E402
from stage4_models.mnist.training import Config, train  # noqa: E402
from stage4_models.training import Batches  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def torch_run(steps, datasets, seed=123, lr=0.01, batch=32):
    """The same loop in PyTorch: same batches (same Batches seed), same loss, SGD."""
    images, labels = datasets["train"]
    inputs, onehots = data.as_inputs(images), np.eye(10, dtype=np.float32)[labels]
    batches = Batches(inputs, onehots, batch, seed=seed).forever()
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10),
                              torch.nn.Softmax(dim=1))
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    losses = []
    start = time.perf_counter()
    for _ in range(steps):
        x, y = next(batches)
        probs = net(torch.from_numpy(x))
        loss = ((probs - torch.from_numpy(y)) ** 2).sum() / probs.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    wall = time.perf_counter() - start
    test_images, test_labels = datasets["test"]
    with torch.no_grad():
        predicted = net(torch.from_numpy(data.as_inputs(test_images))).argmax(1).numpy()
    return wall, float((predicted == test_labels).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=60000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="default: every core")
    args = parser.parse_args()
    if args.threads:
        stage3_native.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    threads = stage3_native.get_num_threads()
    datasets = {split: data.load(split) for split in ("train", "test")}
    print(f"MNIST, {args.steps} SGD steps of 32, thesis loss; {threads} thread(s); "
          f"PyTorch {torch.__version__ if torch else 'not installed'}")
    ours, theirs, ratios = [], [], []
    for run in range(args.runs):
        result = train(Config(optim="sgd", steps=args.steps), datasets, progress=False)
        ours.append(result.wall_seconds)
        line = (f"  run {run + 1}: tracegrad {result.wall_seconds:6.1f} s "
                f"({result.examples_per_second:>9,.0f} examples/s, accuracy {result.accuracy:.4f})")
        if torch is not None:
            wall, accuracy = torch_run(args.steps, datasets)
            theirs.append(wall)
            ratios.append(wall / result.wall_seconds)
            line += f"   pytorch {wall:6.1f} s (accuracy {accuracy:.4f})   ratio {ratios[-1]:.2f}x"
        print(line, flush=True)
    median = statistics.median(ours)
    print(f"median: tracegrad {median:.1f} s = {args.steps * 32 / median:,.0f} examples/s "
          f"(goal: under 30 s for 60,000 steps; thesis 17.6 s on 8 cores)")
    if ratios:
        print(f"median: pytorch {statistics.median(theirs):.1f} s; PyTorch time / tracegrad time "
              f"{statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
