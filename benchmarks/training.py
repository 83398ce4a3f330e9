"""Training-step speed of tracegrad (device "cpu", float32) against PyTorch on the CPU, in
the same process, with the same number of threads, the same initial weights and the same
batches. Two workloads:

* MNIST MLP: Linear(784, 128), ReLU, Linear(128, 10), batch 32, cross-entropy, SGD lr 0.01.
  Reported in steps/s. Goal: tracegrad >= 1.0x PyTorch.
* char-GPT: stage4's GPT, vocab 65, 4 layers, 4 heads, n_embd 128, block 128, batch 32,
  dropout 0, AdamW (lr 1e-3, weight_decay 0.1 on every parameter). Reported in tokens/s
  (32 * 128 per step). Goal: tracegrad >= 0.7x PyTorch. The PyTorch model is written below,
  nanoGPT style, with the same parameter names and the same explicit attention (scores,
  causal mask, softmax); ``--sdpa`` gives it torch's fused scaled_dot_product_attention.

One step is zero_grad, forward, loss, backward, optimizer step, on a batch from a pool of
pre-made batches already on the device (no data loading is timed). tracegrad's GPT takes
its loss from ``GPT.loss`` (F.linear_cross_entropy: no logits), PyTorch's from its logits. The batches are random
but learnable (MNIST: labels are a fixed random linear map's argmax; GPT: tokens from a
random sparse Markov chain), so the loss must go down: the script checks it does for both,
and that both engines start from the same loss.

Timing: after warm-up steps, `rounds` rounds; in each, each engine runs `steps` steps back
to back (the engine that goes first alternates between rounds), timed as a block. Reported:
the median over rounds of each engine's rate, and the median of the per-round ratios
tracegrad / PyTorch (each ratio from two blocks measured one after the other, so a busy
neighbour on a shared machine affects both of its terms).

    python benchmarks/training.py [--quick] [--threads N] [--sdpa] [--json PATH]
    python benchmarks/training.py --profile [--quick]     # where the time of a step goes

``--profile`` runs cProfile over tracegrad's MNIST steps (100; 20 with --quick) and char-GPT
steps (2; 1 with --quick), prints the top functions by own and by cumulative time, splits
the time into native kernels (the C functions of stage3_native._native), cffi buffer
handling and Python, and lists the kernels launched, by op and shape, with their times;
then, with PyTorch, times the char-GPT step's layers one by one against PyTorch's.
"""
import argparse
import cProfile
import ctypes
import ctypes.util
import json
import math
import os
import platform
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage2_tensor as tg  # noqa: E402
import stage2_tensor.nn as nn  # noqa: E402
import stage2_tensor.nn.functional as F  # noqa: E402
import stage3_native  # noqa: E402  (registers device "cpu")
from stage2_tensor import backend as tg_backend  # noqa: E402
from stage4_models.gpt import GPT, GPTConfig  # noqa: E402

try:
    import torch
except ImportError:                                     # the benchmark then times ours only
    torch = None

DEVICE = "cpu"
GPT_CONFIG = GPTConfig(vocab_size=65, block_size=128, n_layer=4, n_head=4, n_embd=128, dropout=0.0)
GPT_BATCH = 32
MNIST_BATCH = 32


# ---- results --------------------------------------------------------------------------------
def write_report(out, report, text, script):
    """A benchmark's results: ``report`` as JSON to ``out`` and the printed ``text`` beside
    it as Markdown (same name, .md), under a heading naming ``script`` and the date."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(f"# benchmarks/{script}, {report['date']}\n\n```\n{text}\n```\n")
    print(f"\nwrote {out} and {out.with_suffix('.md')}")


# ---- threads ---------------------------------------------------------------------------------
def set_threads(n):
    """The same thread count for both engines. Ours: stage3's OpenMP kernels, and the
    system OpenBLAS behind its matmul, which has its own thread pool (stage3_native's
    set_num_threads does not reach it), set through OpenBLAS's own setter. Returns a dict
    saying what each engine now uses."""
    stage3_native.set_num_threads(n)
    used = {"tracegrad_openmp": stage3_native.get_num_threads(), "tracegrad_blas": None}
    path = ctypes.util.find_library("openblas")
    if path:
        blas = ctypes.CDLL(path)                    # the library _native linked: the same one
        if hasattr(blas, "openblas_set_num_threads"):
            blas.openblas_set_num_threads(n)
            used["tracegrad_blas"] = blas.openblas_get_num_threads()
    if torch is not None:
        torch.set_num_threads(n)
        used["torch"] = torch.get_num_threads()
    return used


# ---- data ------------------------------------------------------------------------------------
def mnist_pool(n_batches, seed=0):
    """(x float32 (32, 784), y int64 (32,)) pairs: x ~ N(0, 1), y the argmax of a fixed
    random linear map of x, so there is something to learn."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(784, 10)).astype(np.float32)
    pool = []
    for _ in range(n_batches):
        x = rng.normal(size=(MNIST_BATCH, 784)).astype(np.float32)
        pool.append((x, (x @ w).argmax(1).astype(np.int64)))
    return pool


