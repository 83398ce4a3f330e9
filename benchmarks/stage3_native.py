"""stage3_native's C kernels (device "cpu") against stage2's pure-Python kernels (device
"python") and numpy, all measured in the same run.

(a) Per operation: broadcast add, exp, sum over a dimension, softmax over the last
    dimension, a small matmul, and one training step of the 64-32-10 MLP from
    benchmarks/stage2_tensor.py (forward, backward, SGD; numpy's step written by hand).
    The tracegrad timings include stage2's Python layer (shape checks, broadcasting,
    views, autograd bookkeeping), which both devices share; a one-element add shows that
    fixed cost per operation. Every result is checked against numpy.
(b) Matmul throughput, GFLOPS = 2 n^3 / seconds, of the three C variants (naive i-j-k,
    reordered i-k-j, blocked; see stage3_native/csrc/matmul.c) and numpy, float32, square
    contiguous matrices.

    python benchmarks/stage3_native.py [--quick] [--reps 5]

The chapter notebook chapters/06_native_engine.ipynb imports ``measure_ops``,
``measure_matmul`` and the two ``format_*`` functions from this file.
"""
import argparse
import importlib.util
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage2_tensor as tg  # noqa: E402
import stage3_native  # noqa: E402,F401  (registers device "cpu")


def _load_stage2_benchmark():
    """benchmarks/stage2_tensor.py, by its path (benchmarks/ is not a package, and the
    file's name is also the name of the stage2_tensor package)."""
    path = Path(__file__).resolve().with_name("stage2_tensor.py")
    spec = importlib.util.spec_from_file_location("benchmarks_stage2_tensor", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_stage2 = _load_stage2_benchmark()
median_time = _stage2.median_time                   # one warm-up call, then the median of reps
mlp_step_tracegrad, mlp_step_numpy = _stage2.mlp_step_tracegrad, _stage2.mlp_step_numpy

DEVICES = ("python", "cpu", "numpy")
VARIANTS = ("naive", "reordered", "blocked")
MATMUL_SIZES = (64, 128, 256, 512, 1024)
QUICK_MATMUL_SIZES = (64, 128)


# ---------------------------------------------------------------------------------------
# (a) per-operation times

def numpy_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _tensor_case(name, op, arrays, numpy_op=None):
    """An operation written once for tracegrad tensors (``op``) and, when the spelling
    differs, for numpy arrays (``numpy_op``). Returns (name, make, reference) where
    make(device) gives a zero-argument callable on that device's copies of ``arrays``."""
    numpy_op = numpy_op or op

    def make(device):
        if device == "numpy":
            return lambda: numpy_op(*arrays)
        tensors = [tg.from_numpy(a).to(device) for a in arrays]
        return lambda: op(*tensors)
    return name, make, numpy_op(*arrays)


def _mlp_case(seed=0):
    """One SGD step of MLP 64-32-10 at batch 32 with cross-entropy (benchmarks/stage2_tensor.py's
    step); every device starts from the same parameters and trains its own copy."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(32, 64)).astype(np.float32)
    y = rng.integers(0, 10, size=32)
    shapes = [(32, 64), (32,), (10, 32), (10,)]
    init = [rng.uniform(-0.1, 0.1, size=s).astype(np.float32) for s in shapes]

    def make(device):
        if device == "numpy":
            params = [p.copy() for p in init]
            return lambda: mlp_step_numpy(params, x, y)
        params = [tg.from_numpy(p.copy()).to(device).requires_grad_() for p in init]
        tx, ty = tg.from_numpy(x).to(device), tg.from_numpy(y).to(device)
        return lambda: mlp_step_tracegrad(params, tx, ty)
    return "MLP 64-32-10 train step, batch 32", make, None


def op_cases(quick=False, seed=0):
    """The operations of table (a): (name, make, numpy's result or None)."""
    n, k = (64, 32) if quick else (256, 64)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n), dtype=np.float32)
    v = rng.standard_normal(n, dtype=np.float32)
    a = rng.standard_normal((k, k), dtype=np.float32)
    b = rng.standard_normal((k, k), dtype=np.float32)
    one = np.ones(1, dtype=np.float32)
    return [
        _tensor_case("add (1,)+(1,): the per-op floor", lambda p, q: p + q, (one, one)),
        _tensor_case(f"add ({n},{n})+({n},) broadcast", lambda p, q: p + q, (x, v)),
        _tensor_case(f"exp ({n},{n})", lambda p: p.exp(), (x,), np.exp),
        _tensor_case(f"sum over dim 0 of ({n},{n})", lambda p: p.sum(0), (x,)),
        _tensor_case(f"softmax over last dim ({n},{n})", lambda p: p.softmax(-1), (x,), numpy_softmax),
        _tensor_case(f"matmul ({k},{k})@({k},{k})", lambda p, q: p @ q, (a, b)),
        _mlp_case(seed),
    ]


