"""Device "cuda" on one GPU: its matmul kernels against cuBLAS, and training against PyTorch
on the same GPU (chapter on native kernels, section "CUDA").

(a) SGEMM, float32 (n, n) @ (n, n) for n = 1024, 2048, 4096, 8192: each matmul variant of
    the device (stage3_native/cuda/matmul.cu: "naive" up to 4096, where it already takes a
    while; "tiled"; "cublas" and "cublas-tf32" where libcublas loads), and PyTorch's
    torch.matmul on the same GPU (plain float32, and TF32 allowed) when torch.cuda is
    available. GFLOPS = 2 n^3 / seconds per product. A timed block is --reps products
    queued back to back between two synchronizations (backend.synchronize(), or
    torch.cuda.synchronize()), so the Python call of one product overlaps the GPU's work
    on the previous one, as in a training step; each figure is the median of --rounds
    blocks. Each variant's product is checked against numpy's float64 one on 16 rows.
    Goal (CUDA issue): tiled >= 0.30 x cuBLAS at n = 4096.
(b) MNIST: stage4's training loop (``python -m stage4_models.mnist train``: 60,000 SGD
    steps of 32, the thesis's loss, the loss read back every step) on the device and on
    device "cpu": wall time of the loop. The MNIST files come from the usual cache; where
    they are missing, random images of the same shapes stand in (the time does not depend
    on the pixels; the accuracy is then meaningless and not reported).
(c) GPT training, benchmarks/gpt.py's "char" and "tiny" configurations (same model, batch,
    AdamW, random batches): tracegrad on the device against gpt.py's PyTorch twin of the
    model in eager mode on the same GPU, same initial weights and batches. Warm-up steps,
    then --rounds rounds of --steps steps per engine (the engine that goes first alternates),
    each block ending with a synchronization; tokens/s from the median block. Goal (CUDA
    issue): at least half PyTorch's throughput on the char-GPT step.

Results are printed and written, with the GPU's name, to benchmarks/results/cuda.json (the
chapter's plots read it) and cuda.md (the printed tables). --quick runs tiny sizes as a
smoke test, on device "cuda-emu" too (the kernels on the CPU: no GPU needed); it writes
files only when --out is given. On device "cuda" without a GPU the script stops at once,
saying why.

    python benchmarks/cuda.py [--device cuda] [--quick] [--only gemm mnist gpt]
                              [--rounds 5] [--steps N] [--out PATH] [--no-torch]
"""
import argparse
import datetime
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(Path(__file__).resolve().parent))   # after the root: gpt.py and training.py,
                                                         # not this folder's stage2_tensor.py
import stage2_tensor as tg  # noqa: E402
import stage3_native  # noqa: E402,F401  (registers "cpu", "cuda", "cuda-emu")
from stage2_tensor import backend, dtypes  # noqa: E402
from stage2_tensor.backend import View  # noqa: E402
from stage3_native.cuda import backend as cuda_backend  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
GEMM_SIZES = (1024, 2048, 4096, 8192)
NAIVE_MAX = 4096                  # naive at 8192 alone would take minutes
GOAL_SIZE, GEMM_GOAL = 4096, 0.30
GPT_GOAL = 0.5
MNIST_STEPS = 60000
QUICK = {"gemm": (64, 160), "mnist_steps": 30, "gpt_steps": 1}
BLOCK_SECONDS = 0.25              # a timed block of products lasts about this long


