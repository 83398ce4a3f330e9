"""TinyBLAS (stage3_native/csrc/gemm.c) against OpenBLAS (numpy's), float32, in one run.

(a) The ladder of matmul variants at small n (naive and reordered are slow), 1 thread.
(b) TinyBLAS vs OpenBLAS on square matrices, n = 256 .. 2048, on 1 thread and on 2.
(c) The MNIST MLP's three products (batch 32, 784 -> 128): forward x @ W.T (W is (128, 784),
    so b is a transposed view), weight gradient x.T @ g (a transposed), input gradient g @ W;
    and the forward with Linear's bias fused into the product (raw call only).

TinyBLAS is timed as the raw C call (tg_matmul_f32 into a preallocated out) and through the
public Tensor API (``a @ b`` on device "cpu", variant "tinyblas", which adds Python's
overhead: tens of microseconds per call); OpenBLAS as ``np.matmul(a, b, out=...)`` and as
numpy's ``a @ b``. GFLOPS = 2 m n k / seconds of one call, the methods taking turns call by
call; ratio = TinyBLAS / OpenBLAS. Two summaries of the same calls: the median call (the
typical speed) and the throughput, all the calls' work over their total time, where every
stall counts: on a shared machine a call on two threads now and then waits milliseconds
for a core, and a training loop pays for each one.

How the two are interleaved: each thread count runs in fresh processes, one measuring
TinyBLAS, the next OpenBLAS, then TinyBLAS again, for --rounds rounds, so that a noisy
neighbour slows both alike. Separate processes, because both libraries keep their worker
threads spinning for a while after a call (OpenMP's and OpenBLAS's pools): in one process
the pool of whichever ran last would compete with the other for the cores. Each
process gets OPENBLAS_NUM_THREADS and TRACEGRAD_NUM_THREADS before numpy and the library
load (OpenBLAS reads its variable only then). A TinyBLAS process uses OpenBLAS only for the
float64 reference of each case, on one thread: OpenBLAS's idle threads spin for tens of
milliseconds after each call, on the cores TinyBLAS's threads need (--blas-threads-in-ours
brings that back, to measure it). --tail adds the slowest calls (p10, p1 of GFLOPS).

--clock cpu times one thread by its own CPU time (time.thread_time) instead of the wall
clock: immune to the time slices other processes take on a shared machine, so the figures
are the speed while running (only with --threads 1; two threads are always wall clock).

The header gives the micro-kernel TinyBLAS chose and one core's FMA peak, measured by a
loop of register-only FMAs at that kernel's vector width (tg_gemm_peak_gflops).

--baseline DIR adds a third library to the same rounds: the TinyBLAS of another checkout
(its compiled library, e.g. an older commit unpacked with `git archive` and built with
`python -m stage3_native.build`), so that a change is measured against what it replaces
in one run; the tables then give "vs base", this checkout's median over the baseline's.
--baseline-env VAR=VALUE (repeatable) sets variables for the baseline's processes only,
with or without --baseline: `--baseline-env TRACEGRAD_GEMM_SPLIT=rows` measures the
default grid against BLIS's rows-only split with the B block shared (csrc/gemm.c).

--wakeup measures instead what handing work to OpenMP's threads costs (gemm.c,
"Threads"): an empty parallel region after the threads have idled for a gap, for each
of several settings of libgomp's waiting (GOMP_SPINCOUNT, OMP_WAIT_POLICY), each in fresh
processes (libgomp reads them when it loads), the settings taking turns round by round.

    python benchmarks/gemm.py [--quick] [--rounds 3] [--reps 5] [--threads 1 2] [--clock wall|cpu]
                              [--baseline DIR] [--baseline-env VAR=VALUE] [--wakeup] [--tail]
                              [--blas-threads-in-ours]
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
QUICK_SQUARE_SIZES = (128, 256)
LADDER = {"naive": (256,), "reordered": (256, 512), "blocked": (256, 512), "tinyblas": (256, 512)}
QUICK_LADDER = {"naive": (64,), "reordered": (64, 128), "blocked": (64, 128), "tinyblas": (64, 128)}
# name, (m, n, k), which operand is a transposed view
MNIST = [("forward x @ W.T", (32, 128, 784), "b"),
         ("weight grad x.T @ g", (784, 128, 32), "a"),
         ("input grad g @ W", (32, 784, 128), "")]
# a convolution as one product, weights (Cout, Cin*kh*kw) @ columns (Cin*kh*kw, H*W): the
# tall-skinny shapes of inference (ResNet-50's first 3x3 stage, and its last 1x1 stage)
CONV = [("conv 64x576 @ 576x3136", (64, 3136, 576), ""),
        ("conv 2048x512 @ 512x49", (2048, 49, 512), "")]
LINEAR = "forward + bias (fused)"
CALLS_SECONDS = 0.25


# ---------------------------------------------------------------------------------------
# a worker: one library, one thread count, in its own process

def _samples(calls, flops, reps, clock):
    """GFLOPS of single calls of each zero-argument callable, the callables taking turns
    call by call: at least `reps` calls each, more (up to 300) while they last less than
    CALLS_SECONDS in all."""
    for call in calls.values():                         # warm-up: caches, allocator, threads
        call()
    start = time.perf_counter()
    next(iter(calls.values()))()
    count = max(reps, min(300, int(CALLS_SECONDS / max(time.perf_counter() - start, 1e-7))))
    samples = {name: [] for name in calls}
    for _ in range(count):
        for name, call in calls.items():
            start = clock()
            call()
            samples[name].append(flops / max(clock() - start, 1e-9) / 1e9)
    return samples


def _worker(library, threads, reps, quick, clock_name, ladder):
    import numpy as np

    clock = time.thread_time if clock_name == "cpu" else time.perf_counter
    rng = np.random.default_rng(0)
    result = {}

    def operands(m, n, k, transposed):
        """float32 a (m, k) and b (k, n); the one named by `transposed` a transposed view."""
        a = rng.standard_normal((k, m) if transposed == "a" else (m, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if transposed == "b" else (k, n), dtype=np.float32)
        return (a.T if transposed == "a" else a), (b.T if transposed == "b" else b)

    cases = ([(f"n={n}", (n, n, n), "") for n in (QUICK_SQUARE_SIZES if quick else SQUARE_SIZES)]
             + MNIST + ([] if quick else CONV))

    if library == "openblas":
        for name, (m, n, k), transposed in cases:
            a, b = operands(m, n, k, transposed)
            out = np.empty((m, n), np.float32)
            result[name] = _samples({"raw": lambda: np.matmul(a, b, out=out), "tensor": lambda: a @ b},
                                    2.0 * m * n * k, reps, clock)
        m, n, k = MNIST[0][1]
        x, wt = operands(m, n, k, "b")
        bias, out = rng.standard_normal(n, dtype=np.float32), np.empty((m, n), np.float32)

        def linear():
            np.matmul(x, wt, out=out)
            np.add(out, bias, out=out)

        result[LINEAR] = _samples({"raw": linear}, 2.0 * m * n * k, reps, clock)
        print(json.dumps(result))
        return

    sys.path.insert(0, os.environ.get("TRACEGRAD_BENCH_ROOT") or str(ROOT))   # --baseline's
    import stage2_tensor as tg
    from stage2_tensor import backend
    from stage3_native.cpu import backend as cpu_backend
    from stage3_native.cpu.backend import MATMUL_VARIANTS, ffi, lib

    cpu = backend.get("cpu")
    cpu.matmul_variant = "tinyblas"
    zero = ffi.new("int64_t[]", [0])

    def raw_call(a, b, out, bias=None, variant="tinyblas"):
        """tg_matmul_f32 on the numpy arrays' memory (strides in elements)."""
        def pointer(array):
            return ffi.NULL if array is None else ffi.cast("float *", array.ctypes.data)

        m, k = a.shape
        sa, sb = [s // 4 for s in a.strides], [s // 4 for s in b.strides]
        args = (MATMUL_VARIANTS[variant], 1, zero, zero, m, b.shape[1], k, pointer(a), sa[0], sa[1],
                pointer(b), sb[0], sb[1], pointer(bias), pointer(out))
        keep = (a, b, bias, out)                        # the closure keeps the arrays alive
        return lambda: keep and lib.tg_matmul_f32(*args)

    def tensor(array, transposed):
        return (tg.from_numpy(np.ascontiguousarray(array.T), device="cpu").T if transposed
                else tg.from_numpy(array, device="cpu"))

    result["kernel"] = cpu_backend.gemm_kernel()
    result["peak"] = lib.tg_gemm_peak_gflops()
    if ladder:
        result["ladder"] = {}
        for variant, sizes in (QUICK_LADDER if quick else LADDER).items():
            for n in sizes:
                a, b = operands(n, n, n, "")
                out = np.empty((n, n), np.float32)
                result["ladder"].setdefault(variant, {})[n] = statistics.median(_samples(
                    {"raw": raw_call(a, b, out, variant=variant)}, 2.0 * n ** 3, 3, clock)["raw"])
    worst = 0.0
    for name, (m, n, k), transposed in cases:
        a, b = operands(m, n, k, transposed)
        ta, tb = tensor(a, transposed == "a"), tensor(b, transposed == "b")
        out = np.empty((m, n), np.float32)
        raw = raw_call(a, b, out)
        raw()
        expected = a.astype(np.float64) @ b.astype(np.float64)
        worst = max(worst, float(np.abs(out - expected).max() / np.abs(expected).max()))
        result[name] = _samples({"raw": raw, "tensor": lambda: ta @ tb}, 2.0 * m * n * k, reps, clock)
    m, n, k = MNIST[0][1]
    x, wt = operands(m, n, k, "b")
    bias, out = rng.standard_normal(n, dtype=np.float32), np.empty((m, n), np.float32)
    result[LINEAR] = _samples({"raw": raw_call(x, wt, out, bias)}, 2.0 * m * n * k, reps, clock)
    result["error"] = worst
    print(json.dumps(result))


# ---------------------------------------------------------------------------------------
# the parent: alternate the workers, then the tables

def worker_env(library, threads, args):
    """The environment of a worker process. A TinyBLAS worker calls OpenBLAS only for the
    float64 reference of each case, so it gets one OpenBLAS thread: after a call OpenBLAS's
    idle threads spin (yielding) for about as long as a training shape's whole run of calls
    takes, on the cores that OpenMP's threads need (benchmarks/RESULTS.md, TinyBLAS, "the
    slow calls on 2 threads were the harness")."""
    blas_threads = threads if library == "openblas" or args.blas_threads_in_ours else 1
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas_threads), TRACEGRAD_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads))
    if library == "baseline":                   # the same worker on the other checkout
        if args.baseline:
            env["TRACEGRAD_BENCH_ROOT"] = str(Path(args.baseline).resolve())
        env.update(setting.split("=", 1) for setting in args.baseline_env)
    return env