def gpt_pool(n_batches, seed=0):
    """(idx, targets) int64 (32, 128) pairs, targets = idx shifted by one, from a random
    Markov chain in which each of the 65 tokens has a few likely successors."""
    rng = np.random.default_rng(seed)
    V, T = GPT_CONFIG.vocab_size, GPT_CONFIG.block_size
    cumulative = rng.dirichlet(np.full(V, 0.05), size=V).cumsum(1)
    pool = []
    for _ in range(n_batches):
        seq = np.empty((GPT_BATCH, T + 1), dtype=np.int64)
        seq[:, 0] = rng.integers(0, V, GPT_BATCH)
        for t in range(T):
            u = rng.random(GPT_BATCH)[:, None]
            seq[:, t + 1] = np.minimum((u > cumulative[seq[:, t]]).sum(1), V - 1)
        pool.append((seq[:, :-1].copy(), seq[:, 1:].copy()))
    return pool


# ---- the engines: a workload builds a step function per engine ---------------------------------
def training_step(opt, loss_of, batches):
    """One step on batch i (cycling through ``batches``), the same for both engines:
    zero_grad, the loss of the batch's tensors, backward, the optimizer's step."""
    def step(i):
        opt.zero_grad()
        loss = loss_of(*batches[i % len(batches)])
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def tracegrad_mnist(pool):
    tg.seed(0)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).to(DEVICE)
    opt = tg.optim.SGD(model.parameters(), lr=0.01)
    batches = [(tg.from_numpy(x, device=DEVICE), tg.from_numpy(y, device=DEVICE)) for x, y in pool]
    return model, training_step(opt, lambda x, y: F.cross_entropy(model(x), y), batches)


def torch_mnist(pool, weights):
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()})
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in pool]
    return training_step(opt, lambda x, y: torch.nn.functional.cross_entropy(model(x), y), batches)


def tracegrad_gpt(pool):
    tg.seed(0)
    model = GPT(GPT_CONFIG, device=DEVICE)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    batches = [(tg.from_numpy(x, device=DEVICE), tg.from_numpy(y, device=DEVICE)) for x, y in pool]
    return model, training_step(opt, model.loss, batches)   # the loss without the logits