def torch_cuda():
    """torch, when it is importable and sees a GPU; else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


# ---- (a) SGEMM ------------------------------------------------------------------------------
def timed_blocks(call, synchronize, rounds, reps):
    """Median seconds per call over `rounds` blocks of `reps` calls, each block between two
    synchronizations."""
    per_call = []
    for _ in range(rounds):
        synchronize()
        start = time.perf_counter()
        for _ in range(reps):
            call()
        synchronize()
        per_call.append((time.perf_counter() - start) / reps)
    return statistics.median(per_call)


def reps_for(call, synchronize, limit=50):
    """How many calls fill a block of about BLOCK_SECONDS (one call timed, after a warm-up)."""
    call()
    synchronize()
    start = time.perf_counter()
    call()
    synchronize()
    return max(1, min(limit, int(BLOCK_SECONDS / max(time.perf_counter() - start, 1e-6))))


def gemm(be, sizes, rounds, torch):
    """{"gflops": {variant: {n: GFLOPS}}, "error": {variant: {n: largest relative error}}}"""
    f32 = dtypes.float32
    rng = np.random.default_rng(0)
    gflops, errors = {}, {}
    saved = be.matmul_variant
    for n in sizes:
        host_a = rng.standard_normal((n, n), dtype=np.float32)
        host_b = rng.standard_normal((n, n), dtype=np.float32)
        a = View(be.from_bytes(host_a.tobytes(), f32), (n, n), (n, 1), 0, f32)
        b = View(be.from_bytes(host_b.tobytes(), f32), (n, n), (n, 1), 0, f32)
        rows = rng.choice(n, size=min(16, n), replace=False)
        expected = host_a[rows].astype(np.float64) @ host_b.astype(np.float64)
        scale = np.abs(host_a[rows]).astype(np.float64) @ np.abs(host_b).astype(np.float64)
        flops = 2.0 * n ** 3
        for variant in be.matmul_variants():
            if variant == "naive" and n > NAIVE_MAX:
                continue
            be.matmul_variant = variant
            out = be.matmul(a, b, f32)
            got = be.as_numpy(View(out, (n, n), (n, 1), 0, f32))[rows].astype(np.float64)
            errors.setdefault(variant, {})[n] = float(np.max(np.abs(got - expected) / scale))
            call = lambda a=a, b=b: be.matmul(a, b, f32)                 # noqa: E731
            seconds = timed_blocks(call, be.synchronize, rounds, reps_for(call, be.synchronize))
            gflops.setdefault(variant, {})[n] = flops / seconds / 1e9
            print(f"    n={n:5} {variant:12} {gflops[variant][n]:10.1f} GFLOPS", flush=True)
        if torch is not None:
            ta, tb = torch.from_numpy(host_a).cuda(), torch.from_numpy(host_b).cuda()
            for name, tf32 in (("torch", False), ("torch-tf32", True)):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                call = lambda ta=ta, tb=tb: torch.matmul(ta, tb)         # noqa: E731
                got = call()[torch.from_numpy(rows).cuda()].double().cpu().numpy()
                errors.setdefault(name, {})[n] = float(np.max(np.abs(got - expected) / scale))
                seconds = timed_blocks(call, torch.cuda.synchronize, rounds, reps_for(call, torch.cuda.synchronize))
                gflops.setdefault(name, {})[n] = flops / seconds / 1e9
                print(f"    n={n:5} {name:12} {gflops[name][n]:10.1f} GFLOPS", flush=True)
            torch.backends.cuda.matmul.allow_tf32 = False
        a = b = ta = tb = None                                   # free the GPU memory of this n
        be.empty_cache()
    be.matmul_variant = saved
    result = {"sizes": list(sizes), "gflops": gflops, "error": errors, "goal": GEMM_GOAL, "goal_size": GOAL_SIZE}
    if GOAL_SIZE in gflops.get("tiled", {}) and GOAL_SIZE in gflops.get("cublas", {}):
        result["tiled_over_cublas"] = gflops["tiled"][GOAL_SIZE] / gflops["cublas"][GOAL_SIZE]
    return result


def format_gemm(result):
    sizes = result["sizes"]
    lines = ["(a) SGEMM float32 (n, n) @ (n, n): GFLOPS, median of timed blocks of back-to-back products",
             f"  {'':14}" + "".join(f"{f'n={n}':>11}" for n in sizes) + f"{'max rel. error':>17}"]
    for name, by_size in result["gflops"].items():
        cells = "".join(f"{by_size[n]:11.1f}" if n in by_size else f"{'-':>11}" for n in sizes)
        lines.append(f"  {name:14}{cells}{max(result['error'][name].values()):17.1e}")
    if "tiled_over_cublas" in result:
        ratio = result["tiled_over_cublas"]
        lines.append(f"  tiled / cuBLAS at n={result['goal_size']}: {ratio:.2f} "
                     f"(goal >= {result['goal']:.2f}: {'met' if ratio >= result['goal'] else 'not met'})")
    return "\n".join(lines)


# ---- (b) MNIST -------------------------------------------------------------------------------
def mnist_data(quick):
    """({"train": (images, labels), "test": ...}, None), or random stand-ins of the same
    shapes and the reason the real files could not be read."""
    from stage4_models.mnist import data
    try:
        return {split: data.load(split, download=not quick) for split in ("train", "test")}, None
    except Exception as err:                            # missing, offline, corrupt: say which
        rng = np.random.default_rng(0)
        fake = {split: (rng.integers(0, 256, (size, 28, 28), dtype=np.uint8),
                        rng.integers(0, 10, size, dtype=np.uint8))
                for split, size in (("train", 60000), ("test", 10000))}
        return fake, f"{type(err).__name__}: {err}"


def mnist(device, steps, quick):
    from stage4_models.mnist.training import Config, train
    datasets, missing = mnist_data(quick)
    if missing:
        print(f"    MNIST not found ({missing}); timing on random images of the same shapes", flush=True)
    result = {"steps": steps, "batch": 32, "real_data": missing is None, "seconds": {}, "accuracy": {}}
    for name in (device, "cpu"):
        run = train(Config(optim="sgd", steps=steps, device=name), datasets, progress=False,
                    test_limit=1000 if quick else None)
        result["seconds"][name] = run.wall_seconds
        result["accuracy"][name] = run.accuracy if missing is None else None
        print(f"    {name:9} {run.wall_seconds:8.1f} s  {steps * 32 / run.wall_seconds:12,.0f} examples/s", flush=True)
    result["cpu_over_device"] = result["seconds"]["cpu"] / result["seconds"][device]
    return result


def format_mnist(result, device):
    seconds = result["seconds"]
    lines = [f"(b) MNIST, {result['steps']:,} SGD steps of {result['batch']}: wall time of the training loop"
             + ("" if result["real_data"] else " (random images: MNIST was not found)")]
    for name, s in seconds.items():
        accuracy = result["accuracy"][name]
        lines.append(f"  {name:9} {s:9.1f} s {result['steps'] * result['batch'] / s:12,.0f} examples/s"
                     + (f"   test accuracy {accuracy:.4f}" if accuracy is not None else ""))
    lines.append(f"  cpu time / {device} time: {result['cpu_over_device']:.2f}x")
    return "\n".join(lines)


# ---- (c) GPT ---------------------------------------------------------------------------------
class Engine:
    """A training step, the synchronization of its device, and what it measured."""

    def __init__(self, name, step, synchronize):
        self.name, self.step, self.synchronize = name, step, synchronize
        self.losses, self.block_seconds, self.i = [], [], 0

    def run(self, n, timed=True):
        losses = []
        self.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            losses.append(self.step(self.i))
            self.i += 1
        self.synchronize()
        seconds = (time.perf_counter() - start) / n
        self.losses += [float(loss.item()) for loss in losses]    # read after the clock stops
        if timed:
            self.block_seconds.append(seconds)


def gpt_configs(quick):
    """{name: (GPTConfig, batch)}: gpt.py's, or a toy one for --quick."""
    import gpt as gpt_bench
    from stage4_models.gpt import GPTConfig
    if quick:
        return {"toy": (GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_head=2, n_embd=16, dropout=0.0), 2)}
    return {name: gpt_bench.CONFIGS[name][:2] for name in ("char", "tiny")}


