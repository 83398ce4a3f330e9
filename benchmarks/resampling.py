"""Padding, upsampling and batch normalization on device "cpu", float32: the native kernels
(csrc/resample.c, batchnorm.c: stage2_tensor/resampling.py's and normalization_functions.py's
``native`` paths), the composites every device runs (index-table gathers, tensor-op
normalization: the same functions with ``native`` switched off) and PyTorch on the CPU
(pip install torch), in the same process, with the same number of threads.

Cases at a small U-net's shapes: reflect and replicate padding by 1 (what a padded 3x3
convolution's input goes through), nearest and bilinear x2 upsampling (the decoder),
batch_norm in training mode and group_norm (the same kernels, per sample and group);
each forward alone and forward + backward (y.backward(g), g a fixed dense upstream
gradient), in milliseconds per call.

Each figure is the median over rounds; in each round the engines run one after the
other, the order rotating, so a busy neighbour slows all of them. Ratio = kernel / PyTorch.

    python benchmarks/resampling.py [--rounds 5] [--threads 2]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage2_tensor as tg  # noqa: E402
import stage2_tensor.nn.functional as F  # noqa: E402
import stage3_native  # noqa: E402
from stage2_tensor import normalization_functions, resampling  # noqa: E402

SHAPES = {"(4, 32, 64, 64)": (4, 32, 64, 64), "(2, 64, 128, 128)": (2, 64, 128, 128)}
CASES = {             # name: f(functional module, x)
    "pad reflect 1": lambda f, x: f.pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad replicate 1": lambda f, x: f.pad(x, (1, 1, 1, 1), mode="replicate"),
    "nearest x2": lambda f, x: f.interpolate(x, scale_factor=2, mode="nearest"),
    "bilinear x2": lambda f, x: f.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
    "batch_norm train": lambda f, x: f.batch_norm(x, None, None, training=True),
    "group_norm 8 groups": lambda f, x: f.group_norm(x, 8),
}
NATIVE = (resampling.native, normalization_functions.native)


def seconds(fn, reps=2):
    fn()                                              # warm-up (tables, caches)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def composite(on):
    """Switch the kernels off (on=False: every device's composite path) or back on."""
    resampling.native = NATIVE[0] if on else (lambda *a: False)
    normalization_functions.native = NATIVE[1] if on else (lambda *a: False)


def engines(torch, case, x, backward):
    ours = tg.from_numpy(x, device="cpu")
    theirs = torch.tensor(x)
    ours.requires_grad = theirs.requires_grad = True
    # a dense upstream gradient, as a network's next layer gives (y.sum()'s would be a
    # broadcast 1 that a kernel reading dense arrays copies first)
    g = np.random.default_rng(1).normal(size=case(torch.nn.functional, theirs).shape).astype(np.float32)
    upstream = {F: tg.from_numpy(g, device="cpu"), torch.nn.functional: torch.tensor(g)}

    def step(f, t):
        y = case(f, t)
        if backward:
            y.backward(upstream[f])

    def kernel():
        composite(True)
        step(F, ours)

    def gathers():
        composite(False)
        try:
            step(F, ours)
        finally:
            composite(True)
    return {"kernel": kernel, "composite": gathers, "PyTorch": lambda: step(torch.nn.functional, theirs)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("error: benchmarks/resampling.py compares against PyTorch: pip install torch")
    stage3_native.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    print(f"padding, upsampling, batch_norm, float32, {args.threads} thread(s), median of {args.rounds} rounds, "
          f"ms per call; PyTorch {torch.__version__}")
    print(f"  {'case':48} {'kernel':>9} {'composite':>10} {'PyTorch':>9} {'ratio':>7}")
    rng = np.random.default_rng(0)
    for shape_name, shape in SHAPES.items():
        x = rng.normal(size=shape).astype(np.float32)
        for name, case in CASES.items():
            for backward in (False, True):
                fns = engines(torch, case, x, backward)
                times = {who: [] for who in fns}
                order = list(fns)
                for r in range(args.rounds):
                    for who in order[r % 3:] + order[:r % 3]:
                        times[who].append(1e3 * seconds(fns[who], reps=1))
                k, c, t = (statistics.median(times[who]) for who in ("kernel", "composite", "PyTorch"))
                label = f"{name} {shape_name}{', fwd+bwd' if backward else ''}"
                print(f"  {label:48} {k:9.2f} {c:10.2f} {t:9.2f} {k / t:7.2f}", flush=True)


if __name__ == "__main__":
    main()
