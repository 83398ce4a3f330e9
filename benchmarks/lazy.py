"""Eager against lazy execution on the CPU, measured in the same run (chapter 11, lazy
execution and kernel fusion): device "cpu" runs each operation's kernel when it is called;
device "cpu:lazy" (stage3_native/lazy/) records every operation into a graph and runs it
only when a value is read, which lets it fuse operations into generated kernels.

Every timed call builds the computation from inputs already on the device and ends by
reading the result (``.numpy()`` of the output, ``.item()`` of a training step's loss),
so the lazy figures include recording, scheduling, any code generation and running the
kernels. Each implementation is called twice first (warm-up: the lazy device compiles its
fused kernels on first use and caches them on disk), then the implementations of a case
are timed in turn for --rounds rounds, so a slower period of a shared machine hits them
alike; a round times a block of back-to-back calls (as many as fill about 50 ms, at most
50; the garbage collector runs before each block, not inside it) and each figure is the
median over the rounds of the time per call (with --fastest, the fastest round: on a
loaded machine another process can only slow a round). Speedup = eager time / lazy time
(> 1: lazy is faster). Each lazy output is compared with the eager one (the max |diff| column).

Kernels per call: lazy, ``stage3_native.lazy.kernel_count()`` after
``reset_kernel_count()``; eager, the calls of device "cpu"'s backend methods that the lazy
device records or runs in place (stage3_native/lazy/backend.py's RECORDED and IN_PLACE),
counted by wrapping them for one call: the same kind of kernel on both sides.

(a) GELU epilogue: F.linear(x, W, b).gelu(approximate="tanh"), float32, rows x C -> 4C, at
    the GPT's MLP sizes (rows, C) = (768, 128) (char-GPT: batch 12 x block 64) and
    (1024, 768) (GPT-2 small, one sequence of 1024); under tg.no_grad() (inference), and
    with x, W, b requiring grad, forward only (the pre-activation is then saved for the
    backward pass). The (768, 128) product's output is below kernels.EPILOGUE_MIN_BYTES: the
    lazy device runs it as eager does, the product and then the GELU (2 kernels).
(b) LayerNorm over the last dimension of (768, 128) and (4096, 768), without weight and
    bias, written in tensor ops (F.layer_norm_composite: mean, subtract, square, mean, add,
    sqrt, divide), eager against lazy; reference: the hand-written fused kernel
    (F.layer_norm on device "cpu").
(c) Softmax over the last dimension of (3072, 64) (char-GPT's attention scores: batch 12 x
    4 heads x 64 queries, 64 keys) and (4096, 1024), written in tensor ops
    (e = (x - x.max(-1, keepdim=True)).exp(); e / e.sum(-1, keepdim=True)), eager against
    lazy; reference: the fused kernel (x.softmax(-1) on device "cpu"). Eagerly,
    x.max(dim) also computes the indices (one more kernel); the lazy device never runs
    the node of a value nobody reads.
(d) One char-GPT training step (benchmarks/gpt.py's "char" config: vocab 96, block 64,
    4 layers, 4 heads, n_embd 128, batch 12 = 768 tokens; AdamW as gpt.py, random
    batches): zero_grad, forward, loss, backward, AdamW step and reading the loss, with
    the model, optimizer and batches on device "cpu" and on device "cpu:lazy" (same
    initial weights; the first losses must agree). After warm-up steps, --rounds rounds of
    --steps steps per device (the device that goes first alternates); tokens/s from the
    median round. The step, batches and thread setting are gpt.py's and training.py's.

Goals, each printed as "goal met" / "goal not met" from the measured numbers:
    fused LayerNorm: lazy composite LayerNorm >= 1.5x faster than eager, at every size;
    plan cache, LayerNorm: the same >= 1.2x, at both sizes (the plan cache's goal, with the
                     step below);
    GELU epilogue:   lazy linear + GELU >= 1.5x faster than eager, at every size, under
                     no_grad (the requires_grad rows are printed for information);
    training step:   lazy char-GPT step at least 1.2x faster than eager (the plan cache's
                     goal).

Results are printed and written to benchmarks/results/lazy.json and lazy.md (the printed
tables); --quick runs tiny sizes and a toy GPT with 2 rounds as a smoke test and writes
files only when --out is given.

    python benchmarks/lazy.py [--quick] [--rounds 5] [--steps 3] [--only gelu layernorm
                              softmax step] [--threads N] [--fastest] [--out PATH]
"""
import argparse
import datetime
import gc
import os
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
import gpt as gpt_bench  # benchmarks/gpt.py: the char config, its batches, AdamW's settings
import training  # benchmarks/training.py: the training step, the thread setting

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage3_native  # noqa: F401  (registers "cpu" and "cpu:lazy")
from stage2_tensor import backend
from stage3_native import lazy
from stage3_native.lazy.backend import IN_PLACE, RECORDED

