"""Element-wise ops and reductions of device "cpu" (stage3_native/csrc/elementwise.c,
reduce.c) against numpy, through the public Tensor API, on 16M float32 elements.

(a) Throughput in GB/s (bytes read and written by the op, divided by its time) of add,
    mul, exp, a broadcast add, sum and max over the last and the first dimension of a
    (4096, 4096) float32 tensor, with 1 and with 2 threads (stage3_native.set_num_threads),
    and the ratio ours / numpy. numpy runs these on one thread whatever the setting. The
    implementations are called in turn, round after round, so a slower period of a
    shared machine hits all of them alike; each figure is the median over the rounds.
    x.max(dim) returns values and indices, so it is compared with numpy's max and argmax
    (and, for reference, with numpy's max alone). torch, when importable, gets a column.
(b) The hierarchy of element-wise kernels on a (1024, 1024) tensor that fits in the cache,
    on one thread: the same add with operands laid out for each level (contiguous, a
    scalar, a broadcast row or column, a transposed operand).

    python benchmarks/elementwise.py [--reps 9] [--threads 1 2] [--quick]
"""
import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage2_tensor as tg  # noqa: E402
import stage3_native  # noqa: E402
from stage3_native.cpu.backend import elementwise_path  # noqa: E402

try:
    import torch
except ImportError:                              # optional column
    torch = None


def interleaved_medians(fns, reps):
    """Median seconds of each callable in ``fns`` (a dict), calling them in turn for
    ``reps`` rounds after one warm-up call each."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def op_cases(n, m, seed=0):
    """(name, bytes moved, {implementation: (inputs -> result)}, inputs) for table (a)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, m), dtype=np.float32)
    b = rng.standard_normal((n, m), dtype=np.float32)
    row = rng.standard_normal((1, m), dtype=np.float32)
    size, f = n * m * 4, 4
    cases = [
        ("a + b", 3 * size, lambda x, y, r: x + y),
        ("a * b", 3 * size, lambda x, y, r: x * y),
        ("a.exp()", 2 * size, lambda x, y, r: x.exp()),
        ("a + row (1, M)", 2 * size + m * f, lambda x, y, r: x + r),
        ("a.sum(-1)", size + n * f, lambda x, y, r: x.sum(-1)),
        ("a.sum(0)", size + m * f, lambda x, y, r: x.sum(0)),
    ]
    numpy_ops = {"a.exp()": lambda x, y, r: np.exp(x), "a.sum(0)": lambda x, y, r: x.sum(0)}
    torch_ops = {"a.exp()": lambda x, y, r: x.exp()}
    rows = []
    for name, nbytes, op in cases:
        rows.append((name, nbytes, {"cpu": op, "numpy": numpy_ops.get(name, op), "torch": torch_ops.get(name, op)}))
    for dim, kept in ((-1, n), (0, m)):
        nbytes = size + kept * (f + 8)                                   # values and int64 indices
        rows.append((f"a.max({dim}) values+indices", nbytes, {
            "cpu": lambda x, y, r, d=dim: x.max(d),
            "numpy": lambda x, y, r, d=dim: (x.max(axis=d), x.argmax(axis=d)),
            "torch": lambda x, y, r, d=dim: x.max(d)}))
        rows.append((f"  numpy max({dim}) only", size + kept * f, {
            "cpu": lambda x, y, r, d=dim: x.max(d),
            "numpy": lambda x, y, r, d=dim: x.max(axis=d),
            "torch": lambda x, y, r, d=dim: x.amax(d)}))
    return rows, (a, b, row)


def measure_ops(n=4096, m=4096, threads=(1, 2), reps=9, log=print):
    """{threads: [(name, {implementation: GB/s})]} for table (a); every result checked."""
    rows, arrays = op_cases(n, m)
    inputs = {"numpy": arrays, "cpu": tuple(tg.from_numpy(x).to("cpu") for x in arrays)}
    if torch is not None:
        inputs["torch"] = tuple(torch.from_numpy(x) for x in arrays)
    results = {}
    saved = stage3_native.get_num_threads()
    try:
        for t in threads:
            stage3_native.set_num_threads(t)
            if torch is not None:
                torch.set_num_threads(t)
            table = []
            for name, nbytes, ops in rows:
                fns = {impl: (lambda op=ops[impl], xs=inputs[impl]: op(*xs)) for impl in inputs}
                check(name, fns["cpu"](), ops["numpy"](*(x.astype(np.float64) for x in arrays)))
                seconds = interleaved_medians(fns, reps)
                table.append((name, {impl: nbytes / s / 1e9 for impl, s in seconds.items()}))
                log(format_row(name, table[-1][1], t))
            results[t] = table
    finally:
        stage3_native.set_num_threads(saved)
    return results