def measure_ops(quick=False, reps=5):
    """Median seconds per operation and device: a list of (name, {device: seconds}).
    Each tracegrad result is first checked against numpy's."""
    rows = []
    for name, make, reference in op_cases(quick):
        times = {}
        for device in DEVICES:
            fn = make(device)
            if reference is not None and device != "numpy":
                np.testing.assert_allclose(fn().numpy(), reference, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{name} on device {device!r}")
            times[device] = median_time(fn, reps)
        rows.append((name, times))
    return rows


def format_seconds(s):
    if s >= 1:
        return f"{s:6.2f} s "
    if s >= 1e-3:
        return f"{s * 1e3:6.2f} ms"
    return f"{s * 1e6:6.1f} us"


def format_op_table(rows):
    lines = [f"  {'operation':38}{'python':>11}{'C (cpu)':>11}{'numpy':>11}{'python/C':>10}{'C/numpy':>9}"]
    for name, t in rows:
        lines.append(f"  {name:38}{format_seconds(t['python']):>11}{format_seconds(t['cpu']):>11}"
                     f"{format_seconds(t['numpy']):>11}{t['python'] / t['cpu']:9.0f}x"
                     f"{t['cpu'] / t['numpy']:8.0f}x")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# (b) matmul GFLOPS

def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def sample(fn, reps, budget=math.inf):
    """Median seconds of fn over up to ``reps`` calls. A first call faster than 0.5 s is a
    warm-up; a slower one already counts. No further call starts once the calls so far
    plus one more would pass ``budget`` seconds. Returns (median, number of calls used)."""
    first = _timed(fn)
    times = [first] if first > 0.5 else []
    while len(times) < reps and (not times or sum(times) + times[-1] <= budget):
        times.append(_timed(fn))
    return statistics.median(times), len(times)


def measure_matmul(sizes=MATMUL_SIZES, reps=3, naive_budget=20.0, seed=0, log=print):
    """Seconds per float32 (n, n) @ (n, n) for the C variants and numpy.

    Returns (seconds, notes): seconds[variant][n] is a median (None where skipped) and
    notes says where fewer reps were used or the naive variant was skipped. The naive
    loop runs above n = 512 only while its predicted time per call (the last size's,
    scaled by n^3) stays under ``naive_budget``, and takes at most that many seconds in all.
    """
    cpu = tg.backend.get("cpu")
    seconds = {name: {} for name in VARIANTS + ("numpy",)}
    notes = []
    rng = np.random.default_rng(seed)
    saved = cpu.matmul_variant
    try:
        for n in sizes:
            a = rng.standard_normal((n, n), dtype=np.float32)
            b = rng.standard_normal((n, n), dtype=np.float32)
            reference = a @ b
            ta, tb = tg.from_numpy(a).to("cpu"), tg.from_numpy(b).to("cpu")
            for variant in VARIANTS:
                budget = math.inf
                if variant == "naive" and n > 512:
                    known = [m for m in seconds["naive"] if seconds["naive"][m] is not None]
                    predicted = seconds["naive"][known[-1]] * (n / known[-1]) ** 3 if known else 0.0
                    if predicted > naive_budget:
                        seconds["naive"][n] = None
                        notes.append(f"naive skipped at n={n}: predicted {predicted:.0f} s per call "
                                     f"(over the {naive_budget:.0f} s budget)")
                        continue
                    budget = naive_budget
                cpu.matmul_variant = variant
                result = {}

                def run():
                    result["out"] = ta @ tb
                median, used = sample(run, reps, budget)
                out = result["out"].numpy()
                scale = np.abs(reference).max()
                assert np.abs(out - reference).max() <= 1e-4 * scale * math.sqrt(n), (variant, n)
                seconds[variant][n] = median
                if used < reps:
                    notes.append(f"{variant} at n={n}: {used} call(s) instead of {reps} "
                                 f"({median:.1f} s each, {budget:.0f} s budget)")
            seconds["numpy"][n] = sample(lambda: a @ b, reps)[0]
            if log:
                log(f"  n={n}: " + ", ".join(f"{k} {format_seconds(v[n]).strip()}" for k, v in seconds.items()
                                           if v.get(n) is not None), flush=True)
    finally:
        cpu.matmul_variant = saved
    return seconds, notes


def gflops(n, seconds):
    return None if seconds is None else 2 * n ** 3 / seconds / 1e9


def format_gflops_table(seconds):
    names = list(seconds)
    lines = [f"  {'n':>6}" + "".join(f"{name:>11}" for name in names) + f"{'reordered/naive':>17}"]
    for n in seconds["numpy"]:
        cells = [gflops(n, seconds[name].get(n)) for name in names]
        row = f"  {n:6d}" + "".join(f"{'skipped':>11}" if g is None else f"{g:11.2f}" for g in cells)
        naive, reordered = seconds["naive"].get(n), seconds["reordered"].get(n)
        row += f"{naive / reordered:16.1f}x" if naive and reordered else f"{'-':>17}"
        lines.append(row)
    return "\n".join(lines)


def limit_numpy_threads(n=1):
    """Ask numpy's OpenBLAS to use ``n`` threads (the C kernels use one), through the
    library's own setter, found in the numpy wheel's bundled OpenBLAS. Returns whether it
    could. On a machine shared with other work, a multithreaded BLAS at small sizes waits
    for busy cores, and its timings scatter."""
    import ctypes
    import glob
    for path in glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "*openblas*")):
        lib = ctypes.CDLL(path)                    # already loaded by numpy: the same library
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(n)
                return True
    return False


