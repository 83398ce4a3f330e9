"""GPT training throughput in tokens/s: stage4's GPT on tracegrad's device "cpu" (float32)
against the same model in PyTorch (when importable), in the same process, with the same
threads, the same initial weights and the same batches.

One step is zero_grad, forward, cross-entropy, backward and an AdamW step (lr 1e-3, betas
(0.9, 0.99), weight_decay 0.1), on a batch of random tokens already on the device; tracegrad's
forward and cross-entropy are ``GPT.loss`` (the LM head and the loss without the logits,
F.linear_cross_entropy), PyTorch's nanoGPT's logits and F.cross_entropy. After
--warmup steps per engine, --runs runs; in each, each engine does --steps steps back to back,
timed as one block (the engine that goes first alternates between runs). Reported: the
median over runs of ms/step and of tokens/s (batch * block_size tokens per step), and the
median of the per-run ratios tracegrad / PyTorch throughput (> 1: tracegrad is faster; each
from two blocks timed one after the other, so a busy neighbour affects both terms).

Configs (dropout 0 in both):
    char: vocab 96, block 64, 4 layers, 4 heads, n_embd 128, batch 12  (the char-level model)
    char128: the same model at block 128, batch 32  (the block and batch of training.py's char-GPT goal)
    tiny: vocab 50257, block 256, 2 layers, 4 heads, n_embd 32, batch 4  (GPT-2's vocabulary:
          the (1024, 50257) logits, their softmax and the LM head dominate)

Inference: tokens/s of generating 200 tokens greedily at batch 1, with stage4's KV cache and
without it; PyTorch's side is nanoGPT's loop (crop to block_size, forward, argmax, append;
no cache). At the char config's block of 64 the context window slides after 64 tokens and
from then on every step re-reads the window, cache or not (generate.py says why);
``--block-size 256`` holds all 201 tokens, so that every cached step is one position (the
generation goal is measured so; ``--inference-only`` skips the training part).

The PyTorch model, the step, the timing rounds and the thread setting are training.py's
(``torch_gpt_model``: nanoGPT's model with stage4's parameter names; ``set_threads``: our
OpenMP threads, the OpenBLAS pool behind our matmul when built with one, and torch's).
PyTorch's attention is the explicit one (scores, mask, softmax, @ v) unless ``--sdpa``
gives it F.scaled_dot_product_attention, as its users run it. tracegrad's runs its fused
attention where the device has it (stage2_tensor/fused_attention.py); ``--plain`` adds a third
engine, the same model on the explicit path (scores, mask, softmax, @ v), timed in the
same rounds: the fused kernels' gain.

``--clock cpu`` times each block by the process's CPU time instead of the wall clock: on
a machine shared with other work, a run on one thread (``--threads 1``) then counts the
work it did, not the time it waited for a core (with more threads it would also count
the time OpenMP's idle threads spin). ``--profile`` times tracegrad's steps alone, split
into C kernels, the cpu backend's Python and stage2 (stage3_native/profile.py), with the
backend calls that took the most, and stops.

    python benchmarks/gpt.py [--config char|char128|tiny] [--steps N] [--runs 5] [--warmup 2]
                             [--threads N] [--no-torch] [--block-size N] [--batch N] [--inference-only]
                             [--no-inference] [--sdpa] [--plain] [--clock wall|cpu] [--profile]
"""
import argparse
import dataclasses
import os
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))   # after the root: training.py, not
                                                         # this folder's stage2_tensor.py
import stage2_tensor as tg  # noqa: E402
import stage3_native  # noqa: E402,F401  (registers device "cpu")
from stage4_models.gpt import GPT, GPTConfig  # noqa: E402

import training  # noqa: E402  (benchmarks/training.py: the PyTorch GPT, steps, rounds, threads)
from training import (Engine, measure, set_threads, torch_gpt_model, training_step,  # noqa: E402
                      weights_of)

DEVICE = "cpu"
CONFIGS = {   # name: (config, batch, default --steps: about as long a run for each)
    "char": (GPTConfig(vocab_size=96, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0), 12, 10),
    "char128": (GPTConfig(vocab_size=96, block_size=128, n_layer=4, n_head=4, n_embd=128, dropout=0.0), 32, 3),
    "tiny": (GPTConfig(vocab_size=50257, block_size=256, n_layer=2, n_head=4, n_embd=32, dropout=0.0), 8, 2),
}
ADAMW = {"lr": 1e-3, "betas": (0.9, 0.99), "weight_decay": 0.1}
GENERATED = 200