def run_worker(library, threads, args, ladder=False):
    env = worker_env(library, threads, args)
    command = [sys.executable, __file__, "--worker", "openblas" if library == "openblas" else "tinyblas",
               "--threads", str(threads), "--reps",
               str(args.reps), "--clock", args.clock] + (["--quick"] if args.quick else []) + (["--ladder"] if ladder else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the {library} worker ({threads} threads) failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(threads, args):
    """{case: {"tinyblas": {method: [samples]}, "openblas": {...}}} and the TinyBLAS extras."""
    merged, extras = {}, {}
    libraries = ("tinyblas", "openblas") + (("baseline",) if args.baseline or args.baseline_env else ())
    for round_ in range(args.rounds):
        for library in libraries:
            ladder = library == "tinyblas" and round_ == 0 and threads == 1 and not args.no_ladder
            result = run_worker(library, threads, args, ladder=ladder)
            for key in ("kernel", "peak", "ladder"):
                if key in result:
                    value = result.pop(key)
                    if library == "tinyblas":
                        extras[key] = value
            extras["error"] = max(extras.get("error", 0.0), result.pop("error", 0.0))
            for case, methods in result.items():
                for method, samples in methods.items():
                    merged.setdefault(case, {}).setdefault(library, {}).setdefault(method, []).extend(samples)
    return merged, extras


def format_ladder(ladder):
    sizes = sorted({int(n) for by_size in ladder.values() for n in by_size})
    lines = ["(a) matmul variants, float32 (n,n)@(n,n), 1 thread, GFLOPS (raw C call)",
             f"  {'variant':<12}" + "".join(f"{f'n={n}':>10}" for n in sizes)]
    for variant, by_size in ladder.items():
        lines.append(f"  {variant:<12}" + "".join(f"{by_size[str(n)]:10.2f}" if str(n) in by_size else f"{'':>10}"
                                                 for n in sizes))
    return "\n".join(lines)


def _throughput(samples):
    """GFLOPS over all the calls together: total work / total time (every stall counts)."""
    return len(samples) / sum(1.0 / g for g in samples)


def _spread(samples):
    """The middle half of the calls, as a share of the median: (p75 - p25) / median."""
    q1, q2, q3 = statistics.quantiles(samples, n=4) if len(samples) > 1 else (samples * 3)
    return (q3 - q1) / q2


def format_comparison(title, merged):
    base = any("baseline" in by_library for by_library in merged.values())
    lines = [title,
             f"  {'':<24}{'median call (spread: middle half of the calls / median)':^45}"
             + (f"{'':>9}" if base else "") + f"   {'throughput (all calls)':^27}   {'median call, Python API':^27}",
             f"  {'':<24}{'TinyBLAS':>10}{'':>6}{'OpenBLAS':>10}{'':>6}{'ratio':>7}"
             + (f"{'vs base':>9}" if base else "") + "   "
             + f"{'TinyBLAS':>10}{'OpenBLAS':>10}{'ratio':>7}   " + f"{'Tensor@':>10}{'np a@b':>10}{'ratio':>7}"]
    for case, by_library in merged.items():
        ours, theirs = by_library["tinyblas"], by_library["openblas"]
        raw, raw_ref = statistics.median(ours["raw"]), statistics.median(theirs["raw"])
        total, total_ref = _throughput(ours["raw"]), _throughput(theirs["raw"])
        line = (f"  {case:<24}{raw:10.1f} ({_spread(ours['raw']):3.0%}){raw_ref:10.1f} ({_spread(theirs['raw']):3.0%})"
                f"{raw / raw_ref:7.2f}")
        if base:
            line += f"{raw / statistics.median(by_library['baseline']['raw']):9.2f}"
        line += f"   {total:10.1f}{total_ref:10.1f}{total / total_ref:7.2f}   "
        if "tensor" in ours:
            api, api_ref = statistics.median(ours["tensor"]), statistics.median(theirs["tensor"])
            line += f"{api:10.1f}{api_ref:10.1f}{api / api_ref:7.2f}"
        lines.append(line)
    return "\n".join(lines)


def format_tail(merged):
    """The slow calls behind a low throughput: the GFLOPS that 10% and 1% of the raw calls
    fall below (p10, p1), and how many calls there were."""
    lines = [f"  {'slowest calls, GFLOPS':<24}{'TinyBLAS p10':>14}{'p1':>8}{'OpenBLAS p10':>14}{'p1':>8}{'calls':>8}"]
    for case, by_library in merged.items():
        cells = []
        for library in ("tinyblas", "openblas"):
            samples = by_library[library]["raw"]
            cuts = statistics.quantiles(samples, n=100) if len(samples) > 1 else samples * 99
            cells.append(f"{cuts[9]:14.1f}{cuts[0]:8.1f}")
        lines.append(f"  {case:<24}" + "".join(cells) + f"{len(by_library['tinyblas']['raw']):8d}")
    return "\n".join(lines)


def format_report(by_threads, extras, args):
    clock = "CPU time of the thread" if args.clock == "cpu" else "wall clock"
    lines = [f"TinyBLAS micro-kernel: {extras['kernel']}; {platform.machine()}, {os.cpu_count()} cpus; "
             f"one core's FMA peak (measured at {extras['kernel']} width): {extras['peak']:.1f} GFLOPS",
             f"GFLOPS = 2mnk / time of a call ({clock}), {args.rounds} alternating rounds of processes per "
             "library; ratio = TinyBLAS / OpenBLAS",
             "raw C calls into a preallocated out (median call, and all calls' work / their total time), "
             "then tracegrad's a @ b (Python overhead included) vs numpy's a @ b", ""]
    if "ladder" in extras:
        lines += [format_ladder(extras["ladder"]), ""]
    for threads, merged in by_threads.items():
        plural = "s" if threads > 1 else ""
        lines.append(format_comparison(f"(b, c) float32 on {threads} thread{plural}: GFLOPS", merged))
        if args.tail:
            lines.append(format_tail(merged))
        if extras["peak"]:
            big = [case for case in merged if case.startswith("n=")][-1]
            share = {lib_: statistics.median(merged[big][lib_]["raw"]) / (extras["peak"] * threads)
                     for lib_ in ("tinyblas", "openblas")}
            lines.append(f"  at {big}: TinyBLAS {share['tinyblas']:.0%} of the FMA peak of {threads} core{plural}, "
                         f"OpenBLAS {share['openblas']:.0%}")
        lines.append("")
    lines.append(f"largest relative difference from the float64 product: {extras['error']:.1e}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# --wakeup: what a parallel region costs after the threads idled

SPIN_SETTINGS = ("0", "1000", "30000", "300000", "infinite")   # 0 = OMP_WAIT_POLICY=passive,
GAPS_US = (0, 10, 100, 1000, 10000)                             # infinite = active


def _wakeup_worker(threads):
    sys.path.insert(0, str(ROOT))
    from stage3_native.cpu.backend import lib
    result = {}
    for gap in GAPS_US:
        lib.tg_parallel_region_seconds(threads, 0)      # the pool exists, the threads spin
        count = int(min(200, 0.15 / max(gap * 1e-6, 1e-4)))
        result[gap] = [lib.tg_parallel_region_seconds(threads, gap * 1e-6) * 1e6 for _ in range(count)]
    print(json.dumps(result))


def wakeup(args):
    threads = max(args.threads)
    samples = {spin: {gap: [] for gap in GAPS_US} for spin in SPIN_SETTINGS}
    for _ in range(args.rounds):
        for spin in SPIN_SETTINGS:
            env = dict(os.environ, GOMP_SPINCOUNT=spin, OMP_NUM_THREADS=str(threads))
            env.pop("OMP_WAIT_POLICY", None)
            done = subprocess.run([sys.executable, __file__, "--wakeup-worker", "--threads", str(threads)],
                                  env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"the wakeup worker (GOMP_SPINCOUNT={spin}) failed:\n{done.stderr}")
            for gap, values in json.loads(done.stdout.strip().splitlines()[-1]).items():
                samples[spin][int(gap)].extend(values)
    lines = [f"an empty parallel region of {threads} threads after the threads idled for a gap, "
             f"microseconds: median (p90); {args.rounds} rounds of fresh processes, {os.cpu_count()} cpus",
             f"  {'GOMP_SPINCOUNT':<16}" + "".join(f"{f'gap {gap} us':>18}" for gap in GAPS_US)]
    for spin in SPIN_SETTINGS:
        name = spin + {"0": " (passive)", "infinite": " (active)"}.get(spin, "")
        cells = []
        for gap in GAPS_US:
            values = samples[spin][gap]
            p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
            cells.append(f"{statistics.median(values):9.1f} ({p90:6.0f})")
        lines.append(f"  {name:<16}" + "".join(f"{cell:>18}" for cell in cells))
    print("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke test)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating worker pairs per thread count")
    parser.add_argument("--reps", type=int, default=5, help="the fewest calls per case in each worker")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--json", action="store_true", help="also print every sample as JSON")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout whose TinyBLAS joins the rounds")
    parser.add_argument("--baseline-env", metavar="VAR=VALUE", action="append", default=[],
                        help="an environment variable for the baseline's processes only")
    parser.add_argument("--no-ladder", action="store_true", help="leave out (a), the variants' ladder")
    parser.add_argument("--blas-threads-in-ours", action="store_true",
                        help="give TinyBLAS's workers OpenBLAS's thread count too (the old harness)")
    parser.add_argument("--tail", action="store_true", help="also the slowest calls: p10 and p1 of GFLOPS")
    parser.add_argument("--wakeup", action="store_true", help="the cost of a parallel region instead")
    parser.add_argument("--worker", choices=("tinyblas", "openblas"), help=argparse.SUPPRESS)
    parser.add_argument("--wakeup-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ladder", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if any("=" not in setting for setting in args.baseline_env):
        parser.error(f"--baseline-env expects VAR=VALUE, got {args.baseline_env}")
    if args.wakeup_worker:
        return _wakeup_worker(args.threads[0])
    if args.wakeup:
        return wakeup(args)
    if args.worker:
        return _worker(args.worker, args.threads[0], args.reps, args.quick,
                       args.clock if args.threads[0] == 1 else "wall", args.ladder)
    by_threads, extras = {}, {}
    for threads in args.threads:
        by_threads[threads], found = measure(threads, args)
        extras.update({k: v for k, v in found.items() if k != "error"})
        extras["error"] = max(extras.get("error", 0.0), found["error"])
    print(format_report(by_threads, extras, args))
    if args.json:
        print(json.dumps({"threads": by_threads, **extras}))
    return by_threads, extras


if __name__ == "__main__":
    main()
