"""The PyTorch surface a learner's program calls, op by op, on device "cpu" against PyTorch's
CPU (the long-tail issue's table): each op at 1k, 64k and 1M elements, on one thread and on
the default threads, the median time of each engine, their ratio, and how each grows from
size to size (the exponent of n: 1 is linear, 1.25 about n log n at these sizes).

Each engine runs in a process of its own (PyTorch keeps a thread pool, so it is never timed
beside ours), both from the same numpy inputs, each op written once for both below. PyTorch
comes from the interpreter ``--torch-python`` names (default: this one, when it has torch;
else the TRACEGRAD_TORCH_PYTHON environment variable). Without it, tracegrad's times alone.

    python benchmarks/ops.py [--sizes 1000 65536 1048576] [--ops sort topk] [--torch-python PATH]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import timeit
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
GOAL = 3.0                  # at most this many times PyTorch's time, at 64k and 1M elements
PIECES = 64                 # cat and stack join this many tensors



def top_k_sample(ns, logits, k=50):
    """nanoGPT's sampling step: the logits below the k-th largest set to -inf, then one draw."""
    v, _ = ns.lib.topk(logits, k)
    logits = logits.clone()
    logits[logits < v[:, [-1]]] = -float("inf")
    return ns.lib.multinomial(ns.F.softmax(logits, dim=-1), num_samples=1)


def top_p_sample(ns, logits, p=0.9):
    """Nucleus sampling as public code writes it: sort, the running sum of the probabilities,
    the tokens past p removed (the first always kept), put back in vocabulary order, one draw."""
    ordered, order = ns.lib.sort(logits, descending=True)
    remove = ns.lib.cumsum(ns.F.softmax(ordered, dim=-1), dim=-1) > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    logits = logits.masked_fill(remove.scatter(1, order, remove), -float("inf"))
    return ns.lib.multinomial(ns.F.softmax(logits, dim=-1), num_samples=1)