def batches(config, batch, n=4, seed=0):
    """n (idx, targets) int64 (batch, block_size) pairs of uniformly random tokens, targets
    idx shifted by one (throughput does not depend on what the tokens say)."""
    rng = np.random.default_rng(seed)
    seqs = [rng.integers(0, config.vocab_size, (batch, config.block_size + 1)) for _ in range(n)]
    return [(s[:, :-1].copy(), s[:, 1:].copy()) for s in seqs]


def tracegrad_engine(config, pool, plain=False):
    """The model and its step; plain: the explicit attention path even where the device
    has the fused kernels."""
    tg.seed(0)
    model = GPT(config, device=DEVICE)
    if plain:
        for block in model.transformer.h:
            block.attn.fused = lambda *args: False
    opt = tg.optim.AdamW(model.parameters(), **ADAMW)
    data = [(tg.from_numpy(x, device=DEVICE), tg.from_numpy(y, device=DEVICE)) for x, y in pool]
    return model, training_step(opt, model.loss, data)      # the loss without the logits


def torch_engine(config, pool, weights, sdpa):
    model = torch_gpt_model(config, sdpa=sdpa)
    model.load_state_dict({k: training.torch.from_numpy(v.copy()) for k, v in weights.items()})
    opt = training.torch.optim.AdamW(model.parameters(), **ADAMW)
    data = [(training.torch.from_numpy(x), training.torch.from_numpy(y)) for x, y in pool]
    return model, training_step(opt, lambda idx, targets: model(idx, targets)[1], data)


# ---- inference -----------------------------------------------------------------------------
def tracegrad_generate(model, use_cache):
    """Seconds to generate GENERATED tokens greedily from one start token."""
    idx = tg.tensor([[0]], device=DEVICE)
    t0 = time.perf_counter()
    model.generate(idx, GENERATED, greedy=True, use_cache=use_cache)
    return time.perf_counter() - t0


