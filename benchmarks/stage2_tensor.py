"""stage2_tensor (pure Python) against numpy on small sizes: broadcast add, sum, matmul,
and one training step (forward, backward, SGD) of a 64-32-10 MLP at batch 32 with
cross-entropy. numpy's step is written out by hand, forward and backward.

The point is not to win: it is to see what a Python loop per element costs against a
compiled loop (stage3 replaces these kernels with C). Prints medians and ratios.

    python benchmarks/stage2_tensor.py [--reps 5]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stage2_tensor as tg  # noqa: E402


def median_time(fn, reps):
    fn()                                       # warm up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def mlp_step_tracegrad(params, x, y, lr=0.1):
    w1, b1, w2, b2 = params
    h = (x.matmul(w1, transpose_b=True) + b1).relu()
    logits = h.matmul(w2, transpose_b=True) + b2
    loss = -logits.log_softmax(-1)[tg.arange(x.shape[0]), y].mean()
    for p in params:
        p.grad = None
    loss.backward()
    with tg.no_grad():
        for p in params:
            p.sub_(p.grad * lr)


def mlp_step_numpy(params, x, y, lr=0.1):
    w1, b1, w2, b2 = params
    pre = x @ w1.T + b1
    h = np.maximum(pre, 0)
    logits = h @ w2.T + b2
    z = logits - logits.max(1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    g = p.copy()
    g[np.arange(len(y)), y] -= 1
    g /= len(y)
    gw2, gb2 = g.T @ h, g.sum(0)
    gh = (g @ w2) * (pre > 0)
    gw1, gb1 = gh.T @ x, gh.sum(0)
    for param, grad in zip(params, (gw1, gb1, gw2, gb2)):
        param -= lr * grad


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []

    def compare(name, ours, theirs):
        t_ours, t_np = median_time(ours, args.reps), median_time(theirs, args.reps)
        rows.append((name, t_ours, t_np))

    a, b = rng.normal(size=(64, 64)).astype(np.float32), rng.normal(size=(64,)).astype(np.float32)
    ta, tb = tg.from_numpy(a), tg.from_numpy(b)
    compare("add (64,64)+(64,) broadcast", lambda: ta + tb, lambda: a + b)
    compare("sum over dim 0 of (64,64)", lambda: ta.sum(0), lambda: a.sum(0))
    m1, m2 = rng.normal(size=(32, 64)).astype(np.float32), rng.normal(size=(64, 32)).astype(np.float32)
    tm1, tm2 = tg.from_numpy(m1), tg.from_numpy(m2)
    compare("matmul (32,64)@(64,32)", lambda: tm1 @ tm2, lambda: m1 @ m2)

    x = rng.normal(size=(32, 64)).astype(np.float32)
    y = rng.integers(0, 10, size=32)
    shapes = [(32, 64), (32,), (10, 32), (10,)]
    np_params = [rng.uniform(-0.1, 0.1, size=s).astype(np.float32) for s in shapes]
    tg_params = [tg.from_numpy(p.copy()).requires_grad_() for p in np_params]
    tx, ty = tg.from_numpy(x), tg.from_numpy(y)
    compare("MLP 64-32-10 train step, batch 32", lambda: mlp_step_tracegrad(tg_params, tx, ty),
            lambda: mlp_step_numpy(np_params, x, y))

    print(f"stage2_tensor (device 'python') against numpy {np.__version__}; median of {args.reps}")
    print(f"  {'operation':36} {'stage2':>11} {'numpy':>11} {'ratio':>9}")
    for name, ours, theirs in rows:
        print(f"  {name:36} {ours * 1e3:8.2f} ms {theirs * 1e6:8.1f} us {ours / theirs:8.0f}x")


if __name__ == "__main__":
    main()
