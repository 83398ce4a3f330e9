"""A whole training step compiled: ``tg.compile(step)`` against the same step run eagerly,
against PyTorch eager and against ``torch.compile(step)``, in the same run, on one thread
and on two (tracegrad's default device "cpu", float32).

tg.compile follows torch.compile's conventions: the first call with given inputs runs
eagerly, the second captures the whole function (forward, backward, optimizer step) and
later calls replay it. So each case's step is called three times before it is timed
(warm-up, capture, first replay); those three calls are reported apart (for
torch.compile they include its compile time, which its on-disk cache shortens on later
runs). The eager steps are called twice first.

Cases (``--cases``); each defines one step function ``step()`` that takes nothing (the
model, the optimizer and the data are made once, outside it) and returns the loss:

    mlp          training.py's MNIST MLP step: Linear(784, 128), ReLU, Linear(128, 10),
                 batch 32 of random numbers of MNIST's shape, cross-entropy, SGD lr 0.01
    cnn          conv.py's MNIST CNN step: stage4_models.mnist.cnn.MnistCNN (two 3x3
                 convolutions, max-pool, dropout, two Linears), batch 64, NLL, Adadelta
    gpt          gpt.py's "char128" GPT step: vocab 96, block 128, 4 layers, 4 heads,
                 n_embd 128, batch 32, AdamW as gpt.py, random tokens, dropout 0
    gpt-dropout  the same with dropout 0.2 (nanoGPT's character model's): tracegrad's
                 attention then takes the explicit path (the weights are dropped)
    lstm         stage4_models.rnn's character LSTM: embedding 256, nn.LSTM of 2 layers of
                 256, a Linear head, vocab 96, sequence 64, batch 32, Adam at 2e-3,
                 clip_grad_norm_ at 1.0, random tokens (the recurrent-networks issue's step)
    layernorm    LayerNorm over the last dim of (768, 128), written in tensor ops (mean,
                 subtract, multiply, mean, add, sqrt, divide, multiply, add: the ops of
                 F.layer_norm_composite, which lazy.py times), with a weight and a bias;
                 the step sets the three inputs' gradients to None, sums the output and
                 runs backward (no optimizer)

Every model starts from the same weights in both libraries (tracegrad's, seed 0, copied by
name, as training.py does) and reads the same batch at every step. Every timed call ends
by reading the loss (``.item()``), so whatever a compiled step defers is inside the time.

Timing: each engine (tracegrad, PyTorch) and each thread count runs in a process of its
own (a library's thread pool never competes with the other's; OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and TRACEGRAD_NUM_THREADS set before the libraries load, then
training.set_threads, which also sets torch.set_num_threads). In a process, a case's
eager and compiled steps are two instances made from the same seed and are timed in turn
for --repeat rounds (the one that goes first alternates); a round times a block of
back-to-back calls (as many as fill about 50 ms, at most 50; the garbage collector runs
before each block) and each figure is the median over the rounds of the time per call.
PyTorch comes from the interpreter ``--torch-python`` names (default: this one, when it
has torch; else the TRACEGRAD_TORCH_PYTHON environment variable); without it, tracegrad's
columns alone. Where torch.compile fails (no C++ compiler, no triton...) its column says
n/a and a line under the table says why.

Columns: eager and compiled ms per step; speed-up = eager / compiled (> 1: compiling
helps); PyTorch eager ms; vs PyTorch = PyTorch eager / tracegrad compiled (> 1: the
compiled step is faster than PyTorch's eager one); torch.compile ms; the seconds of the
three calls before timing, tg.compile's and torch.compile's.

``--check`` times nothing: for each case and thread count it runs the eager step and the
compiled step 4 times each, from the same seed (so dropout draws alike), and prints the
largest |difference| of the losses and, after the 4 steps, of the parameters and their
gradients (layernorm: its input, weight and bias); it exits with status 1 when one is
above --tol (the compiled step must compute what the eager one does).

    python benchmarks/compile.py [--cases mlp cnn gpt gpt-dropout layernorm] [--threads 1 2]
                                 [--repeat 10] [--torch-python PATH] [--device cpu] [--json PATH]
    python benchmarks/compile.py --check [--tol 1e-4] [--cases ...] [--threads 1]
"""
import argparse
import dataclasses
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(Path(__file__).resolve().parent))   # after the root: training.py and the
                                                         # others, not this folder's stage2_tensor.py