def torch_generate(model, block_size):
    """nanoGPT's generation loop, greedy: the last block_size tokens in, the argmax out."""
    torch = training.torch
    model.eval()
    idx = torch.zeros((1, 1), dtype=torch.long)
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(GENERATED):
            logits = model(idx[:, -block_size:])
            idx = torch.cat([idx, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return time.perf_counter() - t0


def inference(ours, theirs, config, runs):
    """Median tokens/s of greedy generation: ours with and without the KV cache, and
    PyTorch's nanoGPT loop (no cache) when given."""
    print(f"\ninference: {GENERATED} tokens, greedy, batch 1, median of {runs}")
    rows = [("tracegrad", lambda: tracegrad_generate(ours, True)),
            ("tracegrad, no KV cache", lambda: tracegrad_generate(ours, False))]
    if theirs is not None:
        rows.append(("pytorch, no KV cache", lambda: torch_generate(theirs, config.block_size)))
    for _, run in rows:
        run()                                                        # warm-up
    times = {name: [] for name, _ in rows}
    for r in range(runs):                 # the engines in turn, the order reversed every run
        for name, run in (rows if r % 2 == 0 else rows[::-1]):
            times[name].append(run())
    rates = {}
    for name, seconds in times.items():
        rates[name] = GENERATED / statistics.median(seconds)
        print(f"  {name:24} {statistics.median(seconds) * 1e3:9.1f} ms  {rates[name]:9,.1f} tokens/s "
              f"(runs {min(seconds) * 1e3:.0f} to {max(seconds) * 1e3:.0f} ms)")
    if len(rates) == 3:
        ratios = [t / o for o, t in zip(times["tracegrad"], times["pytorch, no KV cache"])]
        print(f"  tracegrad / pytorch throughput {statistics.median(ratios):.2f}x (median of the runs' ratios)")




def profile(config, batch, steps, plain):
    """Where the time of tracegrad's step goes (StepTimer: every backend call and C function
    timed), after two untimed steps."""
    from stage3_native.profile import StepTimer
    model, step = tracegrad_engine(config, batches(config, batch), plain=plain)
    for i in range(2):
        step(i)
    with StepTimer() as timer:
        t0 = time.perf_counter()
        for i in range(steps):
            step(i)
        wall = time.perf_counter() - t0
    print(f"\nprofile of {steps} step(s), {'plain' if plain else 'fused'} attention: "
          f"{wall / steps * 1e3:.1f} ms/step")
    for part, seconds in timer.split(wall, steps).items():
        print(f"  {part:32} {seconds * 1e3:9.1f} ms  {seconds / wall * steps:6.1%}")
    print("  backend calls, slowest first (ms per step, of which in C; calls per step):")
    for key, (seconds, in_c) in list(timer.per_call(steps).items())[:15]:
        print(f"    {key:34} {seconds * 1e3:8.2f} {in_c * 1e3:8.2f}  {timer.calls[key] / steps:5.0f}")


# ---- main -----------------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=sorted(CONFIGS), default="char")
    parser.add_argument("--steps", type=int, help="timed steps per run and engine (default: 10 for "
                        "char, 2 for tiny)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs (the medians are over these)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per engine first")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads for both engines (default: every core)")
    parser.add_argument("--no-torch", action="store_true", help="time tracegrad only")
    parser.add_argument("--block-size", type=int, help="the model's block size instead of the config's")
    parser.add_argument("--batch", type=int, help="sequences per step instead of the config's")
    parser.add_argument("--inference-only", action="store_true", help="skip the training part")
    parser.add_argument("--no-inference", action="store_true", help="skip the generation timings")
    parser.add_argument("--sdpa", action="store_true", help="PyTorch's attention as "
                        "F.scaled_dot_product_attention (default: explicit, as ours was)")
    parser.add_argument("--plain", action="store_true", help="also time tracegrad's explicit "
                        "attention path (no fused kernels), in the same rounds")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time blocks by the wall clock or by the process's CPU time")
    parser.add_argument("--profile", action="store_true", help="where tracegrad's step time goes")
    args = parser.parse_args()
    if args.no_torch:
        training.torch = None
    torch = training.torch
    config, batch, steps = CONFIGS[args.config]
    if args.block_size:
        config = dataclasses.replace(config, block_size=args.block_size)
    batch = args.batch or batch
    args.steps = args.steps or steps
    tokens = batch * config.block_size
    threads = set_threads(args.threads)
    if args.clock == "cpu":      # training.Engine reads training.time.perf_counter
        training.time = types.SimpleNamespace(perf_counter=time.process_time)
    if args.profile:
        return profile(config, batch, args.steps, args.plain)

    print(f"GPT training, config {args.config!r}: vocab {config.vocab_size}, block {config.block_size}, "
          f"{config.n_layer} layers, {config.n_head} heads, n_embd {config.n_embd}, batch {batch} "
          f"({tokens} tokens/step), AdamW; tracegrad device {DEVICE!r} against "
          + (f"PyTorch {torch.__version__} (CPU, {'sdpa' if args.sdpa else 'explicit'} attention)"
             if torch else "nothing (PyTorch not importable, or --no-torch)"))
    print(f"threads: tracegrad OpenMP {threads['tracegrad_openmp']}, its OpenBLAS "
          f"{threads['tracegrad_blas'] or 'none found'}" + (f", PyTorch {threads['torch']}" if torch else ""))
    pool = batches(config, batch)
    ours_model, ours_step = tracegrad_engine(config, pool)
    engines = [Engine("tracegrad", ours_step)]
    torch_model = None
    if torch is not None:
        torch_model, torch_step = torch_engine(config, pool, weights_of(ours_model), args.sdpa)
        engines.append(Engine("pytorch", torch_step))
    if args.plain:
        engines.append(Engine("plain", tracegrad_engine(config, pool, plain=True)[1]))
    if not args.inference_only:
        train(engines, tokens, args)
    if not args.no_inference:
        inference(ours_model, torch_model, config, args.runs)


def train(engines, tokens, args):
    print(f"warm-up {args.warmup} step(s) each, then {args.runs} runs of {args.steps} step(s) per engine",
          flush=True)
    measure(engines, args.warmup, args.runs, args.steps,
            lambda line: print(line.replace("round", "run"), flush=True))
    names = [e.name for e in engines]
    if "pytorch" in names:
        a, b = engines[0].losses[0], engines[1].losses[0]
        print(f"    same start: first loss tracegrad {a:.5f}, pytorch {b:.5f} "
              f"({'equal' if abs(a - b) <= 1e-4 * max(1.0, abs(b)) else 'DIFFERENT'} to 1e-4)")

    print(f"\ntraining, median of {args.runs} runs:")
    for e in engines:
        seconds = statistics.median(e.block_seconds)
        print(f"  {e.name:10} {seconds * 1e3:9.2f} ms/step  {tokens / seconds:10,.0f} tokens/s")
    if "pytorch" in names:
        ratios = [t / o for o, t in zip(engines[0].block_seconds, engines[1].block_seconds)]
        print(f"  tracegrad / pytorch throughput {statistics.median(ratios):.2f}x "
              f"(median of the runs' ratios; > 1: tracegrad is faster; runs "
              f"{min(ratios):.2f}-{max(ratios):.2f})")
    if "plain" in names:
        ratios = [p / o for o, p in zip(engines[0].block_seconds, engines[-1].block_seconds)]
        print(f"  fused / plain attention throughput {statistics.median(ratios):.2f}x "
              f"(runs {min(ratios):.2f}-{max(ratios):.2f}); first loss fused "
              f"{engines[0].losses[0]:.6f}, plain {engines[-1].losses[0]:.6f}")


if __name__ == "__main__":
    main()