def torch_gpt_model(config, sdpa):
    """nanoGPT's model, with the parameter names of stage4_models.gpt (so weights copy over
    by name) and the same computation: exact GELU, pre-LayerNorm, tied LM head, and
    config.dropout where stage4's GPT and nanoGPT drop (the embeddings' sum, the attention
    weights, each residual branch's output)."""
    tnn, tF = torch.nn, torch.nn.functional

    class SelfAttention(tnn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = tnn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = tnn.Linear(config.n_embd, config.n_embd)
            self.attn_dropout, self.resid_dropout = tnn.Dropout(config.dropout), tnn.Dropout(config.dropout)
            T = config.block_size
            self.register_buffer("mask", torch.triu(torch.full((T, T), -math.inf), 1), persistent=False)

        def forward(self, x):
            B, T, C = x.shape
            H = config.n_head
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2)
                       for t in self.c_attn(x).split(C, dim=2))
            if sdpa:
                y = tF.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                    dropout_p=config.dropout if self.training else 0.0)
            else:
                att = (q * (1.0 / math.sqrt(C // H))) @ k.transpose(-2, -1)
                y = self.attn_dropout((att + self.mask[:T, :T]).softmax(dim=-1)) @ v
            return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))

    class Block(tnn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = tnn.LayerNorm(config.n_embd), SelfAttention()
            self.ln_2 = tnn.LayerNorm(config.n_embd)
            self.mlp = tnn.Sequential()
            self.mlp.c_fc = tnn.Linear(config.n_embd, 4 * config.n_embd)
            self.mlp.gelu = tnn.GELU(approximate="tanh")       # GPT-2's, as stage4's GPT
            self.mlp.c_proj = tnn.Linear(4 * config.n_embd, config.n_embd)
            self.mlp.dropout = tnn.Dropout(config.dropout)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class TorchGPT(tnn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = tnn.ModuleDict(dict(
                wte=tnn.Embedding(config.vocab_size, config.n_embd),
                wpe=tnn.Embedding(config.block_size, config.n_embd),
                drop=tnn.Dropout(config.dropout),
                h=tnn.ModuleList(Block() for _ in range(config.n_layer)),
                ln_f=tnn.LayerNorm(config.n_embd)))
            self.lm_head = tnn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.lm_head.weight = self.transformer.wte.weight

        def forward(self, idx, targets=None):
            t = self.transformer
            T = idx.shape[1]
            x = t.drop(t.wte(idx) + t.wpe.weight[:T])
            for block in t.h:
                x = block(x)
            logits = self.lm_head(t.ln_f(x))
            if targets is None:                         # generation (benchmarks/gpt.py)
                return logits
            return logits, tF.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return TorchGPT()


def torch_gpt(pool, weights, sdpa):
    model = torch_gpt_model(GPT_CONFIG, sdpa)
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in weights.items()})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    batches = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in pool]
    return training_step(opt, lambda idx, targets: model(idx, targets)[1], batches)