import conv  # noqa: E402  (benchmarks/conv.py: the MNIST CNN in PyTorch)
import gpt as gpt_bench  # noqa: E402  (benchmarks/gpt.py: the configs, batches, engines)
import training  # noqa: E402  (benchmarks/training.py: the MLP, the step, the threads)
from ops import torch_python  # noqa: E402  (benchmarks/ops.py: finding an interpreter with torch)

import stage2_tensor as tg  # noqa: E402
import stage2_tensor.nn.functional as F  # noqa: E402
from stage4_models.mnist.cnn import MnistCNN  # noqa: E402

CASES = ("mlp", "cnn", "gpt", "gpt-dropout", "lstm", "layernorm")
LSTM = dict(vocab=96, n_embd=256, hidden=256, n_layer=2, block=64, batch=32)
GPT_DROPOUT = 0.2
LAYERNORM_SHAPE = (768, 128)
BLOCK_SECONDS, MAX_REPS = 0.05, 50
BEFORE_TIMING = 3          # compiled: warm-up, capture, first replay
CHECK_STEPS = 4


# ---- the cases: make(lib, device) -> (step, {name: tracegrad tensor}) -----------------------------
def mlp(lib, device):
    pool = training.mnist_pool(1)
    model, step = training.tracegrad_mnist(pool)              # seed 0, on training.DEVICE
    if lib == "pytorch":
        step = training.torch_mnist(pool, training.weights_of(model))
    return (lambda: step(0)), dict(model.named_parameters())


def cnn(lib, device):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=64)
    tg.seed(0)
    model = MnistCNN(device=device)
    if lib == "pytorch":
        torch = training.torch
        theirs = conv.torch_cnn(torch)
        theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in training.weights_of(model).items()})
        opt = torch.optim.Adadelta(theirs.parameters())
        batch = [(torch.from_numpy(x), torch.from_numpy(y))]
        step = training.training_step(opt, lambda a, b: torch.nn.functional.nll_loss(theirs(a), b), batch)
    else:
        opt = tg.optim.Adadelta(model.parameters())
        batch = [(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device))]
        step = training.training_step(opt, lambda a, b: F.nll_loss(model(a), b), batch)
    return (lambda: step(0)), dict(model.named_parameters())


def gpt(lib, device, dropout=0.0):
    config, batch, _ = gpt_bench.CONFIGS["char128"]
    config = dataclasses.replace(config, dropout=dropout)
    pool = gpt_bench.batches(config, batch, n=1)
    model, step = gpt_bench.tracegrad_engine(config, pool)    # seed 0, on gpt_bench.DEVICE
    if lib == "pytorch":
        _, step = gpt_bench.torch_engine(config, pool, training.weights_of(model), sdpa=False)
    return (lambda: step(0)), dict(model.named_parameters())


def gpt_dropout(lib, device):
    return gpt(lib, device, dropout=GPT_DROPOUT)


def lstm(lib, device):
    from stage4_models.rnn import CharRNN
    c = LSTM
    tokens = np.random.default_rng(1).integers(0, c["vocab"], size=(c["batch"], c["block"] + 1))
    tg.seed(0)
    model = CharRNN(c["vocab"], "lstm", c["n_embd"], c["hidden"], c["n_layer"], device=device)
    if lib == "pytorch":
        torch = training.torch

        class TorchCharRNN(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embedding = torch.nn.Embedding(c["vocab"], c["n_embd"])
                self.rnn = torch.nn.LSTM(c["n_embd"], c["hidden"], c["n_layer"], batch_first=True)
                self.head = torch.nn.Linear(c["hidden"], c["vocab"])

            def loss(self, x, y):
                logits = self.head(self.rnn(self.embedding(x))[0])
                return torch.nn.functional.cross_entropy(logits.reshape(-1, c["vocab"]), y.reshape(-1))
        net, clip = TorchCharRNN(), torch.nn.utils.clip_grad_norm_
        net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in training.weights_of(model).items()})
        opt, to = torch.optim.Adam(net.parameters(), lr=2e-3), torch.from_numpy
    else:
        net, clip = model, tg.nn.utils.clip_grad_norm_
        opt = tg.optim.Adam(net.parameters(), lr=2e-3)
        def to(a):
            return tg.from_numpy(a, device=device)
    x, y = to(np.ascontiguousarray(tokens[:, :-1])), to(np.ascontiguousarray(tokens[:, 1:]))

    def step():
        loss = net.loss(x, y)
        opt.zero_grad()
        loss.backward()
        clip(net.parameters(), 1.0)
        opt.step()
        return loss.detach()
    return step, dict(model.named_parameters())