RESULTS = Path(__file__).resolve().parent / "results"
EAGER, LAZY = "cpu", "cpu:lazy"
FUSION_GOAL = 1.5                 # lazy LayerNorm and GELU epilogue: this much faster than eager
STEP_GOAL = 1.2                   # lazy training step: this much faster than eager (the plan cache's goal)
CACHE_GOAL = 1.2                  # lazy LayerNorm in ops, both sizes: this much faster (the plan cache's goal)
BLOCK_SECONDS, MAX_REPS = 0.05, 50
# What a case keeps of its rounds: the median; --fastest keeps the fastest round, which
# another process's load (on a shared machine) can only slow, never speed up.
KEEP = {"name": "median", "of": statistics.median}
SIZES = {"gelu": [(768, 128), (1024, 768)],
         "layernorm": [(768, 128), (4096, 768)],
         "softmax": [(12 * 4 * 64, 64), (4096, 1024)]}
QUICK_SIZES = {"gelu": [(16, 8)], "layernorm": [(16, 32)], "softmax": [(16, 32)]}
SECTIONS = ("gelu", "layernorm", "softmax", "step")
TITLES = {"gelu": "(a) GELU epilogue: F.linear(x, W, b).gelu('tanh'), float32, rows x C -> 4C",
          "layernorm": "(b) LayerNorm over the last dim, float32, in tensor ops (F.layer_norm_composite)",
          "softmax": "(c) softmax over the last dim, float32, in tensor ops (x - max, exp, / sum)",
          "step": "(d) char-GPT training step (AdamW, random batches), tokens/s from the kept round"}
HEADER = (f"  {'case':44}{'eager ms':>10}{'lazy ms':>10}{'speedup':>9}{'kernels eager':>15}"
          f"{'kernels lazy':>14}{'max |diff|':>12}")


# ---- counting kernels ---------------------------------------------------------------------------
class EagerKernels:
    """While active, counts the calls of device "cpu"'s backend methods that device
    "cpu:lazy" records or runs in place (so eager and lazy count the same kind of kernel),
    by wrapping them on the backend object; __exit__ removes the wrappers."""

    def __enter__(self):
        self.cpu = backend.get(EAGER)
        self.names = [n for n in RECORDED + IN_PLACE if callable(getattr(self.cpu, n, None))]
        self.count = 0
        for name in self.names:
            setattr(self.cpu, name, self.counted(getattr(self.cpu, name)))
        return self

    def counted(self, method):
        def kernel(*args):
            self.count += 1
            return method(*args)
        return kernel

    def __exit__(self, *exc):
        for name in self.names:                 # the class's methods show through again
            delattr(self.cpu, name)


def kernels_of(device, call):
    """Kernels one call of ``call`` runs on ``device``."""
    if device == LAZY:
        lazy.reset_kernel_count()
        call()
        return lazy.kernel_count()
    with EagerKernels() as counter:
        call()
    return counter.count


# ---- timing -------------------------------------------------------------------------------------
def block_size(call):
    """How many calls fill a block of about BLOCK_SECONDS (one call timed)."""
    start = time.perf_counter()
    call()
    return max(1, min(MAX_REPS, int(BLOCK_SECONDS / max(time.perf_counter() - start, 1e-6))))


def interleaved_medians(calls, rounds):
    """{name: median seconds per call} of the callables in ``calls``, after two warm-up calls
    each, timed in turn for ``rounds`` rounds of a block of calls each."""
    for call in calls.values():
        call()
        call()
    reps = {name: block_size(call) for name, call in calls.items()}
    per_call = {name: [] for name in calls}
    for r in range(rounds):
        for name in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
            gc.collect()                        # not the previous block's garbage
            start = time.perf_counter()
            for _ in range(reps[name]):
                calls[name]()
            per_call[name].append((time.perf_counter() - start) / reps[name])
    return {name: KEEP["of"](t) for name, t in per_call.items()}