def gpt(be, device, torch, quick, rounds, steps, warmup):
    import gpt as gpt_bench
    import training
    from stage4_models.gpt import GPT
    results = {}
    for name, (config, batch) in gpt_configs(quick).items():
        tokens = batch * config.block_size
        pool = gpt_bench.batches(config, batch)
        tg.seed(0)
        model = GPT(config, device=device)
        opt = tg.optim.AdamW(model.parameters(), **gpt_bench.ADAMW)
        data = [(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device)) for x, y in pool]
        engines = [Engine("tracegrad", training.training_step(opt, lambda i, t, model=model: model(i, t)[1], data),
                          be.synchronize)]
        if torch is not None:
            training.torch = torch
            theirs = training.torch_gpt_model(config, sdpa=False).cuda()
            theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in training.weights_of(model).items()})
            topt = torch.optim.AdamW(theirs.parameters(), **gpt_bench.ADAMW)
            tdata = [(torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()) for x, y in pool]
            engines.append(Engine("pytorch", training.training_step(topt, lambda i, t, m=theirs: m(i, t)[1], tdata),
                                  torch.cuda.synchronize))
        print(f"    {name}: vocab {config.vocab_size}, block {config.block_size}, {config.n_layer} layers, "
              f"n_embd {config.n_embd}, batch {batch} ({tokens} tokens/step)", flush=True)
        for e in engines:
            e.run(warmup, timed=False)
        for r in range(rounds):
            for e in (engines if r % 2 == 0 else engines[::-1]):
                e.run(steps)
            print(f"      round {r + 1}: " + ", ".join(
                f"{e.name} {e.block_seconds[-1] * 1e3:.2f} ms/step" for e in engines), flush=True)
        result = {"tokens_per_step": tokens, "config": vars(config), "batch": batch, "engines": {}}
        for e in engines:
            seconds = statistics.median(e.block_seconds)
            result["engines"][e.name] = {"ms_per_step": seconds * 1e3, "tokens_per_second": tokens / seconds,
                                         "first_loss": e.losses[0], "block_seconds": e.block_seconds}
        if torch is not None:
            ratios = [t / o for o, t in zip(engines[0].block_seconds, engines[1].block_seconds)]
            result["ratio"] = statistics.median(ratios)
            result["goal"] = GPT_GOAL if name == "char" else None
        results[name] = result
    return results


