"""TinyBLAS (stage3_native/csrc/gemm.c) against OpenBLAS (numpy's), float32, in one run.

(a) The ladder of matmul variants at small n (naive and reordered are slow), 1 thread.
(b) TinyBLAS vs OpenBLAS on square matrices, n = 256 .. 2048, on 1 thread and on 2.
(c) The MNIST MLP's three products (batch 32, 784 -> 128): forward x @ W.T (W is (128, 784),
    so b is a transposed view), weight gradient x.T @ g (a transposed), input gradient g @ W;
    and the forward with Linear's bias fused into the product (raw call only).

Ours is timed through the public Tensor API (``a @ b`` on device "cpu", variant "tinyblas")
and as the raw C call (tg_matmul_f32, preallocated out); OpenBLAS as numpy's ``a @ b`` and
``np.matmul(a, b, out=...)``. The two are measured interleaved (ours, numpy, ours, numpy ...)
so that a noisy neighbour slows both alike; each figure is the median of the repeats, each
repeat timing enough calls to last a few milliseconds. GFLOPS = 2 m n k / seconds.

Each thread count runs in a fresh subprocess with OPENBLAS_NUM_THREADS and
TRACEGRAD_NUM_THREADS set before numpy and the library load (OpenBLAS reads its variable
only at load time). The header gives the micro-kernel TinyBLAS chose and the core's FMA
peak, measured by a loop of register-only FMAs at that kernel's vector width.

    python benchmarks/gemm.py [--quick] [--reps 7] [--threads 1 2]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQUARE_SIZES = (256, 512, 1024, 2048)
QUICK_SQUARE_SIZES = (256, 512)
LADDER = {"naive": (256,), "reordered": (256, 512), "blocked": (256, 512, 1024), "tinyblas": (256, 512, 1024)}
QUICK_LADDER = {"naive": (128,), "reordered": (128, 256), "blocked": (128, 256), "tinyblas": (128, 256)}
# name, (m, n, k), which operand is a transposed view
MNIST = [("MNIST forward x @ W.T", (32, 128, 784), "b"),
         ("MNIST weight grad x.T @ g", (784, 128, 32), "a"),
         ("MNIST input grad g @ W", (32, 784, 128), "")]


# ---------------------------------------------------------------------------------------
# the worker: one thread count, in its own process

def _interleaved(calls, flops, reps, min_seconds=0.004):
    """Median GFLOPS of each zero-argument callable in ``calls``, timed in turn, rep by rep.
    Each sample runs a callable `inner` times, enough to last about min_seconds."""
    for call in calls.values():                         # warm-up: caches, allocator, threads
        call()
    start = time.perf_counter()
    next(iter(calls.values()))()
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, int(min_seconds / once))
    samples = {name: [] for name in calls}
    for _ in range(reps):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(inner):
                call()
            samples[name].append((time.perf_counter() - start) / inner)
    return {name: flops / statistics.median(times) / 1e9 for name, times in samples.items()}


def _worker(threads, reps, quick):
    import numpy as np

    sys.path.insert(0, str(ROOT))
    import stage2_tensor as tg
    from stage2_tensor import backend
    from stage3_native import cpu_backend
    from stage3_native.cpu_backend import MATMUL_VARIANTS, ffi, lib

    cpu = backend.get("cpu")
    rng = np.random.default_rng(0)
    zero = ffi.new("int64_t[]", [0])

    def raw_call(a, b, out, bias=None, variant="tinyblas"):
        """tg_matmul_f32 on numpy arrays' memory (strides in elements)."""
        m, k = a.shape
        n = b.shape[1]
        sa, sb = [s // 4 for s in a.strides], [s // 4 for s in b.strides]
        def pointer(array):                         # the closure keeps the arrays alive
            return ffi.NULL if array is None else ffi.cast("float *", array.ctypes.data)

        args = (MATMUL_VARIANTS[variant], 1, zero, zero, m, n, k, pointer(a), sa[0], sa[1],
                pointer(b), sb[0], sb[1], pointer(bias), pointer(out))
        return lambda: (a, b, bias, out) and lib.tg_matmul_f32(*args)

    def operands(m, n, k, transposed):
        a = rng.standard_normal((k, m) if transposed == "a" else (m, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if transposed == "b" else (k, n), dtype=np.float32)
        a, b = (a.T if transposed == "a" else a), (b.T if transposed == "b" else b)
        ta = tg.from_numpy(np.ascontiguousarray(a.T), device="cpu").T if transposed == "a" else tg.from_numpy(a, device="cpu")
        tb = tg.from_numpy(np.ascontiguousarray(b.T), device="cpu").T if transposed == "b" else tg.from_numpy(b, device="cpu")
        return a, b, ta, tb

    def compare(m, n, k, transposed=""):
        a, b, ta, tb = operands(m, n, k, transposed)
        out, ref = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
        raw = raw_call(a, b, out)
        raw()
        np.matmul(a, b, out=ref)
        error = float(np.abs(out - ref).max() / np.abs(ref).max())
        cpu.matmul_variant = "tinyblas"
        gflops = _interleaved({"tensor": lambda: ta @ tb, "numpy": lambda: a @ b,
                               "raw": raw, "numpy_out": lambda: np.matmul(a, b, out=ref)},
                              2.0 * m * n * k, reps)
        return {**gflops, "error": error}

    result = {"threads": threads, "kernel": cpu_backend.gemm_kernel(),
              "peak": lib.tg_gemm_peak_gflops(), "ladder": {}, "square": {}, "mnist": {}}
    if threads == 1:
        for variant, sizes in (QUICK_LADDER if quick else LADDER).items():
            for n in sizes:
                a, b, _, _ = operands(n, n, n, "")
                out = np.empty((n, n), np.float32)
                result["ladder"].setdefault(variant, {})[n] = _interleaved(
                    {"ours": raw_call(a, b, out, variant=variant)}, 2.0 * n ** 3, max(3, reps // 2))["ours"]
    for n in QUICK_SQUARE_SIZES if quick else SQUARE_SIZES:
        result["square"][n] = compare(n, n, n)
    for name, (m, n, k), transposed in MNIST:
        result["mnist"][name] = compare(m, n, k, transposed)
    m, n, k = MNIST[0][1]                               # Linear's forward with its bias
    x, wt, _, _ = operands(m, n, k, "b")
    bias = rng.standard_normal(n, dtype=np.float32)
    out, ref = np.empty((m, n), np.float32), np.empty((m, n), np.float32)

    def numpy_linear():
        np.matmul(x, wt, out=ref)
        np.add(ref, bias, out=ref)

    result["mnist"]["MNIST forward + bias (fused)"] = _interleaved(
        {"raw": raw_call(x, wt, out, bias), "numpy_out": numpy_linear}, 2.0 * m * n * k, reps)
    print(json.dumps(result))


# ---------------------------------------------------------------------------------------
# the parent: one worker per thread count, then the tables

def run_worker(threads, reps, quick):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), TRACEGRAD_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    command = [sys.executable, __file__, "--worker", str(threads), "--reps", str(reps)] + (["--quick"] if quick else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the {threads}-thread worker failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def format_ladder(result):
    lines = ["(a) matmul variants, float32 (n,n)@(n,n), 1 thread, GFLOPS (raw C call)",
             "  variant        " + "".join(f"{n:>9}" for n in sorted({n for s in result['ladder'].values() for n in s}, key=int))]
    sizes = sorted({n for s in result["ladder"].values() for n in s}, key=int)
    for variant, by_size in result["ladder"].items():
        lines.append(f"  {variant:<15}" + "".join(f"{by_size[n]:9.2f}" if n in by_size else f"{'':>9}" for n in sizes))
    return "\n".join(lines)


def format_comparison(title, rows, with_tensor=True):
    head = f"  {'':<30}{'TinyBLAS':>10}{'OpenBLAS':>10}{'ratio':>8}"
    lines = [title, head + (f"{'Tensor@':>10}{'np a@b':>10}{'ratio':>8}" if with_tensor else "")]
    for name, r in rows:
        line = f"  {name:<30}{r['raw']:10.1f}{r['numpy_out']:10.1f}{r['raw'] / r['numpy_out']:8.2f}"
        if with_tensor and "tensor" in r:
            line += f"{r['tensor']:10.1f}{r['numpy']:10.1f}{r['tensor'] / r['numpy']:8.2f}"
        lines.append(line)
    return "\n".join(lines)


def format_report(results):
    first = results[0]
    lines = [f"TinyBLAS micro-kernel: {first['kernel']}; machine: {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cpus; one core's FMA peak (measured, {first['kernel']} width): "
             f"{first['peak']:.1f} GFLOPS",
             "GFLOPS = 2mnk / median time; ratio = TinyBLAS / OpenBLAS (interleaved in one process). "
             "Raw: C calls into preallocated out; Tensor@: tracegrad's a @ b vs numpy's a @ b "
             "(includes Python overhead, ~tens of us per call).", ""]
    if first["ladder"]:
        lines += [format_ladder(first), ""]
    for r in results:
        t = r["threads"]
        rows = [(f"n={n}", v) for n, v in r["square"].items()]
        lines += [format_comparison(f"(b) square float32, {t} thread{'s' if t > 1 else ''}: GFLOPS", rows), ""]
        lines += [format_comparison(f"(c) MNIST MLP shapes, {t} thread{'s' if t > 1 else ''}: GFLOPS",
                                    list(r["mnist"].items())), ""]
        if first["peak"]:
            n_max = max(r["square"], key=int)
            lines.append(f"  at n={n_max}, {t} thread(s): TinyBLAS {r['square'][n_max]['raw'] / (first['peak'] * t):.0%}"
                         f" of the FMA peak, OpenBLAS {r['square'][n_max]['numpy_out'] / (first['peak'] * t):.0%}")
            lines.append("")
    worst = max(v["error"] for r in results for v in list(r["square"].values()) + list(r["mnist"].values()) if "error" in v)
    lines.append(f"largest relative difference from numpy's result: {worst:.1e}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke test)")
    parser.add_argument("--reps", type=int, default=7, help="repeats per measurement (median)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON too")
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.worker, args.reps, args.quick)
    results = [run_worker(t, args.reps, args.quick) for t in args.threads]
    print(format_report(results))
    if args.json:
        print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
