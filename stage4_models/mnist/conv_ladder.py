"""The speed ladder of chapter 12 ("12_convolutions", section 7, "How fast: a ladder"): one
convolution, computed five ways at the MNIST CNN's two layer shapes, each checked against
F.conv2d and timed.

The rungs, slowest first: the definition as nested loops over Python lists (one image,
scaled by N: the loops do exactly N times the work), a numpy loop over output positions, the
naive direct convolution in C (``convolution.conv_direct``), im2col on device "cpu"
(tracegrad's way), and PyTorch when it is installed. ``measure`` returns the times,
``lines`` the printed table and reading, ``chart`` the bar chart.

numpy's BLAS should run on one thread while the per-position rung is timed: its products are
small, and where the cores are shared, BLAS threads woken for each of hundreds of them
make that rung many times slower. The chapter sets OPENBLAS_NUM_THREADS=1 before numpy
loads; this module leaves the environment alone.
"""
import statistics
import time

import numpy as np

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage2_tensor import convolution

PURE = "direct, pure Python (1 image x N)"
POSITIONS = "direct, numpy per position"
DIRECT = "direct in C (convolution.conv_direct)"
IM2COL = "im2col, device cpu"
TORCH = "PyTorch"

# name -> (C_in, H = W, C_out) of a 3x3 convolution: the CNN's two layers, or small ones
SHAPES = {"conv1: (N, 1, 28, 28) -> 32": (1, 28, 32), "conv2: (N, 32, 26, 26) -> 64": (32, 26, 64)}
QUICK_SHAPES = {"conv1: (N, 1, 12, 12) -> 4": (1, 12, 4), "conv2: (N, 4, 10, 10) -> 8": (4, 10, 8)}


def conv2d_loops(x, w):
    # y[o][i][j] = sum over c, a, b of w[o][c][a][b] * x[c][i + a][j + b]: one image, nested lists
    C, H, W = len(x), len(x[0]), len(x[0][0])
    O, KH, KW = len(w), len(w[0][0]), len(w[0][0][0])
    y = [[[0.0] * (W - KW + 1) for _ in range(H - KH + 1)] for _ in range(O)]
    for o in range(O):
        for i in range(H - KH + 1):
            for j in range(W - KW + 1):
                total = 0.0
                for c in range(C):
                    for a in range(KH):
                        row, kernel_row = x[c][i + a], w[o][c][a]
                        for b in range(KW):
                            total += kernel_row[b] * row[j + b]
                y[o][i][j] = total
    return y


def conv2d_positions(x, w):
    # For every output position, the window under the kernel times every kernel, summed.
    N, C, H, W = x.shape
    O, _, KH, KW = w.shape
    y = np.empty((N, O, H - KH + 1, W - KW + 1), dtype=x.dtype)
    rows = w.reshape(O, -1)
    for i in range(H - KH + 1):
        for j in range(W - KW + 1):
            y[:, :, i, j] = x[:, :, i:i + KH, j:j + KW].reshape(N, -1) @ rows.T
    return y


def median_seconds(fn, reps, warm_up=True):
    """The median wall time of ``reps`` calls of ``fn`` (after one untimed call when
    ``warm_up``: index tables, caches, the allocator)."""
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise ValueError(f"median_seconds: reps must be a positive int, got {reps!r}")
    if warm_up:
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def flops(batch, shape):
    """Floating-point operations of one 3x3 convolution (a multiply and an add per tap)."""
    c, size, o = shape
    return 2 * batch * o * (size - 2) ** 2 * c * 9