def check(name, ours, reference):
    """Our result against numpy's in float64 (values; indices where there are some)."""
    ours = ours if isinstance(ours, tuple) else (ours,)
    reference = reference if isinstance(reference, tuple) else (reference,)
    for got, want in zip(ours, reference):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-3, err_msg=name)   # sums of 4096


HEADER = f"  {'operation (16M float32)':30}{'threads':>8}{'cpu GB/s':>10}{'numpy':>9}{'cpu/numpy':>11}"


def format_row(name, gbs, threads):
    line = (f"  {name:30}{threads:>8}{gbs['cpu']:10.1f}{gbs['numpy']:9.1f}"
            f"{gbs['cpu'] / gbs['numpy']:10.2f}x")
    if "torch" in gbs:
        line += f"{gbs['torch']:9.1f}{gbs['cpu'] / gbs['torch']:10.2f}x"
    return line


def header():
    return HEADER + (f"{'torch':>9}{'cpu/torch':>11}" if torch is not None else "")


# ---- (b) the hierarchy -------------------------------------------------------------------

def measure_levels(n=1024, reps=9, seed=1):
    """[(case, level, cpu GB/s, numpy GB/s)]: one add per level of the hierarchy."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    row, col = b[:1].copy(), b[:, :1].copy()
    bt = np.ascontiguousarray(b.T)
    t = {name: tg.from_numpy(x).to("cpu") for name, x in (("a", a), ("b", b), ("row", row), ("col", col), ("bt", bt))}
    size = n * n * 4
    cases = [
        ("a + b", 3 * size, (t["a"], t["b"]), (a, b)),
        ("a + 2.0", 2 * size, (t["a"], 2.0), (a, np.float32(2.0))),
        ("a + row (1, N)", 2 * size, (t["a"], t["row"]), (a, row)),
        ("a + col (N, 1)", 2 * size, (t["a"], t["col"]), (a, col)),
        ("a + b.T (transposed)", 3 * size, (t["a"], t["bt"].T), (a, bt.T)),
    ]
    out = []
    saved = stage3_native.get_num_threads()
    stage3_native.set_num_threads(1)                 # the kernels themselves, no thread start-up
    for name, nbytes, (x, y), (p, q) in cases:
        np.testing.assert_allclose((x + y).numpy(), p + q, err_msg=name)
        level = elementwise_path(x, y if isinstance(y, tg.Tensor) else tg.tensor(y, device="cpu"))
        seconds = interleaved_medians({"cpu": lambda x=x, y=y: x + y, "numpy": lambda p=p, q=q: p + q}, reps)
        out.append((name, level, nbytes / seconds["cpu"] / 1e9, nbytes / seconds["numpy"] / 1e9))
    stage3_native.set_num_threads(saved)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9, help="rounds; each figure is a median over them")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--quick", action="store_true", help="a (1024, 1024) tensor and 3 rounds")
    args = parser.parse_args(argv)
    n, reps = (1024, 3) if args.quick else (4096, args.reps)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}"
          + (f", torch {torch.__version__}" if torch is not None else "")
          + f"; median of {reps} interleaved rounds")
    print("\n(a) GB/s = bytes read and written / time; numpy is single-threaded throughout")
    print(header())
    measure_ops(n, n, tuple(args.threads), reps)
    print("\n(b) the element-wise hierarchy: one add per level, (1024, 1024) float32 (fits in "
          "the cache), 1 thread")
    print(f"  {'operands':26}{'level':>12}{'cpu GB/s':>10}{'numpy':>9}")
    for name, level, ours, theirs in measure_levels(reps=reps):
        print(f"  {name:26}{level:>12}{ours:10.1f}{theirs:9.1f}")


if __name__ == "__main__":
    main()