def layer_norm_ops(x, weight, bias, eps=1e-5):
    """F.layer_norm_composite's operations over the last dimension, written once for both
    libraries."""
    centered = x - x.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)
    return centered / (var + eps).sqrt() * weight + bias


def layernorm(lib, device):
    rng = np.random.default_rng(1)
    n, c = LAYERNORM_SHAPE
    arrays = {"x": rng.standard_normal((n, c), dtype=np.float32) * 2 + 1,
              "weight": 1 + 0.1 * rng.standard_normal(c, dtype=np.float32),
              "bias": 0.1 * rng.standard_normal(c, dtype=np.float32)}
    ours = {k: tg.from_numpy(a.copy(), device=device).requires_grad_() for k, a in arrays.items()}
    leaves = ([training.torch.from_numpy(a.copy()).requires_grad_() for a in arrays.values()]
              if lib == "pytorch" else list(ours.values()))

    def step():
        for t in leaves:
            t.grad = None
        loss = layer_norm_ops(*leaves).sum()
        loss.backward()
        return loss.detach()
    return step, ours


MAKERS = {"mlp": mlp, "cnn": cnn, "gpt": gpt, "gpt-dropout": gpt_dropout, "lstm": lstm, "layernorm": layernorm}


# ---- a worker: one library, one thread count --------------------------------------------------------
def call(step):
    """One step, its loss read (the step's deferred work, if any, done)."""
    return float(step().item())


def block_size(step):
    """How many calls fill a block of about BLOCK_SECONDS (one call timed)."""
    start = time.perf_counter()
    call(step)
    return max(1, min(MAX_REPS, int(BLOCK_SECONDS / max(time.perf_counter() - start, 1e-6))))


def first_calls(step, n):
    """The seconds and losses of the first n calls."""
    seconds, losses = [], []
    for _ in range(n):
        start = time.perf_counter()
        losses.append(call(step))
        seconds.append(time.perf_counter() - start)
    return seconds, losses


def one_line(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:160] if lines else ''}"


def time_case(steps, repeat):
    """{variant: result} for the variants in ``steps`` ({name: step, or the exception its
    making raised}): the first calls (BEFORE_TIMING for "compiled", 2 for "eager"), then
    ``repeat`` interleaved rounds of a block of calls each."""
    out, ready = {}, {}
    for name, step in steps.items():
        try:
            if isinstance(step, Exception):
                raise step
            seconds, losses = first_calls(step, BEFORE_TIMING if name == "compiled" else 2)
        except Exception as error:                  # torch.compile without a compiler, say
            out[name] = {"error": one_line(error)}
            continue
        out[name] = {"first_calls_s": seconds, "first_loss": losses[0]}
        ready[name] = step
    reps = {name: block_size(step) for name, step in ready.items()}
    per_call, last_loss = {name: [] for name in ready}, {}
    for r in range(repeat):
        for name in (list(ready) if r % 2 == 0 else list(ready)[::-1]):
            gc.collect()                            # not the previous block's garbage
            start = time.perf_counter()
            for _ in range(reps[name]):
                last_loss[name] = call(ready[name])
            per_call[name].append((time.perf_counter() - start) / reps[name])
    for name, seconds in per_call.items():
        out[name].update(ms=statistics.median(seconds) * 1e3, rounds_ms=[s * 1e3 for s in seconds],
                         calls_per_round=reps[name], last_loss=last_loss[name])
    return out


def compiler(lib):
    if lib == "pytorch":
        import logging
        torch = training.torch
        torch._logging.set_logs(dynamo=logging.ERROR)   # not its notes about the optimizer's profiling
        return torch.compile
    return tg.compile


def worker(lib, cases, repeat, threads, device):
    """Prints one JSON line: this library's results on ``threads`` threads; progress on
    stderr."""
    if lib == "tracegrad":
        training.torch = None                   # not timed here
        training.DEVICE = gpt_bench.DEVICE = device
    else:
        device = "cpu"                          # where tracegrad's initial weights are made
    used = training.set_threads(threads)
    compile_ = compiler(lib)
    report = {"library": lib, "threads": used, "device": device, "cases": {},
              "version": training.torch.__version__ if lib == "pytorch" else None}
    for case in cases:
        eager, _ = MAKERS[case](lib, device)
        step, _ = MAKERS[case](lib, device)
        try:
            compiled = compile_(step)
        except Exception as error:
            compiled = error
        result = time_case({"eager": eager, "compiled": compiled}, repeat)
        report["cases"][case] = result
        print(f"  [{lib}, {threads} thread(s)] {case}: " + ", ".join(
            f"{name} " + (f"{r['ms']:.2f} ms" if "ms" in r else "n/a") for name, r in result.items()),
            file=sys.stderr, flush=True)
    print(json.dumps(report))