def weights_of(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


# ---- measuring ---------------------------------------------------------------------------------
class Engine:
    """A step function and everything it did: the loss of every step, in order, and the
    seconds per step of each timed block."""

    def __init__(self, name, step):
        self.name, self.step = name, step
        self.losses, self.block_seconds, self.i = [], [], 0

    def run(self, n, timed):
        losses = []
        t0 = time.perf_counter()
        for _ in range(n):
            losses.append(self.step(self.i))
            self.i += 1
        seconds = (time.perf_counter() - t0) / n
        self.losses += [float(loss.item()) for loss in losses]    # read after the clock stops
        if timed:
            self.block_seconds.append(seconds)
        return seconds


def measure(engines, warmup, rounds, steps, log):
    for e in engines:
        e.run(warmup, timed=False)
    for r in range(rounds):
        order = engines if r % 2 == 0 else engines[::-1]
        for e in order:
            e.run(steps, timed=True)
        log(f"    round {r + 1}: " + ", ".join(
            f"{e.name} {e.block_seconds[-1] * 1e3:.2f} ms/step" for e in engines))


def loss_trend(losses):
    """(mean of the first w losses, mean of the last w), w = a tenth of them (at least 1)."""
    w = max(1, len(losses) // 10)
    return statistics.fmean(losses[:w]), statistics.fmean(losses[-w:])


def summarize(name, engines, per_step_units, unit, goal):
    """The workload's result: each engine's median rate, the median per-round ratio."""
    out = {"workload": name, "unit": unit, "goal_ratio": goal, "engines": {}}
    for e in engines:
        first, last = loss_trend(e.losses)
        out["engines"][e.name] = {
            "median_seconds_per_step": statistics.median(e.block_seconds),
            "rate": per_step_units / statistics.median(e.block_seconds),
            "block_seconds_per_step": e.block_seconds,
            "initial_loss": e.losses[0], "loss_first": first, "loss_last": last,
            "loss_decreased": last < first, "steps": len(e.losses)}
    if len(engines) == 2:
        ours, theirs = engines
        ratios = [t / o for o, t in zip(ours.block_seconds, theirs.block_seconds)]
        out["ratio"] = statistics.median(ratios)
        out["round_ratios"] = ratios
        out["goal_met"] = out["ratio"] >= goal
    return out


def format_rate(rate, unit):
    return f"{rate:,.0f} {unit}" if rate >= 100 else f"{rate:.1f} {unit}"


def print_table(results):
    print("\n  workload          engine       ms/step        throughput    loss first -> last  "
          " ratio ours/torch (goal)")
    for res in results:
        rows = list(res["engines"].items())
        for j, (name, r) in enumerate(rows):
            ratio = ""
            if j == 0 and "ratio" in res:
                ratio = (f"{res['ratio']:.3f}x (>= {res['goal_ratio']}x: "
                         f"{'met' if res['goal_met'] else 'not met'})")
            trend = f"{r['loss_first']:.3f} -> {r['loss_last']:.3f} {'ok' if r['loss_decreased'] else 'NOT DOWN'}"
            print(f"  {res['workload'] if j == 0 else '':16}  {name:10}{r['median_seconds_per_step'] * 1e3:10.2f}"
                  f"  {format_rate(r['rate'], res['unit']):>16}   {trend:22}  {ratio}")


def run_workload(name, make_ours, make_torch, warmup, rounds, steps, per_step_units, unit, goal):
    print(f"\n{name}: warm-up {warmup} step(s) each, then {rounds} rounds of {steps} step(s) per engine",
          flush=True)
    model, ours = make_ours()
    engines = [Engine("tracegrad", ours)]
    if make_torch is not None:
        engines.append(Engine("pytorch", make_torch(weights_of(model))))
    measure(engines, warmup, rounds, steps, lambda s: print(s, flush=True))
    if len(engines) == 2:
        a, b = engines[0].losses[0], engines[1].losses[0]
        print(f"    same start: initial loss tracegrad {a:.5f}, pytorch {b:.5f} "
              f"({'equal' if abs(a - b) <= 1e-4 * max(1.0, abs(b)) else 'DIFFERENT'} to 1e-4)")
    return summarize(name, engines, per_step_units, unit, goal)


# ---- profiling -----------------------------------------------------------------------------------
def _is_native(func):
    """A C function of stage3_native's compiled library, as cProfile names it."""
    return func[0] == "~" and "stage3_native._native" in func[2]


def _is_cffi(func):
    return func[0] == "~" and any(s in func[2] for s in ("_cffi_backend", "allocator", "ffi"))


def _label(func):
    filename, line, name = func
    if filename == "~":
        return name
    root = str(Path(__file__).resolve().parents[1]) + os.sep
    return f"{filename.replace(root, '')}:{line}({name})"


class KernelTimer:
    """Wraps every kernel method of the "cpu" backend object (every kernel call of a Tensor
    ends in one of them) to add up, per kernel, op and input shape, the calls and the
    seconds spent (the cpu backend's Python wrapper around the C function included)."""

    def __init__(self):
        self.calls, self.seconds = defaultdict(int), defaultdict(float)

    def __enter__(self):
        self.backend = tg_backend.get("cpu")
        self.names = [n for n in dir(type(self.backend))
                      if not n.startswith("_") and n != "has" and callable(getattr(self.backend, n))]
        for name in self.names:
            setattr(self.backend, name, self.timed(name, getattr(self.backend, name)))
        return self

    def timed(self, name, method):
        def kernel(*args):
            t0 = time.perf_counter()
            out = method(*args)
            key = self.key(name, args)
            self.seconds[key] += time.perf_counter() - t0
            self.calls[key] += 1
            return out
        return kernel

    def __exit__(self, *exc):
        for name in self.names:                 # the class's methods show through again
            delattr(self.backend, name)

    @staticmethod
    def key(name, args):
        op = f"{name}:{args[0]}" if name in ("unary", "binary", "reduce") else name
        shapes = [a.shape for a in args if isinstance(a, tg_backend.View)]
        if name == "reduce":
            shapes = [f"{args[1].shape} dims {args[2]}"]
        elif name == "softmax":
            shapes = [f"{args[0].shape} dim {args[1]}"]
        return op, " ".join(str(s) for s in shapes[:2]).replace(" ", "")


def profile(title, step, n, seconds_per_step, top=15):
    """cProfile n steps, print the hot spots and the split native / cffi / Python; then
    n more steps with the KernelTimer. seconds_per_step: the unprofiled step time."""
    print(f"\n==== profile: {title}, {n} step(s), cProfile ====")
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(n):
        step(i)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = max(st[3] for st in stats.stats.values())           # the outermost cumulative time
    native = sum(st[2] for f, st in stats.stats.items() if _is_native(f))
    cffi = sum(st[2] for f, st in stats.stats.items() if _is_cffi(f))
    launches = sum(st[1] for f, st in stats.stats.items() if _is_native(f))
    print(f"  per step under cProfile: {total / n * 1e3:.2f} ms; native C kernels "
          f"{native / n * 1e3:.2f} ms ({native / total:.0%}, {launches / n:.0f} calls), cffi buffers "
          f"and marshalling {cffi / n * 1e3:.2f} ms ({cffi / total:.0%}), Python "
          f"{(total - native - cffi) / n * 1e3:.2f} ms ({(total - native - cffi) / total:.0%})")
    if seconds_per_step:
        print(f"  without cProfile (the timed median): {seconds_per_step * 1e3:.2f} ms per step, of which "
              f"at least {min(native / n, seconds_per_step) / seconds_per_step:.0%} in C kernels; "
              f"cProfile inflates the Python part")
    for key, what in (("tottime", "own time"), ("cumulative", "cumulative time")):
        rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2 if key == "tottime" else 3], reverse=True)
        print(f"\n  top {top} by {what} (ms per step, calls per step)")
        for func, (cc, nc, tt, ct, _) in rows[:top]:
            print(f"    {(tt if key == 'tottime' else ct) / n * 1e3:9.2f} ms  {nc / n:8.0f}  {_label(func)}")
    print(f"\n==== profile: {title}, {n} step(s), kernels by op and shape (backend.launch, "
          f"Python wrapper included) ====")
    with KernelTimer() as kt:
        t0 = time.perf_counter()
        for i in range(n):
            step(i)
        wall = time.perf_counter() - t0
    in_kernels = sum(kt.seconds.values())
    print(f"  {wall / n * 1e3:.2f} ms per step, {in_kernels / n * 1e3:.2f} ms ({in_kernels / wall:.0%}) inside "
          f"{sum(kt.calls.values()) / n:.0f} kernel launches; the rest is stage2's Python "
          "(autograd, shapes, views, modules, optimizer)")
    by_op = defaultdict(lambda: [0, 0.0])
    for (op, _), s in kt.seconds.items():
        by_op[op][1] += s
    for (op, _), c in kt.calls.items():
        by_op[op][0] += c
    print("  by kernel:  " + ", ".join(f"{op} {s / n * 1e3:.2f} ms ({c / n:.0f}x)" for op, (c, s) in
                                       sorted(by_op.items(), key=lambda kv: -kv[1][1])))
    print(f"  top {top} kernel launches by time (ms per step, calls per step, op, input shapes)")
    for key in sorted(kt.seconds, key=kt.seconds.get, reverse=True)[:top]:
        print(f"    {kt.seconds[key] / n * 1e3:9.2f} ms  {kt.calls[key] / n:6.0f}  {key[0]:14} {key[1]}")
    return {"title": title, "steps": n, "profiled_ms_per_step": total / n * 1e3,
            "native_ms_per_step": native / n * 1e3, "cffi_ms_per_step": cffi / n * 1e3,
            "python_ms_per_step": (total - native - cffi) / n * 1e3,
            "native_calls_per_step": launches / n,
            "kernels": {f"{op} {shape}": {"ms_per_step": s / n * 1e3, "calls_per_step": kt.calls[(op, shape)] / n}
                        for (op, shape), s in kt.seconds.items()}}