def format_gpt(results, device):
    lines = [f"(c) GPT training (AdamW), tracegrad on device {device!r} vs PyTorch eager on the same GPU"]
    for name, result in results.items():
        for engine, r in result["engines"].items():
            lines.append(f"  {name:6} {engine:10} {r['ms_per_step']:9.2f} ms/step {r['tokens_per_second']:12,.0f} "
                         f"tokens/s   first loss {r['first_loss']:.4f}")
        if "ratio" in result:
            goal = result["goal"]
            lines.append(f"  {name:6} tracegrad / pytorch throughput {result['ratio']:.2f}x"
                         + (f" (goal >= {goal}: {'met' if result['ratio'] >= goal else 'not met'})" if goal else ""))
    return "\n".join(lines)


# ---- main ------------------------------------------------------------------------------------
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cuda-emu"))
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (runs on cuda-emu)")
    parser.add_argument("--only", nargs="+", choices=("gemm", "mnist", "gpt"), default=["gemm", "mnist", "gpt"])
    parser.add_argument("--rounds", type=int, default=5, help="timed blocks per measurement (the median is kept)")
    parser.add_argument("--steps", type=int, help="GPT steps per timed block (default 10; 1 with --quick)")
    parser.add_argument("--mnist-steps", type=int, help=f"MNIST steps (default {MNIST_STEPS:,})")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--out", help="the JSON file to write (default: benchmarks/results/cuda.json, "
                                      "and cuda.md beside it; none with --quick)")
    args = parser.parse_args(argv)

    reason = cuda_backend.unavailable_reason(args.device)
    if reason is not None:
        raise SystemExit(f"benchmarks/cuda.py: device {args.device!r} cannot run here: {reason}")
    be = backend.get(args.device)
    torch = None if args.no_torch or args.device != "cuda" else torch_cuda()
    rounds = 2 if args.quick else args.rounds
    report = {"device": args.device, "gpu": be.device_name(), "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "platform": platform.platform(), "python": platform.python_version(),
              "torch": torch.__version__ if torch else None,
              "cublas": be.cublas_library() or None, "default_matmul": be.matmul_variant,
              "quick": args.quick, "rounds": rounds}
    header = (f"device {args.device!r}: {report['gpu']}; cuBLAS {report['cublas'] or 'not loaded'}; "
              f"default matmul {report['default_matmul']!r}; PyTorch "
              + (f"{torch.__version__} on {torch.cuda.get_device_name()}" if torch else
                 "not compared (not importable, no GPU for it, --no-torch, or device cuda-emu)"))
    print(header, flush=True)
    tables = [header]

    if "gemm" in args.only:
        print("(a) SGEMM", flush=True)
        report["gemm"] = gemm(be, QUICK["gemm"] if args.quick else GEMM_SIZES, rounds, torch)
        tables.append(format_gemm(report["gemm"]))
    if "mnist" in args.only:
        steps = args.mnist_steps or (QUICK["mnist_steps"] if args.quick else MNIST_STEPS)
        print(f"(b) MNIST, {steps:,} steps", flush=True)
        report["mnist"] = mnist(args.device, steps, args.quick)
        tables.append(format_mnist(report["mnist"], args.device))
    if "gpt" in args.only:
        print("(c) GPT training", flush=True)
        report["gpt"] = gpt(be, args.device, torch, args.quick, rounds,
                            args.steps or (QUICK["gpt_steps"] if args.quick else 10), 1 if args.quick else 3)
        tables.append(format_gpt(report["gpt"], args.device))

    text = "\n\n".join(tables)
    print("\n" + text)
    out = Path(args.out) if args.out else (None if args.quick else RESULTS / "cuda.json")
    if out is not None:
        import training         # here, not at the top: it imports torch where there is one
        training.write_report(out, report, text, "cuda.py")
    return report


if __name__ == "__main__":
    main()