def measure(shapes, batch, reps, pure_reps, rng, torch=None):
    """{shape name: {rung: median seconds}} for every rung at every shape; each rung's result
    is first checked against F.conv2d on device "cpu" (rtol and atol 1e-4: float32 sums of up
    to 288 products, in different orders). ``torch``: the module, or None to leave its rung out."""
    ladder = {}
    for name, (c, size, o) in shapes.items():
        xa = rng.normal(size=(batch, c, size, size)).astype(np.float32)
        wa = rng.normal(size=(o, c, 3, 3)).astype(np.float32) / 3
        xc, wc = tg.from_numpy(xa, device="cpu"), tg.from_numpy(wa, device="cpu")
        want = F.conv2d(xc, wc).numpy()
        one_image, kernels = xa[0].tolist(), wa.tolist()
        if not np.allclose(conv2d_loops(one_image, kernels), want[0], rtol=1e-4, atol=1e-4):
            raise AssertionError(f"{name}: the pure-Python loops disagree with F.conv2d")
        rungs = {POSITIONS: lambda: conv2d_positions(xa, wa),
                 DIRECT: lambda: convolution.conv_direct(xc, wc).numpy(),
                 IM2COL: lambda: F.conv2d(xc, wc).numpy()}
        if torch is not None:
            xt, wt = torch.from_numpy(xa), torch.from_numpy(wa)
            rungs[TORCH] = lambda: torch.nn.functional.conv2d(xt, wt).numpy()
        ladder[name] = {PURE: batch * median_seconds(lambda: conv2d_loops(one_image, kernels), pure_reps,
                                                     warm_up=False)}
        for rung, fn in rungs.items():
            if not np.allclose(fn(), want, rtol=1e-4, atol=1e-4):
                raise AssertionError(f"{name}: rung {rung!r} disagrees with F.conv2d")
            ladder[name][rung] = median_seconds(fn, reps)
    return ladder


def table(ladder, shapes, batch):
    """One line per shape and rung: milliseconds and GFLOPS."""
    return [f"{name}  {rung:38} {seconds * 1e3:10.2f} ms  {flops(batch, shapes[name]) / seconds / 1e9:7.3f} GFLOPS"
            for name, times in ladder.items() for rung, seconds in times.items()]


def reading(ladder):
    """Per shape: the rungs fastest first, and the ratios the chapter discusses."""
    lines = []
    for name, times in ladder.items():
        lines.append(f"{name}: fastest first: " + " < ".join(sorted(times, key=times.get)))
        lines.append(f"    im2col is {times[PURE] / times[IM2COL]:,.0f}x faster than the pure-Python loops and "
                     f"{times[POSITIONS] / times[IM2COL]:.2f}x the speed of numpy per position"
                     + (f"; PyTorch is {times[IM2COL] / times[TORCH]:.2f}x the speed of im2col"
                        if TORCH in times else ""))
        lines.append(f"    the direct loop in C runs at {times[PURE] / times[DIRECT]:,.3g}x the speed of the same "
                     f"loops in Python, im2col at {times[DIRECT] / times[IM2COL]:,.3g}x the speed of the direct "
                     "loop in C")
    return lines


def chart(ladder, batch, path, title):
    """Bars of the median milliseconds per rung (log scale), one group per shape; written
    to ``path``, which is returned."""
    import matplotlib.pyplot as plt

    from stage1_scalargrad.plots import save
    rung_names = list(dict.fromkeys(r for times in ladder.values() for r in times))
    fig, ax = plt.subplots(figsize=(9.5, 3.8))
    width = 0.8 / len(rung_names)
    colors = ["#8c8c8c", "#c44e52", "#dd8452", "#4c72b0", "#55a868"]
    for k, rung in enumerate(rung_names):
        xs = [i + (k - (len(rung_names) - 1) / 2) * width for i in range(len(ladder))]
        ms = [ladder[s].get(rung, np.nan) * 1e3 for s in ladder]
        ax.bar(xs, ms, width, label=rung, color=colors[k % len(colors)])
        for xpos, v in zip(xs, ms):
            ax.text(xpos, v * 1.15, f"{v:.3g}", ha="center", fontsize=7)
    ax.set_xticks(range(len(ladder)), [f"{s}, N = {batch}" for s in ladder], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms per forward call (median), log scale")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    return save(fig, path)
