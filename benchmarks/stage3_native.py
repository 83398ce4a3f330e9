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
(c) Fused layers of the char-GPT, forward + backward on device "cpu", float32: LayerNorm
    as one kernel each way (csrc/layernorm.c) against the same formula in tensor operations
    (``F.layer_norm_composite``), and the embedding lookup with the indices as a tensor
    against a path through a Python list; PyTorch's, with as many threads, if it is
    installed.

    python benchmarks/stage3_native.py [--quick] [--reps 5] [--fused] [--threads N]

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


# ---------------------------------------------------------------------------------------
# (c) fused layers: LayerNorm and the embedding lookup

def embedding_via_list(weight, idx):
    """weight[idx] without index tensors reaching the kernels: the indices made Python
    ints (tolist), checked and wrapped in a Python loop, and handed back to C as a new
    array (the forward pass; the backward pass reuses that array)."""
    from stage2_tensor.views import IndexSelect
    size = weight.shape[0]
    values = idx.reshape(-1).tolist()
    for v in values:
        if not -size <= v < size:
            raise IndexError(f"index {v} is out of bounds for dimension 0 with size {size}")
    index = tg.tensor([v % size for v in values], device=weight.device)
    return IndexSelect.apply(weight, 0, index).reshape(*idx.shape, weight.shape[1])


def _train_step(forward, params, upstream):
    """A callable: clear the gradients, forward, backward from ``upstream``; returns the
    output and the gradients (for the checks)."""
    def step():
        for p in params:
            p.grad = None
        out = forward(*params)
        out.backward(upstream)
        return [out] + [p.grad for p in params]
    return step


def fused_cases(quick=False, seed=0):
    """(name, {variant: step}) for table (c); variants "before", "after" and "torch"."""
    import stage2_tensor.nn.functional as F
    rng = np.random.default_rng(seed)
    rows, n = (8 * 128, 128) if quick else (32 * 128, 128)
    x = rng.standard_normal((rows, n), dtype=np.float32)
    w, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    g = rng.standard_normal((rows, n), dtype=np.float32)
    batch, vocab = ((8, 128) if quick else (32, 128)), 65
    table = rng.standard_normal((vocab, n), dtype=np.float32)
    idx = rng.integers(0, vocab, size=batch)
    g_emb = rng.standard_normal((*batch, n), dtype=np.float32)

    def on_cpu(a, grad=True):
        return tg.from_numpy(a).to("cpu").requires_grad_(grad)

    ln = {"before": _train_step(lambda x, w, b: F.layer_norm_composite(x, (n,), w, b),
                                [on_cpu(a) for a in (x, w, b)], on_cpu(g, False)),
          "after": _train_step(lambda x, w, b: F.layer_norm(x, n, w, b),
                               [on_cpu(a) for a in (x, w, b)], on_cpu(g, False))}
    cpu_idx = tg.from_numpy(idx).to("cpu")
    emb = {"before": _train_step(lambda t: embedding_via_list(t, cpu_idx), [on_cpu(table)], on_cpu(g_emb, False)),
           "after": _train_step(lambda t: t[cpu_idx], [on_cpu(table)], on_cpu(g_emb, False))}
    torch = _torch()
    if torch is not None:
        def on_torch(a, grad=True):
            return torch.from_numpy(a.copy()).requires_grad_(grad)
        ln["torch"] = _train_step(lambda x, w, b: torch.nn.functional.layer_norm(x, (n,), w, b),
                                  [on_torch(a) for a in (x, w, b)], on_torch(g, False))
        torch_idx = torch.from_numpy(idx)
        emb["torch"] = _train_step(lambda t: torch.nn.functional.embedding(torch_idx, t),
                                   [on_torch(table)], on_torch(g_emb, False))
    return [(f"LayerNorm({n}) on ({rows},{n})", ln),
            (f"Embedding({vocab},{n}) on {batch} indices", emb)]


def _torch():
    """PyTorch with tracegrad's thread count, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(stage3_native.get_num_threads())
    return torch


def _as_numpy(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.numpy()


def measure_fused(quick=False, reps=20):
    """Median seconds of a forward + backward step per layer and variant: a list of
    (name, {variant: seconds}). The variants' outputs and gradients are checked against
    "after"'s first. The rounds interleave the variants, so a busy neighbour slows all."""
    rows = []
    for name, steps in fused_cases(quick):
        reference = [_as_numpy(r) for r in steps["after"]()]
        for variant, step in steps.items():
            for got, want in zip(step(), reference):
                np.testing.assert_allclose(_as_numpy(got), want, rtol=1e-3, atol=1e-3,
                                           err_msg=f"{name}, {variant}")
        times = {variant: [] for variant in steps}
        for _ in range(reps):
            for variant, step in steps.items():
                times[variant].append(_timed(step))
        rows.append((name, {variant: statistics.median(ts) for variant, ts in times.items()}))
    return rows


def format_fused_table(rows):
    lines = [f"  {'layer, forward + backward':42}{'before':>11}{'after':>11}{'torch':>11}"
             f"{'before/after':>14}{'after/torch':>13}"]
    for name, t in rows:
        torch_time = t.get("torch")
        lines.append(f"  {name:42}{format_seconds(t['before']):>11}{format_seconds(t['after']):>11}"
                     f"{format_seconds(torch_time) if torch_time else '-':>11}"
                     f"{t['before'] / t['after']:13.1f}x"
                     + (f"{t['after'] / torch_time:12.2f}x" if torch_time else f"{'-':>13}"))
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
                        "(default 5 for operations, 3 for the matmul sweep, 20 for fused layers)")
    parser.add_argument("--fused", action="store_true", help="only (c), the fused layers")
    parser.add_argument("--threads", type=int, default=None, help="threads for the C kernels "
                        "(and PyTorch in (c)); default: stage3_native's (TRACEGRAD_NUM_THREADS)")
    args = parser.parse_args()
    if args.threads:
        stage3_native.set_num_threads(args.threads)
    op_reps = args.reps or (3 if args.quick else 5)
    mm_reps = args.reps or 3
    sizes = QUICK_MATMUL_SIZES if args.quick else MATMUL_SIZES

    threads = "1 BLAS thread" if limit_numpy_threads(1) else "BLAS threads left at numpy's default"
    print(f"stage3_native (device 'cpu', C) against stage2 (device 'python') and numpy; {machine()}, "
          f"{threads}")
    if args.fused:
        print_fused(args.quick, args.reps or 20)
        return
    print(f"\n(a) median of {op_reps} calls after one warm-up, float32; matmul on 'cpu' uses the "
          f"default variant {tg.backend.get('cpu').matmul_variant!r}")
    print(format_op_table(measure_ops(args.quick, op_reps)), flush=True)

    print(f"\n(b) matmul float32 (n,n)@(n,n), GFLOPS = 2n^3 / median time of {mm_reps} calls")
    seconds, notes = measure_matmul(sizes, mm_reps)
    print(format_gflops_table(seconds))
    for note in notes:
        print(f"  note: {note}")
    print_fused(args.quick, args.reps or 20)


def print_fused(quick, reps):
    torch = _torch()
    print(f"\n(c) fused layers on 'cpu', float32, {stage3_native.get_num_threads()} thread(s): median of "
          f"{reps} forward + backward steps; before = tensor operations (LayerNorm) or indices "
          f"through a Python list (Embedding)"
          + (f"; PyTorch {torch.__version__}" if torch else "; PyTorch not installed"))
    print(format_fused_table(measure_fused(quick, reps)))


if __name__ == "__main__":
    main()