def on(device, *arrays, grad=False):
    ts = [tg.from_numpy(a.copy(), device=device) for a in arrays]
    return [t.requires_grad_() for t in ts] if grad else ts


def measure_case(name, make, rounds, reference=None):
    """One row: make(device) gives a callable computing the case on that device and
    returning its result as a numpy array; reference, when given, a callable on device
    "cpu" (a fused kernel) timed alongside as another row."""
    calls = {EAGER: make(EAGER), LAZY: make(LAZY)}
    if reference is not None:
        calls["reference"] = reference
    diff = float(np.max(np.abs(calls[LAZY]().astype(np.float64) - calls[EAGER]())))
    seconds = interleaved_medians(calls, rounds)
    row = {"case": name, "eager_ms": seconds[EAGER] * 1e3, "lazy_ms": seconds[LAZY] * 1e3,
           "speedup": seconds[EAGER] / seconds[LAZY], "kernels_eager": kernels_of(EAGER, calls[EAGER]),
           "kernels_lazy": kernels_of(LAZY, calls[LAZY]), "max_abs_diff": diff}
    if reference is not None:
        row["reference_ms"] = seconds["reference"] * 1e3
        row["kernels_reference"] = kernels_of(EAGER, reference)
    return row


def format_row(row):
    return (f"  {row['case']:44}{row['eager_ms']:10.3f}{row['lazy_ms']:10.3f}{row['speedup']:8.2f}x"
            f"{row['kernels_eager']:15}{row['kernels_lazy']:14}{row['max_abs_diff']:12.1e}")


def format_reference(row, what):
    return (f"  {'  reference: ' + what:44}{row['reference_ms']:10.3f}{'-':>10}{'-':>9}"
            f"{row['kernels_reference']:15}{'-':>14}   lazy / reference time "
            f"{row['lazy_ms'] / row['reference_ms']:.2f}x")


# ---- (a), (b), (c) --------------------------------------------------------------------------------
def gelu_rows(sizes, rounds, log):
    rng = np.random.default_rng(0)
    rows = []
    for n, c in sizes:
        x = rng.standard_normal((n, c), dtype=np.float32)
        w = (rng.standard_normal((4 * c, c), dtype=np.float32) / np.sqrt(c)).astype(np.float32)
        b = rng.standard_normal(4 * c, dtype=np.float32) * 0.1
        for grad in (False, True):
            def make(device, grad=grad, x=x, w=w, b=b):
                xt, wt, bt = on(device, x, w, b, grad=grad)
                if grad:
                    return lambda: F.linear(xt, wt, bt).gelu(approximate="tanh").detach().numpy()

                def call():
                    with tg.no_grad():
                        return F.linear(xt, wt, bt).gelu(approximate="tanh").numpy()
                return call
            label = f"({n}, {c}) -> {4 * c}, " + ("requires_grad, forward" if grad else "no_grad")
            row = measure_case(label, make, rounds)
            row.update(rows=n, C=c, requires_grad=grad)
            rows.append(row)
            log(format_row(row))
    return rows


def composite_rows(sizes, rounds, log, seed, scale_shift, composite, reference, reference_name):
    """(b) and (c): ``composite(t, c)``, an op written in tensor ops, eager against lazy on
    (n, c) inputs of standard normals * scale + shift, with ``reference(t, c)``, the
    device's hand-written kernel, timed eagerly beside them."""
    rng = np.random.default_rng(seed)
    scale, shift = scale_shift
    rows = []
    for n, c in sizes:
        x = rng.standard_normal((n, c), dtype=np.float32) * scale + shift

        def make(device, x=x, c=c):
            (xt,) = on(device, x)
            return lambda: composite(xt, c).numpy()
        (native,) = on(EAGER, x)
        row = measure_case(f"({n}, {c})", make, rounds, lambda native=native, c=c: reference(native, c).numpy())
        row.update(shape=[n, c])
        rows.append(row)
        log(format_row(row))
        log(format_reference(row, reference_name))
    return rows


def layernorm_rows(sizes, rounds, log):
    return composite_rows(sizes, rounds, log, 1, (2, 1), lambda t, c: F.layer_norm_composite(t, (c,)),
                          lambda t, c: F.layer_norm(t, (c,)), "F.layer_norm (cpu)")


def softmax_composite(x):
    e = (x - x.max(-1, keepdim=True).values).exp()
    return e / e.sum(-1, keepdim=True)