def layer_cases():
    """The char-GPT step's layers at its shapes, forward and backward with a random upstream
    gradient, in tracegrad and in PyTorch: (name, make) with make(lib) giving a callable,
    lib being "tracegrad" or "torch"."""
    B, T, C, H, V = GPT_BATCH, GPT_CONFIG.block_size, GPT_CONFIG.n_embd, GPT_CONFIG.n_head, GPT_CONFIG.vocab_size
    rng = np.random.default_rng(0)

    def arrays(*shapes):
        return [rng.normal(size=s).astype(np.float32) for s in shapes]

    def case(name, fn_ours, fn_torch, inputs, grad_shape, ints=None):
        data, g = arrays(*inputs), arrays(grad_shape)[0]

        def make(lib):
            if lib == "tracegrad":
                xs = [tg.from_numpy(a.copy(), device=DEVICE).requires_grad_() for a in data]
                extra = [tg.from_numpy(ints, device=DEVICE)] if ints is not None else []
                gt, fn = tg.from_numpy(g.copy(), device=DEVICE), fn_ours
            else:
                xs = [torch.from_numpy(a.copy()).requires_grad_() for a in data]
                extra = [torch.from_numpy(ints)] if ints is not None else []
                gt, fn = torch.from_numpy(g.copy()), fn_torch

            def run():
                out = fn(*xs, *extra)
                out.backward(gt.reshape(out.shape) if out.ndim else None)
            return run
        return name, make

    mask = np.triu(np.full((T, T), -np.inf, dtype=np.float32), 1)
    tmask = torch.from_numpy(mask)
    ours_mask = tg.from_numpy(mask, device=DEVICE)
    tF = torch.nn.functional
    return [
        case(f"LayerNorm({C}) on ({B},{T},{C})", lambda x, w, b: F.layer_norm(x, (C,), w, b),
             lambda x, w, b: tF.layer_norm(x, (C,), w, b), [(B, T, C), (C,), (C,)], (B, T, C)),
        case(f"Linear({C},{4 * C}) on ({B},{T},{C})", lambda x, w, b: F.linear(x, w, b),
             lambda x, w, b: tF.linear(x, w, b), [(B, T, C), (4 * C, C), (4 * C,)], (B, T, 4 * C)),
        case(f"Linear({C},{4 * C}) on ({B * T},{C})", lambda x, w, b: F.linear(x, w, b),
             lambda x, w, b: tF.linear(x, w, b), [(B * T, C), (4 * C, C), (4 * C,)], (B * T, 4 * C)),
        case(f"GELU on ({B},{T},{4 * C})", lambda x: x.gelu(), lambda x: tF.gelu(x), [(B, T, 4 * C)],
             (B, T, 4 * C)),
        case(f"scores + mask, softmax ({B},{H},{T},{T})", lambda x: (x + ours_mask).softmax(-1),
             lambda x: (x + tmask).softmax(-1), [(B, H, T, T)], (B, H, T, T)),
        case(f"attention matmuls ({B},{H},{T},{C // H})",
             lambda q, k, v: (q @ k.transpose(-2, -1)) @ v, lambda q, k, v: (q @ k.transpose(-2, -1)) @ v,
             [(B, H, T, C // H)] * 3, (B, H, T, C // H)),
        case(f"residual add ({B},{T},{C})", lambda x, y: x + y, lambda x, y: x + y,
             [(B, T, C), (B, T, C)], (B, T, C)),
        case(f"cross_entropy ({B * T},{V})", lambda x, y: F.cross_entropy(x, y),
             lambda x, y: tF.cross_entropy(x, y), [(B * T, V)], (), ints=rng.integers(0, V, B * T)),
        case(f"embedding rows ({V},{C})[({B},{T})]", lambda w, i: w[i], lambda w, i: w[i],
             [(V, C)], (B, T, C), ints=rng.integers(0, V, (B, T))),
    ]


def layer_table(reps=5):
    """Median seconds of forward + backward per layer, tracegrad and PyTorch interleaved."""
    print("\n==== char-GPT layers at the step's shapes: forward + backward, median of "
          f"{reps}, tracegrad against PyTorch ====")
    print(f"  {'layer':44}{'tracegrad':>12}{'pytorch':>12}{'torch/ours':>12}")
    rows = []
    for name, make in layer_cases():
        fns = {lib: make(lib) for lib in ("tracegrad", "torch")}
        times = {lib: [] for lib in fns}
        for fn in fns.values():
            fn()                                                    # warm-up
        for r in range(reps):
            for lib in (("tracegrad", "torch") if r % 2 == 0 else ("torch", "tracegrad")):
                t0 = time.perf_counter()
                fns[lib]()
                times[lib].append(time.perf_counter() - t0)
        ours, theirs = (statistics.median(times[lib]) for lib in ("tracegrad", "torch"))
        print(f"  {name:44}{ours * 1e3:9.2f} ms{theirs * 1e3:9.2f} ms{theirs / ours:11.2f}x", flush=True)
        rows.append({"layer": name, "tracegrad_ms": ours * 1e3, "torch_ms": theirs * 1e3})
    return rows


# ---- main --------------------------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and steps (about a minute)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads for both engines (default: every core)")
    parser.add_argument("--rounds", type=int, help="timed rounds per workload (default 5; 3 with --quick)")
    parser.add_argument("--workloads", default="mnist,gpt", help="comma-separated: mnist, gpt")
    parser.add_argument("--sdpa", action="store_true",
                        help="PyTorch's GPT uses its fused scaled_dot_product_attention")
    parser.add_argument("--no-torch", action="store_true", help="time tracegrad only")
    parser.add_argument("--profile", action="store_true", help="profile tracegrad's steps instead of timing")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args()
    global torch
    if args.no_torch:
        torch = None
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    rounds = args.rounds or (3 if args.quick else 5)

    threads = set_threads(args.threads)
    print(f"tracegrad (device {DEVICE!r}, float32) against "
          + (f"PyTorch {torch.__version__} (CPU)" if torch else "nothing: PyTorch is not importable "
             "(or --no-torch), so tracegrad is timed alone")
          + f"; {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}")
    print(f"threads: --threads {args.threads}; tracegrad OpenMP {threads['tracegrad_openmp']}, "
          f"its OpenBLAS {threads['tracegrad_blas'] or 'unknown (not OpenBLAS?)'}"
          + (f"; PyTorch {threads['torch']}" if torch else ""))
    print(f"tracegrad matmul: {tg_backend.get(DEVICE).matmul_variant!r}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if load is not None and args.threads > 1 and load > 0.5 * (os.cpu_count() or 1):
        print(f"note: load average {load:.1f} on {os.cpu_count()} CPU(s) before starting: with other "
              "work running, multi-threaded steps wait for preempted threads at every parallel "
              "region and scatter widely (both engines); --threads 1 gives steadier numbers")

    report = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version(),
                          "torch": torch.__version__ if torch else None,
                          "load_average_at_start": load},
              "threads": threads, "quick": args.quick, "results": [], "profiles": []}
    results = report["results"]

    if "mnist" in workloads:
        pool = mnist_pool(100)
        steps = 100 if args.quick else 300
        if args.profile:
            _, step = tracegrad_mnist(pool)
            engine = Engine("tracegrad", step)
            engine.run(10, timed=False)
            per_step = statistics.median(engine.run(20, timed=True) for _ in range(3))
            report["profiles"].append(profile("MNIST MLP step", step, 20 if args.quick else 100, per_step))
        else:
            results.append(run_workload(
                "MNIST MLP", lambda: tracegrad_mnist(pool),
                (lambda w: torch_mnist(pool, w)) if torch else None,
                warmup=20, rounds=rounds, steps=steps, per_step_units=1, unit="steps/s", goal=1.0))
    if "gpt" in workloads:
        pool = gpt_pool(8)
        if args.profile:
            _, step = tracegrad_gpt(pool)
            engine = Engine("tracegrad", step)
            per_step = engine.run(1 if args.quick else 2, timed=True)
            report["profiles"].append(profile("char-GPT step", step, 1 if args.quick else 2, per_step))
            if torch:
                report["layers"] = layer_table(3 if args.quick else 5)
        else:
            results.append(run_workload(
                "char-GPT", lambda: tracegrad_gpt(pool),
                (lambda w: torch_gpt(pool, w, args.sdpa)) if torch else None,
                warmup=1 if args.quick else 2, rounds=rounds, steps=1 if args.quick else 2,
                per_step_units=GPT_BATCH * GPT_CONFIG.block_size, unit="tokens/s", goal=0.7))
            if torch:
                print("    pytorch attention: " + ("fused scaled_dot_product_attention" if args.sdpa
                                                   else "explicit (scores, mask, softmax), as ours"))

    if results:
        print_table(results)
        if not torch:
            print("\n  (PyTorch not used: not importable, or --no-torch; tracegrad's numbers only, no ratios)")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
