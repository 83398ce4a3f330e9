"""The fused attention kernels alone (stage3_native/csrc/attention.c), device "cpu": the
blocked (flash-attention) variant and the naive one, float32 and float64, forward and
backward, causal, at each SIMD level this CPU runs, on one thread.

Each kernel is called through the cpu backend (as stage2's attention does, minus autograd)
on (B, H, T, d) heads with e = d, the keys as many as the queries. Reported: the median
of --reps calls' CPU time (time.process_time: other programs on a shared machine do not
count), then the median of that over --rounds rounds, and GFLOP/s counting the products'
multiply-adds over the (query, key) pairs the mask keeps: 2 (d + e) per pair forward (the
scores q.k, then p v), 2 (3 d + 2 e) backward (the scores again, dp, dv, dk, dq).

Each round runs each library in a fresh process (TRACEGRAD_NUM_THREADS=1 before it loads).
--baseline DIR adds the library of another checkout (e.g. an older commit unpacked with
`git archive` and built with `python -m stage3_native.build`) to the same rounds, the two
taking turns, and a column "vs base": the baseline's time over this checkout's (> 1:
this one is faster).

    python benchmarks/attention.py [--shapes 8,4,256,32 1,12,1024,64] [--levels generic avx2]
                                   [--variants blocked naive] [--reps 7] [--rounds 3]
                                   [--baseline DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def flops(shape, direction):
    b, h, t, d = shape
    pairs = b * h * t * (t + 1) // 2                  # causal, as many keys as queries
    return pairs * (2 * (d + d) if direction == "forward" else 2 * (3 * d + 2 * d))


def worker(args):
    """Runs in the library's own process: one JSON line per measurement."""
    os.environ["TRACEGRAD_NUM_THREADS"] = "1"
    sys.path.insert(0, args.root)
    import numpy as np
    import stage2_tensor as tg
    from stage2_tensor import backend
    from stage3_native.cpu import backend as cpu_backend

    cpu = backend.get("cpu")
    levels = [level for level in cpu_backend.simd_levels() if not args.levels or level in args.levels]
    for level in levels:
        cpu_backend.use_simd_level(level)
        for shape in args.shapes:
            b, h, t, d = shape
            for dtype in (tg.float32, tg.float64):
                rng = np.random.default_rng(0)
                q, k, v, grad = (tg.from_numpy(rng.standard_normal(shape).astype(dtype.name), device="cpu").as_view()
                                 for _ in range(4))
                for variant in args.variants:
                    cpu.attention_variant = variant
                    out, lse = cpu.attention(q, k, v, 0, d ** -0.5, dtype)
                    out = tg.Tensor.from_buffer(out, (b, t, h, d), dtype, "cpu").transpose(1, 2).as_view()
                    lse = tg.Tensor.from_buffer(lse, (b, h, t), dtype, "cpu").as_view()
                    calls = {"forward": lambda: cpu.attention(q, k, v, 0, d ** -0.5, dtype),
                             "backward": lambda: cpu.attention_backward(grad, q, k, v, out, lse, 0, d ** -0.5, dtype)}
                    for direction, call in calls.items():
                        call()                                              # warm-up
                        seconds = []
                        for _ in range(args.reps):
                            start = time.process_time()
                            call()
                            seconds.append(time.process_time() - start)
                        print(json.dumps({"key": [level, ",".join(map(str, shape)), dtype.name, variant, direction],
                                          "seconds": statistics.median(seconds)}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=["8,4,256,32", "1,12,1024,64"],
                        help="B,H,T,d of each case")
    parser.add_argument("--levels", nargs="+", help="SIMD levels (default: every one this CPU runs)")
    parser.add_argument("--variants", nargs="+", default=["blocked", "naive"], choices=["blocked", "naive"])
    parser.add_argument("--reps", type=int, default=7, help="calls per measurement (the median is kept)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the median over them is reported)")
    parser.add_argument("--baseline", metavar="DIR", help="another checkout's library, in the same rounds")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.shapes = [tuple(int(x) for x in s.split(",")) for s in args.shapes]
    if args.worker:
        return worker(args)

    trees = {"this": str(ROOT)} | ({"base": str(Path(args.baseline).resolve())} if args.baseline else {})
    results = {}                                       # (tree, key) -> per-round medians
    for r in range(args.rounds):
        for tree, root in (list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]):
            command = [sys.executable, __file__, "--worker", "--root", root, "--reps", str(args.reps),
                       "--shapes", *[",".join(map(str, s)) for s in args.shapes], "--variants", *args.variants]
            command += ["--levels", *args.levels] if args.levels else []
            lines = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True,
                                   env=os.environ | {"TRACEGRAD_NUM_THREADS": "1"}).stdout.splitlines()
            for line in lines:
                row = json.loads(line)
                results.setdefault((tree, tuple(row["key"])), []).append(row["seconds"])
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)

    print(f"attention kernels, causal, one thread, CPU time: median of {args.reps} calls, "
          f"median of {args.rounds} rounds" + (f"; base: {trees['base']}" if "base" in trees else ""))
    header = f"{'level':8} {'B,H,T,d':13} {'dtype':8} {'variant':8} {'pass':9} {'ms':>9} {'GFLOP/s':>8}"
    print(header + (f" {'base ms':>9} {'vs base':>8}" if "base" in trees else ""))
    for (tree, key), seconds in results.items():
        if tree != "this":
            continue
        level, shape, dtype, variant, direction = key
        median = statistics.median(seconds)
        gflops = flops(tuple(int(x) for x in shape.split(",")), direction) / median / 1e9
        line = f"{level:8} {shape:13} {dtype:8} {variant:8} {direction:9} {median * 1e3:9.2f} {gflops:8.2f}"
        if ("base", key) in results:
            base = statistics.median(results[("base", key)])
            line += f" {base * 1e3:9.2f} {base / median:7.1f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()