# name: (inputs from a numpy generator and n, the op on an engine's namespace and tensors).
# Shapes with rows keep a row of 1024 elements (fewer when n is smaller).
OPS = {
    "add": (lambda rng, n: {"x": rng.standard_normal(n), "y": rng.standard_normal(n)}, lambda ns, x, y: x + y),
    "exp": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.exp()),
    "sum": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.sum()),
    "clamp": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.clamp(-1.0, 1.0)),
    "softmax rows": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))},
                     lambda ns, x: x.softmax(-1)),
    "cross_entropy rows": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024))),
                                           "y": rng.integers(0, min(n, 1024), max(n // 1024, 1))},
                           lambda ns, x, y: ns.F.cross_entropy(x, y)),
    "cumsum": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.cumsum(0)),
    "cumprod": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.cumprod(0)),
    "cummax": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.cummax(0)),
    "logcumsumexp": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.logcumsumexp(0)),
    "sort": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.sort()),
    "argsort": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.argsort()),
    "topk(50)": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.topk(50)),
    "kthvalue(n/4)": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.kthvalue(max(x.shape[0] // 4, 1))),
    "median": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.median()),
    "median rows": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))},
                    lambda ns, x: x.median(-1)),
    "nanmedian": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.nanmedian()),
    "msort": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))}, lambda ns, x: x.msort()),
    "unique": (lambda rng, n: {"i": rng.integers(0, max(n // 8, 1), n)},
               lambda ns, i: ns.lib.unique(i, return_inverse=True, return_counts=True)),
    "unique floats": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: ns.lib.unique(x)),
    "unique_consecutive": (lambda rng, n: {"i": rng.integers(0, 3, n)},
                           lambda ns, i: ns.lib.unique_consecutive(i, return_counts=True)),
    "bincount": (lambda rng, n: {"i": rng.integers(0, 1000, n)}, lambda ns, i: i.bincount()),
    "bincount weights": (lambda rng, n: {"i": rng.integers(0, 1000, n), "w": rng.random(n)},
                         lambda ns, i, w: i.bincount(w)),
    "histc": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.histc(100, -3, 3)),
    "searchsorted": (lambda rng, n: {"s": rng.random(n).cumsum(), "x": rng.random(n) * (n / 2)},
                     lambda ns, s, x: ns.lib.searchsorted(s, x)),
    "bucketize(1024)": (lambda rng, n: {"x": rng.standard_normal(n), "b": rng.random(1024).cumsum() / 256 - 2},
                        lambda ns, x, b: ns.lib.bucketize(x, b)),
    "repeat_interleave": (lambda rng, n: {"x": rng.standard_normal(max(n // 4, 1)),
                                          "r": rng.integers(0, 8, max(n // 4, 1))},
                          lambda ns, x, r: x.repeat_interleave(r)),
    "flip": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))},
             lambda ns, x: x.flip(0, 1)),
    "roll": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))},
             lambda ns, x: x.roll((1, 7), (0, 1))),
    "x[mask]": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x[x > 0]),
    "x[mask] = v": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.__setitem__(x > 0, 1.0)),
    "x[idx] = v": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n), "v": rng.standard_normal(n)},
                   lambda ns, x, i, v: x.__setitem__(i, v)),
    "index_put accumulate": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n),
                                             "v": rng.standard_normal(n)},
                             lambda ns, x, i, v: x.index_put_((i,), v, accumulate=True)),
    "gather": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n)},
               lambda ns, x, i: x.gather(0, i)),
    "index_select": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n)},
                     lambda ns, x, i: x.index_select(0, i)),
    "scatter_add": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n)},
                    lambda ns, x, i: ns.lib.zeros(x.shape[0], device=x.device).scatter_add(0, i, x)),
    "scatter": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n)},
                lambda ns, x, i: ns.lib.zeros(x.shape[0], device=x.device).scatter(0, i, x)),
    "scatter_reduce amax": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n)},
                            lambda ns, x, i: ns.lib.zeros(x.shape[0], device=x.device).scatter_reduce(0, i, x, "amax")),
    "index_add rows": (lambda rng, n: {"x": rng.standard_normal((max(n // 64, 1), 64)),
                                       "i": rng.integers(0, max(n // 64, 1), max(n // 64, 1))},
                       lambda ns, x, i: x.index_add(0, i, x)),
    "index_copy rows": (lambda rng, n: {"x": rng.standard_normal((max(n // 64, 1), 64)),
                                        "i": rng.permutation(max(n // 64, 1))},
                        lambda ns, x, i: x.index_copy(0, i, x)),
    "index_fill": (lambda rng, n: {"x": rng.standard_normal((max(n // 64, 1), 64)),
                                   "i": rng.integers(0, max(n // 64, 1), max(n // 256, 1))},
                   lambda ns, x, i: x.index_fill(0, i, 0.0)),
    "take": (lambda rng, n: {"x": rng.standard_normal(n), "i": rng.integers(0, n, n)},
             lambda ns, x, i: ns.lib.take(x, i)),
    "take_along_dim rows": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024))),
                                            "i": rng.integers(0, min(n, 1024), (max(n // 1024, 1), 8))},
                            lambda ns, x, i: ns.lib.take_along_dim(x, i, 1)),
    "embedding backward": (lambda rng, n: {"w": rng.standard_normal((1000, 64)),
                                           "i": rng.integers(0, 1000, max(n // 64, 1))},
                           lambda ns, w, i: ns.F.embedding(i, w.requires_grad_()).sum().backward()),
    "nonzero": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: (x > 0).nonzero()),
    "argwhere": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))},
                 lambda ns, x: ns.lib.argwhere(x > 0)),
    "count_nonzero": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: ns.lib.count_nonzero(x > 0)),
    "where(cond)": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: ns.lib.where(x > 0)),
    "masked_select": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.masked_select(x > 0)),
    "tril": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))}, lambda ns, x: x.tril()),
    "triu": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))}, lambda ns, x: x.triu(1)),
    "diagonal": (lambda rng, n: {"x": rng.standard_normal((max(n // 1024, 1), min(n, 1024)))},
                 lambda ns, x: x.diagonal().contiguous()),
    "diag": (lambda rng, n: {"x": rng.standard_normal(max(int(n ** 0.5), 1))}, lambda ns, x: ns.lib.diag(x)),
    "norm": (lambda rng, n: {"x": rng.standard_normal(n)}, lambda ns, x: x.norm()),
    "cat of 64": (lambda rng, n: {f"p{k}": rng.standard_normal(max(n // PIECES, 1)) for k in range(PIECES)},
                  lambda ns, **p: ns.lib.cat(list(p.values()))),
    "stack of 64": (lambda rng, n: {f"p{k}": rng.standard_normal(max(n // PIECES, 1)) for k in range(PIECES)},
                    lambda ns, **p: ns.lib.stack(list(p.values()))),
    "multinomial": (lambda rng, n: {"p": rng.random(n) + 0.01}, lambda ns, p: p.multinomial(16, replacement=True)),
    # the random factories: n numbers drawn (x gives n)
    "rand": (lambda rng, n: {"x": rng.random(n)}, lambda ns, x: ns.lib.rand(x.shape[0])),
    "randn": (lambda rng, n: {"x": rng.random(n)}, lambda ns, x: ns.lib.randn(x.shape[0])),
    "randint": (lambda rng, n: {"x": rng.random(n)}, lambda ns, x: ns.lib.randint(0, 1000, (x.shape[0],))),
    # one token drawn from one row of n logits (GPT-2's vocabulary: n = 50257)
    "top-k sampling": (lambda rng, n: {"logits": rng.standard_normal((1, n)) * 3}, top_k_sample),
    "top-p sampling": (lambda rng, n: {"logits": rng.standard_normal((1, n)) * 3}, top_p_sample),
}


def engine(name):
    """The namespace an op runs on: the library, its functional module, and how a numpy array
    becomes one of its tensors (floats as float32, integers as int64)."""
    if name == "pytorch":
        import torch
        import torch.nn.functional as F
        return SimpleNamespace(lib=torch, F=F, tensor=lambda a: torch.from_numpy(a.copy()),
                               threads=torch.set_num_threads, default_threads=torch.get_num_threads())
    sys.path.insert(0, str(ROOT))
    import stage2_tensor as tg
    import stage2_tensor.nn.functional as F
    import stage3_native
    return SimpleNamespace(lib=tg, F=F, tensor=lambda a: tg.from_numpy(a.copy()).to("cpu"),
                           threads=stage3_native.set_num_threads, default_threads=stage3_native.get_num_threads())


def seconds_per_call(fn, repeats=5):
    """The median of ``repeats`` timings, each of enough calls to take about 0.05 s."""
    number, took = 1, timeit.timeit(fn, number=1)
    while took < 0.05 and number < 10_000:
        number *= 10 if took < 0.005 else 2
        took = timeit.timeit(fn, number=number)
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeats)) / number


def measure(name, ops, sizes, threads):
    """{op: {n: seconds}} of engine ``name`` on ``threads`` threads (0: its default)."""
    import numpy as np
    ns = engine(name)
    if threads:
        ns.threads(threads)
    times = {}
    for op in ops:
        make, fn = OPS[op]
        times[op] = {}
        for n in sizes:
            arrays = make(np.random.default_rng(n), n)
            tensors = {k: ns.tensor(a.astype(np.float32) if a.dtype.kind == "f" else a.astype(np.int64))
                       for k, a in arrays.items()}
            fn(ns, **tensors)                               # warm up
            times[op][n] = seconds_per_call(lambda: fn(ns, **tensors))
    return times


def child(python, name, ops, sizes, threads):
    """``measure`` in a process of its own (its thread pool alone on the machine)."""
    command = [python, __file__, "--engine", name, "--threads", str(threads), "--ops", *ops,
               "--sizes", *map(str, sizes)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"error: {name} failed: {result.stderr.strip().splitlines()[-1:]}")
    return {op: {int(n): t for n, t in by_size.items()} for op, by_size in json.loads(result.stdout).items()}


def torch_python(given):
    """An interpreter that has PyTorch, or None."""
    for python in filter(None, (given, sys.executable, os.environ.get("TRACEGRAD_TORCH_PYTHON"))):
        if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    return None


def growth(by_size, sizes):
    """The exponent of n from each size to the next: log(t2 / t1) / log(n2 / n1)."""
    return [math.log(by_size[b] / by_size[a]) / math.log(b / a) for a, b in zip(sizes, sizes[1:])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 65536, 1048576])
    parser.add_argument("--ops", nargs="+", default=list(OPS), choices=list(OPS))
    parser.add_argument("--torch-python")
    parser.add_argument("--engine", choices=["tracegrad", "pytorch"], help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:                                         # a child: one engine, one thread count
        print(json.dumps(measure(args.engine, args.ops, args.sizes, args.threads)))
        return
    sizes, baseline = sorted(args.sizes), torch_python(args.torch_python)
    if baseline is None:
        print("PyTorch was not found (--torch-python, TRACEGRAD_TORCH_PYTHON): tracegrad's times alone")
    for threads in (1, 0):
        ours = child(sys.executable, "tracegrad", args.ops, sizes, threads)
        theirs = child(baseline, "pytorch", args.ops, sizes, threads) if baseline else None
        print(f"\n{'one thread' if threads else 'default threads'}: median time per call, float32 on device "
              f"\"cpu\"; ratio = tracegrad / PyTorch; growth = exponent of n from size to size")
        print(f"{'op':20} {'n':>8} {'tracegrad':>11} {'pytorch':>11} {'ratio':>7}")
        missed = []
        for op in args.ops:
            for n in sizes:
                ratio = ours[op][n] / theirs[op][n] if theirs else None
                print(f"{op:20} {n:>8} {ours[op][n] * 1e6:>9.1f}us "
                      + (f"{theirs[op][n] * 1e6:>9.1f}us {ratio:>6.2f}x" if theirs else f"{'-':>11} {'-':>7}"))
                if ratio and n >= 65536 and ratio > GOAL:
                    missed.append(f"{op} at {n} ({ratio:.1f}x)")
            grows = "  ".join(f"{g:.2f}" for g in growth(ours[op], sizes))
            their = "  ".join(f"{g:.2f}" for g in growth(theirs[op], sizes)) if theirs else "-"
            print(f"{'':20} growth: tracegrad {grows}   pytorch {their}")
        if theirs:
            print(f"goal, at most {GOAL}x PyTorch at 64k and 1M: "
                  + ("met by every op" if not missed else "missed by " + ", ".join(missed)))


if __name__ == "__main__":
    main()