# ---- the parent: workers, then the tables ----------------------------------------------------------
def run_worker(python, lib, threads, args):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               TRACEGRAD_NUM_THREADS=str(threads))
    command = [python, __file__, "--worker", lib, "--threads", str(threads), "--cases", *args.cases,
               "--repeat", str(args.repeat), "--device", args.device]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"error: the {lib} worker ({threads} thread(s)) failed (its error is above)")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ms(result):
    return result.get("ms") if result else None


def row_of(case, ours, theirs):
    """The table's row of one case: tracegrad's (and PyTorch's, when run) figures and ratios."""
    eager, compiled = ours["eager"], ours["compiled"]
    row = {"case": case, "eager_ms": ms(eager), "compiled_ms": ms(compiled),
           "compiled_first_calls_s": compiled.get("first_calls_s"), "compiled_error": compiled.get("error"),
           "first_loss": {"eager": eager.get("first_loss"), "compiled": compiled.get("first_loss")}}
    if row["eager_ms"] and row["compiled_ms"]:
        row["speedup"] = row["eager_ms"] / row["compiled_ms"]
    if theirs is not None:
        t_eager, t_compiled = theirs["eager"], theirs["compiled"]
        row.update(torch_eager_ms=ms(t_eager), torch_compile_ms=ms(t_compiled),
                   torch_compile_first_calls_s=t_compiled.get("first_calls_s"),
                   torch_compile_error=t_compiled.get("error"))
        row["first_loss"]["pytorch"] = t_eager.get("first_loss")
        if row["torch_eager_ms"] and row["compiled_ms"]:
            row["vs_torch_eager"] = row["torch_eager_ms"] / row["compiled_ms"]
    return row


def cell(value, spec, width):
    return f"{'n/a' if value is None else format(value, spec):>{width}}"


def format_table(threads, rows, torch_run):
    plural = "s" if threads > 1 else ""
    lines = [f"{threads} thread{plural}: ms per step (median of the rounds); speed-up = eager / compiled; "
             "vs PyTorch = PyTorch eager / tracegrad compiled (> 1: tracegrad's compiled step is faster)",
             f"  {'case':12}{'eager':>9}{'compiled':>10}{'speed-up':>10}{'PyTorch':>10}{'vs PyTorch':>12}"
             f"{'torch.compile':>15}{'first 3 calls s: tg':>22}{'torch':>8}"]
    notes = []
    for row in rows:
        line = (f"  {row['case']:12}{cell(row['eager_ms'], '.2f', 9)}{cell(row['compiled_ms'], '.2f', 10)}"
                f"{cell(row.get('speedup'), '.2f', 9)}x")
        if torch_run:
            line += (f"{cell(row['torch_eager_ms'], '.2f', 10)}{cell(row.get('vs_torch_eager'), '.2f', 11)}x"
                     f"{cell(row['torch_compile_ms'], '.2f', 15)}")
        else:
            line += f"{'-':>10}{'-':>12}{'-':>15}"
        first = row["compiled_first_calls_s"]
        their_first = row.get("torch_compile_first_calls_s")
        line += f"{cell(sum(first) if first else None, '.3f', 22)}"
        line += f"{cell(sum(their_first) if their_first else None, '.1f', 8)}" if torch_run else f"{'-':>8}"
        lines.append(line)
        if row["compiled_error"]:
            notes.append(f"  tg.compile n/a ({row['case']}): {row['compiled_error']}")
        if row.get("torch_compile_error"):
            notes.append(f"  torch.compile n/a ({row['case']}): {row['torch_compile_error']}")
    if torch_run:
        notes.append("  same start, first loss tracegrad / PyTorch (dropout draws differ): " + ", ".join(
            f"{row['case']} {cell(row['first_loss']['eager'], '.5f', 0)} / "
            f"{cell(row['first_loss']['pytorch'], '.5f', 0)}" for row in rows))
    return "\n".join(lines + notes)


