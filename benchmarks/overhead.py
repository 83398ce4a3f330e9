"""The fixed cost of one operation through the whole Python path (performance chapter):
dispatch, autograd record, allocation and the kernel call, on tensors so small (4 x 4)
that the arithmetic itself is free. Compared with PyTorch (optional: pip install torch) on
the same ops in the same run, both on one thread, with autograd recording (inputs require
grad). Each round times both engines back to back (the order alternating), each the best
of a few short timeit repeats. Printed per op: each engine's best time over all rounds (on
a shared machine noise only adds time, so the minimum is the op's own cost), their ratio,
and the median and range of the rounds' own ratios (two figures taken moments apart, so a
slow spell of the machine affects both). The goal: at most GOAL times PyTorch's
time per op, judged on the best times' ratio; the last line says which ops meet it.

    python benchmarks/overhead.py [--rounds 15]
"""
import argparse
import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # not benchmarks/stage2_tensor.py
import stage2_tensor as tg  # noqa: E402
import stage3_native  # noqa: E402

OPS = {                      # name: what is timed, written once for both engines
    "add": lambda a, b: a + b,
    "mul by a number": lambda a, b: a * 0.5,
    "exp": lambda a, b: a.exp(),
    "sum": lambda a, b: a.sum(),
    "matmul": lambda a, b: a @ b,
    "relu": lambda a, b: a.relu(),
    "view": lambda a, b: a.reshape(16),
}


GOAL = 1.5                   # at most this many times PyTorch's time per op


def per_call_us(fn, number=500, repeat=3):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    stage3_native.set_num_threads(1)
    tg.seed(0)
    ours = [tg.randn(4, 4, device="cpu", requires_grad=True) for _ in range(2)]
    try:
        import torch
        torch.set_num_threads(1)
        theirs = [torch.tensor(t.detach().numpy(), requires_grad=True) for t in ours]
    except ImportError:
        theirs = None
        print("PyTorch is not installed: tracegrad's timings only (pip install torch)")
    rows = []
    for name, op in OPS.items():
        times = {"tracegrad": [], "pytorch": []}
        for r in range(args.rounds):
            engines = [("tracegrad", ours)] + ([("pytorch", theirs)] if theirs else [])
            for engine, (a, b) in (engines if r % 2 == 0 else engines[::-1]):
                times[engine].append(per_call_us(lambda: op(a, b)))
        ratios = [o / t for o, t in zip(times["tracegrad"], times["pytorch"])]
        rows.append((name, min(times["tracegrad"]), min(times["pytorch"]) if theirs else None, ratios))
    print(f"one op on 4 x 4 float32 tensors that require grad, 1 thread, best of {args.rounds} rounds; "
          "ratio = time tracegrad / time PyTorch")
    print(f"{'op':18} {'tracegrad us':>13} {'pytorch us':>11} {'ratio':>7}   rounds' ratios: median (range)")
    missed = []
    for name, us, torch_us, ratios in rows:
        if torch_us:
            print(f"{name:18} {us:13.2f} {torch_us:11.2f} {us / torch_us:6.2f}x   "
                  f"{statistics.median(ratios):.2f}x ({min(ratios):.2f} to {max(ratios):.2f})")
            if us / torch_us > GOAL:
                missed.append(f"{name} {us / torch_us:.2f}x")
        else:
            print(f"{name:18} {us:13.2f} {'-':>11} {'-':>7}")
    if theirs:
        verdict = "met by every op" if not missed else f"missed by {', '.join(missed)}"
        print(f"goal, at most {GOAL}x PyTorch's time per op: {verdict}")


if __name__ == "__main__":
    main()
