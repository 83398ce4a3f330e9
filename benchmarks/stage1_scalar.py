"""Forward + backward of MLP(2, [16, 16, 1]) on 100 points: stage1_scalargrad against a
micrograd-style engine written below (a closure per node, a recursive topological sort).

The closure each micrograd node stores refers back to the node itself, so every node is in
a reference cycle and only Python's cycle collector can free the graph; stage1's graph is
plain op records and input tuples, freed by reference counting. Garbage is collected before
each timed step so each engine pays for its own. Each engine runs in its own process (a few
untimed warm-up steps first), the rounds alternate the engines, and the script prints each
engine's median and the median of the per-round ratios.

    python benchmarks/stage1_scalar.py [--rounds 7] [--reps 7]
"""
import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stage1_scalargrad import nn  # noqa: E402


class MicroValue:
    """micrograd's design: children in a set, the backward step as a closure."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, MicroValue) else MicroValue(other)
        out = MicroValue(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, MicroValue) else MicroValue(other)
        out = MicroValue(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, other):
        out = MicroValue(self.data ** other, (self,), f"**{other}")

        def _backward():
            self.grad += (other * self.data ** (other - 1)) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = MicroValue(0 if self.data < 0 else self.data, (self,), "ReLU")

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward
        return out

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def backward(self):
        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()


class MicroMLP:
    def __init__(self, nin, nouts, seed=0):
        rng = random.Random(seed)
        sizes = [nin] + nouts
        self.layers = [[([MicroValue(rng.uniform(-1, 1)) for _ in range(sizes[i])], MicroValue(0))
                        for _ in range(sizes[i + 1])] for i in range(len(nouts))]

    def __call__(self, x):
        for i, layer in enumerate(self.layers):
            out = [sum((wi * xi for wi, xi in zip(w, x)), b) for w, b in layer]
            x = [o.relu() for o in out] if i < len(self.layers) - 1 else out
        return x


def step_micrograd(model, xs, ys):
    preds = [model(x)[0] for x in xs]
    loss = sum((p - y) ** 2 for p, y in zip(preds, ys))
    loss.backward()


def step_stage1(model, xs, ys):
    loss = nn.mse_loss(model(xs), [[y] for y in ys])
    loss.backward()


def timed(step, model, xs, ys):
    gc.collect()                          # start clean: each engine pays for its own garbage
    t0 = time.perf_counter()
    step(model, xs, ys)
    return time.perf_counter() - t0


def measure(engine, reps, warmup=3):
    """Median seconds of `reps` steps of one engine, in this process, after `warmup` untimed
    steps: the first steps of a process also pay for growing its heap from the OS."""
    rng = random.Random(0)
    xs = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(100)]
    ys = [1.0 if x0 * x1 > 0 else -1.0 for x0, x1 in xs]
    if engine == "stage1":
        model, step = nn.MLP(2, [16, 16, 1], seed=0), step_stage1
    else:
        model, step = MicroMLP(2, [16, 16, 1]), step_micrograd
    for _ in range(warmup):
        step(model, xs, ys)
    return statistics.median(timed(step, model, xs, ys) for _ in range(reps))


def in_fresh_process(engine, reps):
    out = subprocess.run([sys.executable, __file__, "--engine", engine, "--reps", str(reps)],
                         check=True, capture_output=True, text=True).stdout
    return float(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=7, help="timed steps per engine per round")
    parser.add_argument("--engine", choices=["stage1", "micrograd"],
                        help="time one engine in this process and print its median seconds")
    args = parser.parse_args()
    if args.engine:
        print(measure(args.engine, args.reps))
        return
    # Each engine runs in a fresh process: the micrograd-style garbage, once collected, leaves
    # a fragmented heap that slows whatever allocates next. Rounds alternate the engines so a
    # slow spell of a shared machine hits both; each round gives one ratio. All processes
    # share one CPU (children inherit the affinity): virtual CPUs of one machine can differ
    # in speed, and a ratio should not compare two of them.
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    ours, micro = [], []
    for _ in range(args.rounds):
        ours.append(in_fresh_process("stage1", args.reps))
        micro.append(in_fresh_process("micrograd", args.reps))
    ratios = [m / o for m, o in zip(micro, ours)]
    ms = lambda ts: f"{statistics.median(ts) * 1e3:7.1f} ms"  # noqa: E731
    print(f"MLP(2,[16,16,1]) forward+backward on 100 points; {args.rounds} rounds x "
          f"{args.reps} steps per engine, medians; Python {sys.version.split()[0]}")
    print(f"  micrograd-style (closures, recursive topo): {ms(micro)}")
    print(f"  stage1_scalargrad (op records, iterative):  {ms(ours)}")
    print(f"  ratio micrograd-style / stage1: median {statistics.median(ratios):.1f}x "
          f"(rounds: {', '.join(f'{r:.1f}x' for r in ratios)})")


if __name__ == "__main__":
    main()