def machine():
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas['name']} {blas.get('version', '')}".strip()
    except Exception:                                   # older numpy: no dict form
        blas = "its BLAS"
    return (f"{platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}, "
            f"numpy {np.__version__} on {blas}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (matmul up to 128)")
    parser.add_argument("--reps", type=int, default=None, help="timed calls per measurement "
                        "(default 5 for operations, 3 for the matmul sweep)")
    args = parser.parse_args()
    op_reps = args.reps or (3 if args.quick else 5)
    mm_reps = args.reps or 3
    sizes = QUICK_MATMUL_SIZES if args.quick else MATMUL_SIZES

    threads = "1 BLAS thread" if limit_numpy_threads(1) else "BLAS threads left at numpy's default"
    print(f"stage3_native (device 'cpu', C) against stage2 (device 'python') and numpy; {machine()}, "
          f"{threads}")
    print(f"\n(a) median of {op_reps} calls after one warm-up, float32; matmul on 'cpu' uses the "
          f"default variant {tg.backend.get('cpu').matmul_variant!r}")
    print(format_op_table(measure_ops(args.quick, op_reps)), flush=True)

    print(f"\n(b) matmul float32 (n,n)@(n,n), GFLOPS = 2n^3 / median time of {mm_reps} calls")
    seconds, notes = measure_matmul(sizes, mm_reps)
    print(format_gflops_table(seconds))
    for note in notes:
        print(f"  note: {note}")


if __name__ == "__main__":
    main()