def softmax_rows(sizes, rounds, log):
    return composite_rows(sizes, rounds, log, 2, (3, 0), lambda t, c: softmax_composite(t),
                          lambda t, c: t.softmax(-1), "x.softmax(-1) (cpu)")


# ---- (d) the training step -----------------------------------------------------------------------
def step_config(quick):
    """(name, GPTConfig, batch): gpt.py's char config, or a toy one for --quick."""
    if quick:
        from stage4_models.gpt import GPTConfig
        return "toy", GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_head=2, n_embd=16, dropout=0.0), 2
    config, batch, _ = gpt_bench.CONFIGS["char"]
    return "char", config, batch


def step_on(device, config, pool):
    """gpt.py's model and AdamW on ``device`` from seed 0, training.py's step over ``pool``;
    returns step(i) -> the loss as a float (read, so the lazy step has run)."""
    from stage4_models.gpt import GPT
    tg.seed(0)
    model = GPT(config, device=device)
    opt = tg.optim.AdamW(model.parameters(), **gpt_bench.ADAMW)
    data = [(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device)) for x, y in pool]
    step = training.training_step(opt, lambda idx, targets: model(idx, targets)[1], data)
    return lambda i: step(i).item()


def step_row(quick, rounds, steps, warmup, log):
    name, config, batch = step_config(quick)
    tokens = batch * config.block_size
    pool = gpt_bench.batches(config, batch)
    engines = {EAGER: step_on(EAGER, config, pool), LAZY: step_on(LAZY, config, pool)}
    first = {device: step(0) for device, step in engines.items()}       # the same batch, weights
    counter = {device: 1 for device in engines}
    for device, step in engines.items():
        for _ in range(warmup):
            step(counter[device])
            counter[device] += 1
    seconds = {device: [] for device in engines}
    for r in range(rounds):
        for device in (list(engines) if r % 2 == 0 else list(engines)[::-1]):
            gc.collect()
            start = time.perf_counter()
            for _ in range(steps):
                engines[device](counter[device])
                counter[device] += 1
            seconds[device].append((time.perf_counter() - start) / steps)
        log(f"    round {r + 1}: " + ", ".join(f"{d} {s[-1] * 1e3:.1f} ms/step" for d, s in seconds.items()))
    kernels = {device: kernels_of(device, lambda d=device: engines[d](counter[d])) for device in engines}
    median = {device: KEEP["of"](s) for device, s in seconds.items()}
    row = {"case": f"{name} GPT step, {tokens} tokens", "config": name, "gpt_config": vars(config),
           "batch": batch, "tokens_per_step": tokens, "steps_per_round": steps, "warmup": warmup,
           "eager_ms": median[EAGER] * 1e3, "lazy_ms": median[LAZY] * 1e3,
           "speedup": median[EAGER] / median[LAZY],
           "tokens_per_second": {d: tokens / s for d, s in median.items()},
           "round_seconds": seconds, "kernels_eager": kernels[EAGER], "kernels_lazy": kernels[LAZY],
           "first_loss": first, "max_abs_diff": abs(first[EAGER] - first[LAZY]),
           "plan_cache": dict(lazy.plan_cache.stats)}      # reads planned (miss) and replayed (hit)
    log(format_row(row))
    log(f"  {'  tokens/s':44}{row['tokens_per_second'][EAGER]:10,.0f}{row['tokens_per_second'][LAZY]:10,.0f}"
        f"   (first loss eager {first[EAGER]:.5f}, lazy {first[LAZY]:.5f}; lazy reads: "
        f"{row['plan_cache'].get('miss', 0)} planned, {row['plan_cache'].get('hit', 0)} from the plan cache)")
    return [row]


# ---- goals and tables ------------------------------------------------------------------------------
def goals(report):
    """[(goal, measured, met)] for the sections that ran, from the measured speedups."""
    out = []
    if "layernorm" in report["sections"]:
        worst = min(r["speedup"] for r in report["sections"]["layernorm"])
        out.append((f"fused LayerNorm: lazy >= {FUSION_GOAL}x faster than eager at every size",
                    f"lowest speedup {worst:.2f}x", worst >= FUSION_GOAL))
        out.append((f"plan cache, LayerNorm: lazy >= {CACHE_GOAL}x faster than eager at every size (issue 22)",
                    f"lowest speedup {worst:.2f}x", worst >= CACHE_GOAL))
    if "gelu" in report["sections"]:
        worst = min(r["speedup"] for r in report["sections"]["gelu"] if not r["requires_grad"])
        out.append((f"GELU epilogue: lazy >= {FUSION_GOAL}x faster than eager at every size (no_grad)",
                    f"lowest speedup {worst:.2f}x", worst >= FUSION_GOAL))
    if "step" in report["sections"]:
        speedup = report["sections"]["step"][0]["speedup"]
        out.append((f"training step: lazy >= {STEP_GOAL}x faster than eager", f"speedup {speedup:.2f}x",
                    speedup >= STEP_GOAL))
    return out