def benchmark(args):
    baseline = torch_python(args.torch_python)
    print(f"a training step, tracegrad eager against tg.compile(step) (device {args.device!r}, float32), "
          f"against PyTorch eager and torch.compile(step); {platform.machine()}, {os.cpu_count()} CPU(s), "
          f"Python {platform.python_version()}; each engine and thread count in its own process; "
          f"median of {args.repeat} rounds", flush=True)
    if baseline is None:
        print("PyTorch was not found (--torch-python, TRACEGRAD_TORCH_PYTHON): tracegrad's times alone")
    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version()},
              "device": args.device, "repeat": args.repeat, "cases": args.cases, "by_threads": {}}
    tables = []
    for threads in args.threads:
        ours = run_worker(sys.executable, "tracegrad", threads, args)
        theirs = run_worker(baseline, "pytorch", threads, args) if baseline else None
        rows = [row_of(case, ours["cases"][case], theirs["cases"][case] if theirs else None)
                for case in args.cases]
        report["by_threads"][str(threads)] = {"tracegrad": ours, "pytorch": theirs, "rows": rows}
        report["machine"]["torch"] = theirs["version"] if theirs else None
        table = format_table(threads, rows, theirs is not None)
        print("\n" + table, flush=True)
        tables.append(table)
    if len(tables) > 1 and not args.json:
        print("\n" + "\n\n".join(tables))
    if args.json:
        report["text"] = "\n\n".join(tables)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")


# ---- --check: the compiled step computes what the eager one does ---------------------------------
def run_steps(case, device, compiled):
    """The losses of CHECK_STEPS steps of a fresh instance (made from the same seed each
    time), and its tensors and their gradients afterwards, as float64 arrays."""
    step, tensors = MAKERS[case]("tracegrad", device)
    if compiled:
        step = tg.compile(step)
    losses = [call(step) for _ in range(CHECK_STEPS)]
    values = {k: t.detach().to("cpu").numpy().astype(np.float64) for k, t in tensors.items()}
    grads = {k: t.grad.to("cpu").numpy().astype(np.float64) for k, t in tensors.items() if t.grad is not None}
    return np.array(losses), values, grads


def largest_difference(a, b):
    """The largest |a - b| over the arrays of two {name: array} dicts (inf where a name or
    shape differs: one side lacks a gradient, say)."""
    if a.keys() != b.keys():
        return float("inf")
    worst = 0.0
    for k in a:
        if a[k].shape != b[k].shape:
            return float("inf")
        if a[k].size:
            worst = max(worst, float(np.max(np.abs(a[k] - b[k]))))
    return worst


def check(args):
    training.DEVICE = gpt_bench.DEVICE = args.device
    print(f"--check: {CHECK_STEPS} steps eager and {CHECK_STEPS} compiled (warm-up, capture, replays), "
          f"from the same seed, device {args.device!r}; largest |difference|, tolerance {args.tol:g}")
    print(f"  {'threads':>7}  {'case':12}{'losses':>12}{'parameters':>12}{'gradients':>12}")
    failed = []
    for threads in args.threads:
        training.set_threads(threads)
        for case in args.cases:
            eager = run_steps(case, args.device, compiled=False)
            compiled = run_steps(case, args.device, compiled=True)
            diffs = [float(np.max(np.abs(eager[0] - compiled[0]))),
                     largest_difference(eager[1], compiled[1]), largest_difference(eager[2], compiled[2])]
            ok = all(d <= args.tol for d in diffs)
            if not ok:
                failed.append(f"{case} on {threads} thread(s)")
            print(f"  {threads:>7}  {case:12}" + "".join(f"{d:12.2e}" for d in diffs)
                  + ("" if ok else "   ABOVE TOLERANCE"), flush=True)
    print("the compiled steps match the eager ones" if not failed else
          "compiled differs from eager: " + ", ".join(failed))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts, each in "
                        "processes of its own (default 1 2; --check: in this process)")
    parser.add_argument("--repeat", type=int, default=10, help="timed rounds per step (the median is kept)")
    parser.add_argument("--torch-python", help="an interpreter with PyTorch")
    parser.add_argument("--device", default="cpu", help="tracegrad's device (default cpu)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--check", action="store_true", help="compare compiled with eager instead of timing")
    parser.add_argument("--tol", type=float, default=1e-4, help="--check: the largest |difference| allowed")
    parser.add_argument("--worker", choices=["tracegrad", "pytorch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.worker:                                         # a child: one library, one thread count
        return worker(args.worker, args.cases, args.repeat, args.threads[0], args.device)
    if args.check:
        return check(args)
    return benchmark(args)


if __name__ == "__main__":
    sys.exit(main())