def format_section(section, rows):
    lines = [TITLES[section], HEADER]
    for row in rows:
        lines.append(format_row(row))
        if "reference_ms" in row:
            lines.append(format_reference(row, "F.layer_norm (cpu)" if section == "layernorm"
                                          else "x.softmax(-1) (cpu)"))
        if section == "step":
            tps = row["tokens_per_second"]
            lines.append(f"  {'  tokens/s':44}{tps[EAGER]:10,.0f}{tps[LAZY]:10,.0f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a toy GPT, 2 rounds: a smoke test")
    parser.add_argument("--rounds", type=int, help="timed rounds per case (the median is kept; default 5, 2 "
                                                   "with --quick)")
    parser.add_argument("--steps", type=int, help="training steps per round (default 3; 1 with --quick)")
    parser.add_argument("--fastest", action="store_true",
                        help="keep each case's fastest round instead of the median (a loaded machine)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads (default: every core, as training.py)")
    parser.add_argument("--out", help="the JSON file to write (default: benchmarks/results/lazy.json, "
                                      "and lazy.md beside it; none with --quick)")
    args = parser.parse_args(argv)
    if args.fastest:
        KEEP.update(name="fastest", of=min)
    rounds = args.rounds or (2 if args.quick else 5)
    steps = args.steps or (1 if args.quick else 3)
    sizes = QUICK_SIZES if args.quick else SIZES
    threads = training.set_threads(args.threads)
    threads.pop("torch", None)                      # torch is not timed here

    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "platform": platform.platform(),
              "cpus": os.cpu_count(), "python": platform.python_version(), "threads": threads,
              "matmul": backend.get(EAGER).matmul_variant, "quick": args.quick, "rounds": rounds,
              "kept": KEEP["name"],
              "sections": {}}
    header = (f"eager device {EAGER!r} against lazy device {LAZY!r}; {platform.machine()}, {os.cpu_count()} "
              f"CPU(s), Python {platform.python_version()}; threads: OpenMP {threads['tracegrad_openmp']}, "
              f"OpenBLAS {threads['tracegrad_blas'] or 'none found'}; matmul {report['matmul']!r}; "
              f"{KEEP['name']} of {rounds} rounds" + (" (--quick: tiny sizes)" if args.quick else ""))
    print(header, flush=True)
    tables = [header]

    def log(line):
        print(line, flush=True)

    for section in SECTIONS:
        if section not in args.only:
            continue
        print(f"\n{TITLES[section]}\n{HEADER}", flush=True)
        if section == "gelu":
            rows = gelu_rows(sizes["gelu"], rounds, log)
        elif section == "layernorm":
            rows = layernorm_rows(sizes["layernorm"], rounds, log)
        elif section == "softmax":
            rows = softmax_rows(sizes["softmax"], rounds, log)
        else:
            rows = step_row(args.quick, rounds, steps, 1 if args.quick else 2, log)
        report["sections"][section] = rows
        tables.append(format_section(section, rows))

    report["goals"] = [{"goal": g, "measured": m, "met": met} for g, m, met in goals(report)]
    lines = ["goals (speedup = eager time / lazy time)" + (": --quick, tiny sizes and 2 rounds, so these "
             "verdicts say nothing about the goals" if args.quick else ":")]
    lines += [f"  {g}: {m}: {'goal met' if met else 'goal not met'}" for g, m, met in goals(report)]
    if not report["goals"]:
        lines.append("  none for the sections run (goals: layernorm, gelu, step)")
    tables.append("\n".join(lines))

    text = "\n\n".join(tables)
    print("\n" + text)
    out = Path(args.out) if args.out else (None if args.quick else RESULTS / "lazy.json")
    if out is not None:
        training.write_report(out, report, text, "lazy.py")
    return report


if __name__ == "__main__":
    main()
