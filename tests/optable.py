"""The op table: every differentiable op once, with its arity, the inputs it is defined
on, how to call it on an engine, and numpy's answer. The shared tests read nothing else.
Below it, numpy's answer to each primitive op of stage2_tensor/ops.py (``PRIMITIVES``),
which the kernel tests of every device read."""
from dataclasses import dataclass
import math
from typing import Callable, NamedTuple, Optional

import numpy as np


@dataclass(frozen=True)
class Domain:
    """Inputs are drawn from [low, high], avoiding |x| < away (a kink or pole at 0)."""
    low: float = -3.0
    high: float = 3.0
    away: float = 0.0

    def sample(self, rng, shape=()):
        x = rng.uniform(self.low, self.high, size=shape)
        if self.away:
            x = np.where(np.abs(x) < self.away, np.copysign(self.away, x) * 2, x)
        return np.asarray(x, dtype=np.float64)


ANY = Domain()
POSITIVE = Domain(0.1, 4.0)
NONZERO = Domain(-3.0, 3.0, away=0.2)
KINK = Domain(-3.0, 3.0, away=1e-3)         # relu: differentiable everywhere but at 0


@dataclass(frozen=True)
class Op:
    name: str
    arity: int                       # -1: n-ary
    apply: Callable                  # (namespace, *engine objects) -> engine object
    reference: Callable              # (*float64 arrays) -> float64 array
    domains: tuple                   # one Domain per input (n-ary: the one for all)
    stages: Optional[tuple] = None   # only these stages have the op (None: every stage)
    shapes: Optional[tuple] = None   # input shapes for tensor engines (None: one shared shape)

    def __repr__(self):
        return self.name


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


OPS = [
    Op("add", 2, lambda ns, a, b: a + b, np.add, (ANY, ANY)),
    Op("sub", 2, lambda ns, a, b: a - b, np.subtract, (ANY, ANY)),
    Op("mul", 2, lambda ns, a, b: a * b, np.multiply, (ANY, ANY)),
    Op("div", 2, lambda ns, a, b: a / b, np.divide, (ANY, NONZERO)),
    Op("pow", 2, lambda ns, a, b: a ** b, np.power, (POSITIVE, ANY)),
    Op("neg", 1, lambda ns, a: -a, np.negative, (ANY,)),
    Op("exp", 1, lambda ns, a: a.exp(), np.exp, (ANY,)),
    Op("log", 1, lambda ns, a: a.log(), np.log, (POSITIVE,)),
    Op("tanh", 1, lambda ns, a: a.tanh(), np.tanh, (ANY,)),
    Op("sigmoid", 1, lambda ns, a: a.sigmoid(), _sigmoid, (ANY,)),
    Op("relu", 1, lambda ns, a: a.relu(), lambda a: np.maximum(a, 0.0), (KINK,)),
    Op("add_n", -1, lambda ns, *xs: ns.add(*xs), lambda *xs: np.sum(xs, axis=0), (ANY,),
       stages=("stage1",)),
    Op("mul_n", -1, lambda ns, *xs: ns.mul(*xs), lambda *xs: np.prod(xs, axis=0), (ANY,),
       stages=("stage1",)),
]


def _t(x):
    return np.swapaxes(x, -1, -2)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(x, weight=None, bias=None, eps=1e-5):
    """Over the last axis, with the biased variance (PyTorch's)."""
    centered = x - x.mean(-1, keepdims=True)
    out = centered / np.sqrt((centered ** 2).mean(-1, keepdims=True) + eps)
    out = out if weight is None else out * weight
    return out if bias is None else out + bias


def _attention(q, k, v, causal=False):
    scores = q @ _t(k) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
    return _softmax(scores) @ v


def _conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """The n-d convolution (a cross-correlation) by its definition: at each output position,
    the window of the zero-padded input times the kernels, summed."""
    n = w.ndim - 2
    stride, padding, dilation = ((t,) * n if isinstance(t, int) else t for t in (stride, padding, dilation))
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    O, Cg, k = w.shape[0], w.shape[1], w.shape[2:]
    Og = O // groups
    out = [(x.shape[2 + d] - dilation[d] * (k[d] - 1) - 1) // stride[d] + 1 for d in range(n)]
    y = np.zeros((x.shape[0], O, *out))
    for pos in np.ndindex(*out):
        window = x[(slice(None), slice(None)) + tuple(
            slice(pos[d] * stride[d], pos[d] * stride[d] + dilation[d] * (k[d] - 1) + 1, dilation[d])
            for d in range(n))]
        for g in range(groups):
            y[(slice(None), slice(g * Og, (g + 1) * Og)) + pos] = np.tensordot(
                window[:, g * Cg:(g + 1) * Cg], w[g * Og:(g + 1) * Og], axes=(range(1, n + 2), range(1, n + 2)))
    return y if b is None else y + b.reshape(O, *(1,) * n)


def _pool(x, k, stride, padding, reduce, fill):
    """n-d pooling by its definition: ``reduce`` over each window of the input padded with
    ``fill`` (-inf for a maximum, 0 for an average that counts the padding)."""
    n = len(k)
    x = np.pad(x, [(0, 0), (0, 0)] + [(padding, padding)] * n, constant_values=fill)
    out = [(x.shape[2 + d] - k[d]) // stride + 1 for d in range(n)]
    y = np.zeros((*x.shape[:2], *out))
    for pos in np.ndindex(*out):
        window = x[(slice(None), slice(None)) + tuple(slice(p * stride, p * stride + k[d]) for d, p in enumerate(pos))]
        y[(slice(None), slice(None)) + pos] = reduce(window.reshape(*x.shape[:2], -1), axis=-1)
    return y


def _bilinear(x, out, align_corners):
    """Bilinear interpolation of (N, C, H, W) to (N, C, *out) by its definition: each output
    pixel's input coordinates, then the four neighbours weighted by their distances."""
    def coordinate(j, size, n):
        if align_corners:
            return j * (size - 1) / (n - 1) if n > 1 else 0.0
        return max((j + 0.5) * size / n - 0.5, 0.0)
    H, W = x.shape[2:]
    y = np.zeros((*x.shape[:2], *out))
    for i in range(out[0]):
        for j in range(out[1]):
            r, c = coordinate(i, H, out[0]), coordinate(j, W, out[1])
            r0, c0 = int(r), int(c)
            r1, c1 = min(r0 + 1, H - 1), min(c0 + 1, W - 1)
            a, b = r - r0, c - c0
            y[:, :, i, j] = ((1 - a) * (1 - b) * x[:, :, r0, c0] + (1 - a) * b * x[:, :, r0, c1]
                             + a * (1 - b) * x[:, :, r1, c0] + a * b * x[:, :, r1, c1])
    return y


def _conv_transpose(x, w, stride=1, padding=0, output_padding=0):
    """The 2-d transposed convolution by its definition: every input value times the kernel,
    added into the output at stride * position - padding + kernel offset."""
    N, C, H, W = x.shape
    O, (kh, kw) = w.shape[1], w.shape[2:]
    out = ((H - 1) * stride - 2 * padding + kh + output_padding, (W - 1) * stride - 2 * padding + kw + output_padding)
    y = np.zeros((N, O, out[0] + 2 * padding, out[1] + 2 * padding))
    for i in range(H):
        for j in range(W):
            y[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
    return y[:, :, padding:padding + out[0], padding:padding + out[1]]


def _adaptive_avg(x, out):
    """Adaptive average pooling by its definition: window i of o over s is [i s // o, ceil((i + 1) s / o))."""
    H, W = x.shape[2:]
    y = np.zeros((*x.shape[:2], *out))
    for i in range(out[0]):
        for j in range(out[1]):
            r0, r1 = i * H // out[0], -(-(i + 1) * H // out[0])
            c0, c1 = j * W // out[1], -(-(j + 1) * W // out[1])
            y[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    return y


def splitmix64(seed, n):
    """Outputs 0..n-1 of the SplitMix64 generator seeded with ``seed`` (Steele, Lea and
    Flood 2014), in numpy's wrapping uint64 arithmetic: dropout's counter-based hash."""
    z = np.uint64(seed) + (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def dropout_keep(seed, shape, p):
    """Which elements dropout keeps for a call with this seed: element i (row-major) iff the
    top 53 bits of splitmix64 output i, as a uniform in [0, 1), are >= p."""
    n = int(np.prod(shape))
    return ((splitmix64(seed, n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 >= p).reshape(shape)


def dropout_seed(n):
    """The seed of the first dropout call after ``seed(n)``: the generator's first 64 bits."""
    import random
    return random.Random(n).getrandbits(64)


def _dropout(a, p=0.4, seed=7):
    """dropout's answer after seed(7): x * (keep * 1 / (1 - p)), as the kernels compute it."""
    return a * (dropout_keep(dropout_seed(seed), a.shape, p) * (1 / (1 - p)))


def tensor_op(name, apply, reference, *shapes, domains=None):
    """An op only tensor engines have, checked at the given input shapes."""
    return Op(name, len(shapes), apply, reference, domains or (ANY,) * len(shapes),
              shapes=tuple(shapes))


def _put_along(a, index, src, axis):
    out = a.copy()
    np.put_along_axis(out, index, src, axis)
    return out


def _add_along(a, index, src, axis):
    """a with src added at index along axis (repeats add up): scatter_add."""
    out = a.copy()
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[axis] = index[pos]
        out[tuple(target)] += src[pos]
    return out


# Advanced indexing's rows: fixed masks (3, 4) and (5,), (4, 5), none of them empty
MASK_34 = np.arange(12).reshape(3, 4) % 3 == 1
MASK_5 = np.array([True, False, False, True, True])
MASK_45 = np.arange(20).reshape(4, 5) % 7 == 2


def _index_writes(a, v, c):
    """The writes of tests' "index_writes" row, by numpy's fancy assignment: index_put
    accumulating repeats (np.add.at), index_put, index_copy, index_add, index_fill."""
    p = a.copy()
    np.add.at(p, ([0, 2, 0], [1, 1, 1]), v)
    q = a.copy()
    q[[[2], [0]], [3, 0]] = v[:2]
    r = a.copy()
    r[:, [3, 0]] = np.stack([v, 2 * v], 1)
    s = a.copy()
    np.add.at(s, (slice(None), slice(None), [4, 4, 1]), 2 * (0.5 * a[..., :3]))
    t = a.copy()
    t[1] = c
    return np.concatenate([x.ravel() for x in (p, q, r, s, t)])


def _masked_scatter(a, mask, source):
    out = a.copy()
    full = np.broadcast_to(mask, a.shape)
    out[full] = source.ravel()[:full.sum()]
    return out


AWAY = Domain(-3.0, 3.0, away=0.05)
UNIT = Domain(-0.9, 0.9, away=0.05)         # inside (-1, 1): asin, atanh, erfinv


def _eye(ns, like, n, m=None):
    """The identity on ``like``'s device and dtype (the linalg rows make their matrices
    well-conditioned with it)."""
    return ns.eye(n, m, dtype=like.dtype, device=like.device)


def _spread(ns, like, m, n=None):
    """diag(9, 6, 3, ...) of shape (m, n): singular values (eigenvalues) kept apart and away
    from 0 when a small matrix is added."""
    n = m if n is None else n
    values = [[9.0 - 3 * i if i == j else 0.0 for j in range(n)] for i in range(m)]
    if ns is np:
        return np.array(values)
    return ns.tensor(values, dtype=like.dtype, device=like.device)


def _cdist(a, b, p):
    return (np.abs(a[:, None, :] - b[None, :, :]) ** p).sum(-1) ** (1 / p)


def _lstm_cell(ig, hg, cx, ib=0.0, hb=0.0):
    """PyTorch's LSTM cell on the gates' products: (hy, cy) stacked."""
    i, f, g, o = np.split((ig + ib) + (hg + hb), 4, axis=1)
    cy = _sigmoid(f) * cx + _sigmoid(i) * np.tanh(g)
    return np.stack([_sigmoid(o) * np.tanh(cy), cy])


def _gru_cell(ig, hg, hx, ib=0.0, hb=0.0):
    """PyTorch's GRU cell on the gates' products: hy."""
    (xr, xz, xn), (hr, hz, hn) = np.split(ig + ib, 3, axis=1), np.split(hg + hb, 3, axis=1)
    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * hx


def _expm(a):
    """e^a by its series on a / 2^s (norm at most 1/2) to degree 30, squared s times."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(0).max(), 1e-300) / 0.5))))
    x = a / 2.0 ** s
    term, total = np.eye(len(a)), np.eye(len(a))
    for k in range(1, 31):
        term = term @ x / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total

TENSOR_OPS = [
    # Broadcasting in every argument position.
    tensor_op("add_row", lambda ns, a, b: a + b, np.add, (2, 3), (3,)),
    tensor_op("add_col", lambda ns, a, b: a + b, np.add, (2, 1), (2, 3)),
    tensor_op("mul_outer", lambda ns, a, b: a * b, np.multiply, (2, 1), (1, 3)),
    tensor_op("sub_scalar_tensor", lambda ns, a, b: a - b, np.subtract, (), (2, 3)),
    tensor_op("div_bcast", lambda ns, a, b: a / b, np.divide, (3,), (2, 3), domains=(ANY, NONZERO)),
    tensor_op("pow_bcast", lambda ns, a, b: a ** b, np.power, (2, 3), (1, 3), domains=(POSITIVE, ANY)),
    tensor_op("maximum", lambda ns, a, b: a.maximum(b), np.maximum, (2, 3), (3,), domains=(AWAY, AWAY)),
    tensor_op("minimum", lambda ns, a, b: a.minimum(b), np.minimum, (2, 3), (2, 3)),
    tensor_op("where", lambda ns, a, b: ns.where(a > 0, a, b), lambda a, b: np.where(a > 0, a, b),
              (2, 3), (3,), domains=(AWAY, ANY)),
    tensor_op("scalar_ops", lambda ns, a: (2.0 - a) * 3 / (a * a + 1) + a ** 2,
              lambda a: (2.0 - a) * 3 / (a * a + 1) + a ** 2, (2, 3)),
    # More unary ops.
    tensor_op("sqrt", lambda ns, a: a.sqrt(), np.sqrt, (2, 3), domains=(POSITIVE,)),
    tensor_op("abs", lambda ns, a: a.abs(), np.abs, (2, 3), domains=(KINK,)),
    tensor_op("gelu", lambda ns, a: a.gelu(), lambda a: 0.5 * a * (1 + np.vectorize(math.erf)(a / math.sqrt(2))),
              (2, 3)),
    tensor_op("silu", lambda ns, a: ns.nn.functional.silu(a), lambda a: a * _sigmoid(a), (2, 3)),
    # GPT-2's GELU, by its definition (PyTorch's formula; the engines compute x * sigmoid(2u))
    tensor_op("gelu_tanh", lambda ns, a: ns.nn.functional.gelu(a, approximate="tanh"),
              lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3))),
              (2, 3)),
    tensor_op("erf", lambda ns, a: a.erf(), lambda a: np.vectorize(math.erf)(a), (2, 3)),
    tensor_op("softplus", lambda ns, a: ns.nn.functional.softplus(a), lambda a: np.log1p(np.exp(a)), (2, 3)),
    tensor_op("softplus_beta", lambda ns, a: ns.nn.functional.softplus(a, beta=2.0, threshold=0.0),
              lambda a: np.where(2 * a > 0, a, np.log1p(np.exp(2 * a)) / 2), (2, 3), domains=(AWAY,)),
    # Reductions over int and tuple dims, negative dims, keepdim.
    tensor_op("sum_all", lambda ns, a: a.sum(), np.sum, (2, 3)),
    tensor_op("sum_dim0", lambda ns, a: a.sum(0), lambda a: a.sum(0), (2, 3)),
    tensor_op("sum_last_keep", lambda ns, a: a.sum(-1, keepdim=True), lambda a: a.sum(-1, keepdims=True), (2, 3)),
    tensor_op("sum_dims", lambda ns, a: a.sum(dim=(0, -1)), lambda a: a.sum(axis=(0, 2)), (2, 3, 4)),
    tensor_op("mean_dim", lambda ns, a: a.mean(1), lambda a: a.mean(1), (2, 3)),
    tensor_op("max_dim", lambda ns, a: a.max(dim=1).values, lambda a: a.max(1), (2, 3)),
    tensor_op("min_all", lambda ns, a: a.min(), np.min, (2, 3)),
    # Convolution and pooling (stage2_tensor/convolution.py): im2col as a gather, one product.
    tensor_op("conv2d", lambda ns, x, w, b: ns.nn.functional.conv2d(x, w, b, padding=1),
              lambda x, w, b: _conv(x, w, b, padding=1), (1, 2, 3, 3), (2, 2, 2, 2), (2,)),
    tensor_op("conv2d_stride_dilation_groups",
              lambda ns, x, w: ns.nn.functional.conv2d(x, w, stride=2, padding=(1, 0), dilation=(2, 1), groups=2),
              lambda x, w: _conv(x, w, stride=2, padding=(1, 0), dilation=(2, 1), groups=2), (1, 4, 4, 3), (2, 2, 2, 2)),
    # a batch: one product per sample where each has at least as many output positions as
    # channels, else the samples side by side in one product (convolution.py, _product)
    tensor_op("conv2d_batch", lambda ns, x, w, b: ns.nn.functional.conv2d(x, w, b),
              lambda x, w, b: _conv(x, w, b), (2, 1, 3, 3), (2, 1, 2, 2), (2,)),
    tensor_op("conv2d_batch_few_positions_groups",
              lambda ns, x, w: ns.nn.functional.conv2d(x, w, stride=2, groups=2),
              lambda x, w: _conv(x, w, stride=2, groups=2), (3, 4, 2, 3), (4, 2, 2, 2)),
    tensor_op("conv1d_same", lambda ns, x, w: ns.nn.functional.conv1d(x, w, padding="same", dilation=2),
              lambda x, w: _conv(x, w, padding=2, dilation=2), (1, 2, 5), (2, 2, 3)),
    tensor_op("conv3d", lambda ns, x, w: ns.nn.functional.conv3d(x, w, padding=1), lambda x, w: _conv(x, w, padding=1),
              (1, 1, 2, 3, 2), (1, 1, 2, 2, 2)),
    tensor_op("max_pool2d", lambda ns, x: ns.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
              lambda x: _pool(x, (3, 3), 2, 1, np.max, -np.inf), (1, 2, 5, 4)),
    tensor_op("avg_pool2d", lambda ns, x: ns.nn.functional.avg_pool2d(x, 2, stride=1, padding=1),
              lambda x: _pool(x, (2, 2), 1, 1, np.mean, 0.0), (1, 2, 3, 4)),
    tensor_op("max_pool1d", lambda ns, x: ns.nn.functional.max_pool1d(x, 2),
              lambda x: _pool(x, (2,), 2, 0, np.max, -np.inf), (1, 2, 6)),
    tensor_op("conv_transpose2d",
              lambda ns, x, w: ns.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
              lambda x, w: _conv_transpose(x, w, stride=2, padding=1, output_padding=1), (1, 2, 2, 3), (2, 2, 3, 2)),
    tensor_op("conv_transpose2d_batch", lambda ns, x, w: ns.nn.functional.conv_transpose2d(x, w, stride=2),
              lambda x, w: _conv_transpose(x, w, stride=2), (2, 2, 1, 2), (2, 2, 2, 2)),
    tensor_op("adaptive_avg_pool2d", lambda ns, x: ns.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
              lambda x: _adaptive_avg(x, (2, 3)), (1, 2, 5, 4)),
    tensor_op("fold_unfold",      # overlapping windows add up: each element times the windows that read it
              lambda ns, x: ns.nn.functional.fold(ns.nn.functional.unfold(x, 2, padding=1), (3, 3), 2, padding=1),
              lambda x: x * np.array([[4, 4, 4], [4, 4, 4], [4, 4, 4]]), (1, 2, 3, 3)),
    # Order, gathers along a dimension, running sums, Einstein sums (stage2_tensor/sorting.py,
    # gathering.py, cumulative.py, einsum.py): composites of index_select/index_add and matmul.
    tensor_op("gather_dim", lambda ns, a: a.gather(1, ns.tensor([[2, 0, 2], [1, 1, 0]], device=a.device)),
              lambda a: np.take_along_axis(a, np.array([[2, 0, 2], [1, 1, 0]]), 1), (2, 3)),
    tensor_op("scatter_src", lambda ns, a, s: a.scatter(1, ns.tensor([[3, 0], [1, 2]], device=a.device), s),
              lambda a, s: _put_along(a, np.array([[3, 0], [1, 2]]), s[:, :2], 1), (2, 4), (2, 3)),
    tensor_op("scatter_add_repeats",  # index 0 twice in column 1: both add up
              lambda ns, a, s: a.scatter_add(0, ns.tensor([[1, 0, 2], [0, 0, 1]], device=a.device), s),
              lambda a, s: _add_along(a, np.array([[1, 0, 2], [0, 0, 1]]), s, 0), (3, 3), (2, 3)),
    tensor_op("cumsum", lambda ns, a: a.cumsum(1), lambda a: np.cumsum(a, 1), (2, 3)),
    tensor_op("cumsum_mid", lambda ns, a: ns.cumsum(a, dim=-2), lambda a: np.cumsum(a, -2), (2, 3, 2)),
    # the other running scans (cumulative.py): products, extremes (the gradient to the index), log-sum-exps
    tensor_op("cumprod", lambda ns, a: a.cumprod(1) + ns.cumprod(a, dim=0), lambda a: np.cumprod(a, 1) + np.cumprod(a, 0),
              (3, 4)),
    tensor_op("cummax_cummin", lambda ns, a: a.cummax(1).values * ns.cummin(a, 0)[0],
              lambda a: np.maximum.accumulate(a, 1) * np.minimum.accumulate(a, 0), (3, 4)),
    tensor_op("logcumsumexp", lambda ns, a: (a * 30.0).logcumsumexp(-1) + ns.logcumsumexp(a, 0),    # large: no overflow
              lambda a: np.logaddexp.accumulate(a * 30.0, -1) + np.logaddexp.accumulate(a, 0), (3, 4)),
    tensor_op("sort_values", lambda ns, a: a.sort(1, descending=True).values, lambda a: -np.sort(-a, 1), (2, 3)),
    tensor_op("sort_values_dim0", lambda ns, a: ns.sort(a, 0)[0], lambda a: np.sort(a, 0), (3, 2)),
    tensor_op("topk_values", lambda ns, a: ns.topk(a, 2, dim=0).values, lambda a: -np.sort(-a, 0)[:2], (3, 2)),
    tensor_op("topk_smallest", lambda ns, a: a.topk(2, largest=False)[0], lambda a: np.sort(a, 1)[:, :2], (2, 4)),
    # selection and sorting by the first dim (sorting.py): the gradient to the selected index
    tensor_op("kthvalue_median", lambda ns, a: ns.kthvalue(a, 3, dim=1).values + a.median(1).values * a.nanmedian(-1)[0],
              lambda a: np.sort(a, 1)[:, 2] + np.sort(a, 1)[:, 1] ** 2, (3, 4)),
    tensor_op("median_all_msort", lambda ns, a: a.median() * ns.msort(a),
              lambda a: np.sort(a.ravel())[(a.size - 1) // 2] * np.sort(a, 0), (3, 2)),
    # repeat_interleave (repeating.py): an index_select, its gradient the repeats added up
    tensor_op("repeat_interleave", lambda ns, a: a.repeat_interleave(ns.tensor([2, 0, 1], device=a.device), dim=1)
              * ns.repeat_interleave(a, 2, dim=0)[1:3],
              lambda a: np.repeat(a, [2, 0, 1], axis=1) * np.repeat(a, 2, axis=0)[1:3], (2, 3)),
    tensor_op("einsum_scores", lambda ns, q, k: ns.einsum("bhqd,bhkd->bhqk", q, k),
              lambda q, k: np.einsum("bhqd,bhkd->bhqk", q, k), (1, 2, 2, 3), (1, 2, 2, 3)),
    tensor_op("einsum_contract", lambda ns, a, b: ns.einsum("ijk,ik->j", a, b),
              lambda a, b: np.einsum("ijk,ik->j", a, b), (2, 3, 2), (2, 2)),
    tensor_op("einsum_dot_transpose", lambda ns, a, b: ns.einsum("i,i->", a, b) * ns.einsum("ij->ji", b.reshape(2, 2)),
              lambda a, b: np.einsum("i,i->", a, b) * b.reshape(2, 2).T, (4,), (4,)),
    # sin and cos (stage2_tensor/trigonometry.py): polynomials after a range reduction;
    # the inputs scaled to span several turns either side of 0
    tensor_op("sin_turns", lambda ns, x: ns.sin(x * 9.0), lambda x: np.sin(x * 9.0), (2, 3)),
    tensor_op("cos_turns", lambda ns, x: (x * 9.0).cos(), lambda x: np.cos(x * 9.0), (2, 3)),
    # functional forms and small composites a ported program calls (torch_compat.py, methods.py)
    tensor_op("pow_square_rsqrt_functions", lambda ns, x: ns.pow(x, 3.0) + ns.square(x) - ns.rsqrt(x * x + 1.0) + ns.neg(ns.relu(x)),
              lambda x: x ** 3 + x * x - 1 / np.sqrt(x * x + 1) - np.maximum(x, 0), (2, 3)),
    # reordering and reductions a ported program calls (reorder.py, concat.unbind, statistics.logsumexp)
    tensor_op("flip_roll", lambda ns, x: x.flip(0, 2).roll((1, -2), (1, 2)) * ns.roll(x, 4),
              lambda x: np.roll(np.flip(x, (0, 2)), (1, -2), (1, 2)) * np.roll(x.ravel(), 4).reshape(x.shape), (2, 3, 4)),
    # flip's kernel (kernels/indexing.py): strided input, several dims, a bool view flipped too
    tensor_op("flip", lambda ns, x: x.transpose(0, 2).flip((0, -1)) * (x.transpose(0, 2) > 0).flip(1),
              lambda x: np.flip(x.transpose(2, 1, 0), (0, 2)) * np.flip(x.transpose(2, 1, 0) > 0, 1), (2, 3, 4)),
    tensor_op("unbind_amax", lambda ns, x: x.unbind(1)[2] * x.amax((0, 1)) + ns.amin(x, 1, keepdim=True),
              lambda x: x[:, 2] * x.max((0, 1)) + x.min(1, keepdims=True), (2, 3, 4)),
    tensor_op("logsumexp", lambda ns, x: ns.logsumexp(x * 30.0, (0, 2)),      # large: the maximum is taken out
              lambda x: np.log(np.exp(x * 30.0 - (x * 30.0).max()).sum((0, 2))) + (x * 30.0).max(), (2, 3, 2)),
    # remainder (rounding.py): a - floor(a / b) b, the floor a constant; inputs scaled so the
    # quotients are away from whole numbers (where floor jumps and differences would not be local)
    tensor_op("remainder", lambda ns, a, b: (a * 7.0) % (b.abs() + 0.5) + ns.remainder(a * 3.0, 0.7),
              lambda a, b: np.mod(a * 7.0, np.abs(b) + 0.5) + np.mod(a * 3.0, 0.7), (2, 3), (2, 3)),
    tensor_op("diag_both_ways", lambda ns, v, m: ns.diag(v, -1).sum(0)[:3] + ns.diag(m, 1).sum() + v.diag().sum(1),
              lambda v, m: np.diag(v, -1).sum(0)[:3] + np.diag(m, 1).sum() + np.diag(v).sum(1), (3,), (3, 4)),
    tensor_op("lerp_addcmul_addcdiv", lambda ns, a, b: a.lerp(b, 0.3) + ns.addcmul(a, a, b, value=0.5)
              + a.addcdiv(b, b * b + 1.0, value=2.0),
              lambda a, b: a + 0.3 * (b - a) + a + 0.5 * a * b + a + 2.0 * b / (b * b + 1), (2, 3), (2, 3)),
    tensor_op("einsum_diagonal", lambda ns, a, b: ns.einsum("bii,i->bi", a, b),     # gradient on the diagonal only
              lambda a, b: np.einsum("bii,i->bi", a, b), (2, 3, 3), (3,)),
    tensor_op("einsum_ellipsis", lambda ns, a, b: ns.einsum("...ij,...jk->...ik", a, b),
              lambda a, b: np.einsum("...ij,...jk->...ik", a, b), (2, 2, 3), (3, 2)),
    # Padding and interpolation (stage2_tensor/resampling.py): gathers along one dimension.
    tensor_op("pad_constant", lambda ns, x: ns.nn.functional.pad(x, (1, 2, -1, 1), value=0.5),
              lambda x: np.pad(x[:, 1:], [(0, 0), (0, 1), (1, 2)], constant_values=0.5), (1, 3, 3)),
    tensor_op("pad_reflect", lambda ns, x: ns.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"),
              lambda x: np.pad(x, [(0, 0), (1, 2), (2, 1)], mode="reflect"), (1, 3, 3)),
    tensor_op("pad_replicate", lambda ns, x: ns.nn.functional.pad(x, (0, 2, 3, 1), mode="replicate"),
              lambda x: np.pad(x, [(0, 0), (3, 1), (0, 2)], mode="edge"), (1, 2, 3)),
    tensor_op("pad_circular", lambda ns, x: ns.nn.functional.pad(x, (1, 3), mode="circular"),
              lambda x: np.pad(x, [(0, 0), (1, 3)], mode="wrap"), (1, 4)),
    tensor_op("upsample_nearest", lambda ns, x: ns.nn.functional.interpolate(x, scale_factor=2),
              lambda x: x.repeat(2, axis=2).repeat(2, axis=3), (1, 2, 2, 3)),
    tensor_op("upsample_bilinear", lambda ns, x: ns.nn.functional.interpolate(x, size=(4, 5), mode="bilinear"),
              lambda x: _bilinear(x, (4, 5), False), (1, 2, 3, 2)),
    tensor_op("upsample_bilinear_corners",
              lambda ns, x: ns.nn.functional.interpolate(x, size=(3, 4), mode="bilinear", align_corners=True),
              lambda x: _bilinear(x, (3, 4), True), (1, 1, 2, 3)),
    # matmul: the four transpose cases, batches (broadcast), vectors.
    tensor_op("matmul", lambda ns, a, b: a @ b, np.matmul, (2, 3), (3, 4)),
    tensor_op("matmul_ta", lambda ns, a, b: ns.matmul(a, b, transpose_a=True),
              lambda a, b: _t(a) @ b, (3, 2), (3, 4)),
    tensor_op("matmul_tb", lambda ns, a, b: ns.matmul(a, b, transpose_b=True),
              lambda a, b: a @ _t(b), (2, 3), (4, 3)),
    tensor_op("matmul_tt", lambda ns, a, b: ns.matmul(a, b, True, True),
              lambda a, b: _t(a) @ _t(b), (3, 2), (4, 3)),
    tensor_op("matmul_batched", lambda ns, a, b: a @ b, np.matmul, (2, 2, 3), (3, 4)),
    tensor_op("matmul_batch_bcast", lambda ns, a, b: ns.matmul(a, b, transpose_b=True),
              lambda a, b: a @ _t(b), (2, 1, 2, 3), (3, 4, 3)),
    tensor_op("linear", lambda ns, x, w, b: ns.nn.functional.linear(x, w, b),
              lambda x, w, b: x @ w.T + b, (2, 3), (4, 3), (4,)),
    tensor_op("linear_batched", lambda ns, x, w, b: ns.nn.functional.linear(x, w, b),
              lambda x, w, b: x @ w.T + b, (2, 2, 3), (4, 3), (4,)),
    tensor_op("matvec", lambda ns, a, b: a @ b, np.matmul, (2, 3), (3,)),
    tensor_op("vecmat", lambda ns, a, b: a @ b, np.matmul, (3,), (3, 4)),
    tensor_op("dot", lambda ns, a, b: a @ b, np.matmul, (3,), (3,)),
    # Views and indexing.
    tensor_op("reshape", lambda ns, a: a.reshape(3, -1) * 2, lambda a: a.reshape(3, -1) * 2, (2, 3)),
    tensor_op("permute", lambda ns, a: a.permute(2, 0, 1) * 2, lambda a: a.transpose(2, 0, 1) * 2, (2, 3, 4)),
    tensor_op("transpose_T", lambda ns, a: a.T * a.T, lambda a: a.T * a.T, (2, 3)),
    tensor_op("expand", lambda ns, a: a.expand(4, 2, 3) * 1.5, lambda a: np.broadcast_to(a, (4, 2, 3)) * 1.5, (2, 1)),
    tensor_op("slice", lambda ns, a: a[1:, ::2] * a[:2, 1:3], lambda a: a[1:, ::2] * a[:2, 1:3], (3, 4)),
    tensor_op("int_and_none", lambda ns, a: a[1, None, ...] * 2, lambda a: a[1, None, ...] * 2, (3, 4)),
    tensor_op("gather_rows", lambda ns, a: a[ns.tensor([2, 0, 2])], lambda a: a[[2, 0, 2]], (3, 4)),
    tensor_op("cat", lambda ns, a, b: ns.cat([a, b * 2, a], dim=-1),
              lambda a, b: np.concatenate([a, b * 2, a], axis=-1), (2, 3), (2, 1)),
    # one cat kernel over every piece: strided and empty ones, stack's new dimension anywhere
    tensor_op("cat_pieces", lambda ns, a, b: ns.cat([a.mT, b[:, ::2] * 2, a[:0].mT, b[:, 1:].flip(1)], dim=-1),
              lambda a, b: np.concatenate([a.T, b[:, ::2] * 2, a[:0].T, b[:, 1:][:, ::-1]], axis=-1), (3, 2), (2, 5)),
    tensor_op("stack_dims", lambda ns, a, b: ns.stack([a, b.mT, a * 2], 1) * ns.stack([b.mT, a, a], -1).sum(0),
              lambda a, b: np.stack([a, b.T, a * 2], 1) * np.stack([b.T, a, a], -1).sum(0), (2, 3), (3, 2)),
    tensor_op("split", lambda ns, a: ns.split(a, [1, 3], dim=1)[1] * ns.split(a, 2, dim=1)[0].sum(),
              lambda a: a[:, 1:] * a[:, :2].sum(), (2, 4)),
    tensor_op("masked_fill", lambda ns, a: a.masked_fill(a > 0.5, -1.0),
              lambda a: np.where(a > 0.5, -1.0, a), (3, 4), domains=(AWAY,)),
    tensor_op("tril", lambda ns, a: a.tril(), np.tril, (3, 4)),
    tensor_op("triangles_batched", lambda ns, a: a.triu(2) * 3 + a.tril(-1) + a.mT.triu(-1).mT,
              lambda a: np.triu(a, 2) * 3 + np.tril(a, -1) + np.swapaxes(np.triu(np.swapaxes(a, -1, -2), -1), -1, -2),
              (2, 3, 5)),
    tensor_op("softmax", lambda ns, a: a.softmax(-1), _softmax, (2, 5)),
    tensor_op("softmax_dim0", lambda ns, a: ns.softmax(a, dim=0), lambda a: _softmax(a, 0), (3, 2)),
    tensor_op("log_softmax", lambda ns, a: a.log_softmax(-1), lambda a: np.log(_softmax(a)), (2, 5)),
    tensor_op("cross_entropy", lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([1, 0, 4])),
              lambda a: -np.log(_softmax(a))[np.arange(3), [1, 0, 4]].mean(), (3, 5)),
    tensor_op("cross_entropy_ignore",
              lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([1, -1, 4, -1], device=a.device),
                                                           ignore_index=-1),
              lambda a: -np.log(_softmax(a))[[0, 2], [1, 4]].mean(), (4, 5)),
    # PyTorch's default ignore_index, -100: those rows add 0 and the mean is over the others
    # (the fused kernel skips them itself: the targets are never read on the host)
    tensor_op("cross_entropy_ignore_default",
              lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([-100, 3, 0, -100, 3], device=a.device)),
              lambda a: -np.log(_softmax(a))[[1, 2, 4], [3, 0, 3]].mean(), (5, 4)),
    tensor_op("cross_entropy_ignore_default_sum",
              lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([2, -100, 1], device=a.device),
                                                           reduction="sum"),
              lambda a: -np.log(_softmax(a))[[0, 2], [2, 1]].sum(), (3, 4)),
    # per row, weighted so that each row's gradient differs; ignored rows' losses are 0
    tensor_op("cross_entropy_ignore_default_none",
              lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([1, -100, 0, 2], device=a.device),
                                                           reduction="none") * ns.tensor(
                  [1.0, 2.0, 3.0, 4.0], dtype=a.dtype, device=a.device),
              lambda a: -np.log(_softmax(a))[[0, 1, 2, 3], [1, 0, 0, 2]] * [1.0, 0.0, 3.0, 4.0], (4, 3)),
    # every row ignored: the sum is 0 and so is its gradient (the mean, nan: test_stage2_norm_losses)
    tensor_op("cross_entropy_all_ignored_sum",
              lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([-100, -100], device=a.device),
                                                           reduction="sum") + a.sum(),
              lambda a: a.sum(), (2, 3)),
    # a class as ignore_index: its rows count for nothing, the others as usual
    tensor_op("cross_entropy_ignore_class",
              lambda ns, a: ns.nn.functional.cross_entropy(a, ns.tensor([0, 2, 0, 4], device=a.device),
                                                           ignore_index=0),
              lambda a: -np.log(_softmax(a))[[1, 3], [2, 4]].mean(), (4, 5)),
    # the LM head and its loss in one (F.linear_cross_entropy; device "cpu" runs it over
    # vocabulary chunks, the others as linear then cross_entropy): x (5, 3), weight (7, 3)
    tensor_op("linear_cross_entropy",
              lambda ns, x, w, b: ns.nn.functional.linear_cross_entropy(
                  x, w, ns.tensor([1, 6, -100, 3, 0], device=x.device), bias=b),
              lambda x, w, b: -np.log(_softmax(x @ w.T + b))[[0, 1, 3, 4], [1, 6, 3, 0]].mean(),
              (5, 3), (7, 3), (7,)),
    tensor_op("linear_cross_entropy_sum",
              lambda ns, x, w: ns.nn.functional.linear_cross_entropy(
                  x, w, ns.tensor([2, 0, 4, 2], device=x.device), ignore_index=None, reduction="sum"),
              lambda x, w: -np.log(_softmax(x @ w.T))[[0, 1, 2, 3], [2, 0, 4, 2]].sum(), (4, 2), (5, 2)),
    tensor_op("linear_cross_entropy_none",
              lambda ns, x, w: ns.nn.functional.linear_cross_entropy(
                  x, w, ns.tensor([1, 2, 0], device=x.device), ignore_index=2, reduction="none")
              * ns.tensor([1.0, 2.0, 3.0], dtype=x.dtype, device=x.device),
              lambda x, w: -np.log(_softmax(x @ w.T))[[0, 1, 2], [1, 2, 0]] * [1.0, 0.0, 3.0], (3, 4), (3, 4)),
    tensor_op("mse_loss", lambda ns, a, b: ns.nn.functional.mse_loss(a, b), lambda a, b: ((a - b) ** 2).mean(),
              (3, 4), (3, 4)),
    tensor_op("mse_loss_sum", lambda ns, a, b: ns.nn.functional.mse_loss(a, b, reduction="sum") / 3,
              lambda a, b: ((a - b) ** 2).sum() / 3, (2, 5), (2, 5)),
    tensor_op("mse_loss_none", lambda ns, a, b: ns.nn.functional.mse_loss(a, b, reduction="none") * a,
              lambda a, b: (a - b) ** 2 * a, (2, 3), (2, 3)),
    tensor_op("dropout", lambda ns, a: (ns.seed(7), ns.nn.functional.dropout(a, 0.4))[1], _dropout, (3, 5)),
    tensor_op("layer_norm", lambda ns, x, w, b: ns.nn.functional.layer_norm(x, 5, w, b), _layer_norm,
              (2, 5), (5,), (5,)),
    tensor_op("layer_norm_3d", lambda ns, x, w, b: ns.nn.functional.layer_norm(x, (4,), w, b), _layer_norm,
              (2, 3, 4), (4,), (4,)),
    tensor_op("layer_norm_plain", lambda ns, x: ns.nn.functional.layer_norm(x, 4), _layer_norm, (2, 3, 4)),
    tensor_op("layer_norm_bias_only", lambda ns, x, b: ns.nn.functional.layer_norm(x, 5, None, b),
              lambda x, b: _layer_norm(x, bias=b), (2, 5), (5,)),
    # the fused recurrent cells (recurrent_cells.py), hy and cy stacked: both gradients reach the cell
    tensor_op("lstm_cell", lambda ns, ig, hg, cx, ib, hb: ns.stack(ns.fused_lstm_cell(ig, hg, cx, ib, hb)), _lstm_cell,
              (2, 8), (2, 8), (2, 2), (8,), (8,)),
    tensor_op("lstm_cell_no_bias", lambda ns, ig, hg, cx: ns.stack(ns.fused_lstm_cell(ig, hg, cx)), _lstm_cell,
              (3, 4), (3, 4), (3, 1)),
    tensor_op("lstm_cell_hy", lambda ns, ig, hg, cx: ns._thnn_fused_lstm_cell(ig, hg, cx)[0],
              lambda ig, hg, cx: _lstm_cell(ig, hg, cx)[0], (2, 8), (2, 8), (2, 2)),
    tensor_op("gru_cell", lambda ns, ig, hg, hx, ib, hb: ns.fused_gru_cell(ig, hg, hx, ib, hb), _gru_cell,
              (2, 6), (2, 6), (2, 2), (6,), (6,)),
    tensor_op("gru_cell_no_bias", lambda ns, ig, hg, hx: ns._thnn_fused_gru_cell(ig, hg, hx)[0], _gru_cell,
              (3, 3), (3, 3), (3, 1)),
    tensor_op("attention", lambda ns, q, k, v: ns.nn.functional.scaled_dot_product_attention(q, k, v),
              _attention, (2, 3, 4), (2, 5, 4), (2, 5, 3)),
    tensor_op("attention_causal",
              lambda ns, q, k, v: ns.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
              lambda q, k, v: _attention(q, k, v, causal=True), (2, 1, 4, 3), (2, 2, 4, 3), (2, 4, 3)),
    tensor_op("attention_bool_mask",
              lambda ns, q, k, v: ns.nn.functional.scaled_dot_product_attention(
                  q, k, v, attn_mask=ns.tensor([[True, False, True], [True, True, False]], device=q.device)),
              lambda q, k, v: _softmax(np.where([[True, False, True], [True, True, False]],
                                                q @ _t(k) / math.sqrt(q.shape[-1]), -np.inf)) @ v,
              (2, 2), (3, 2), (3, 2)),
    tensor_op("attention_scale",
              lambda ns, q, k, v: ns.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.3),
              lambda q, k, v: _softmax(q @ _t(k) * 0.3) @ v, (2, 2), (3, 2), (3, 2)),
    tensor_op("gather_pairs", lambda ns, a: a[ns.arange(3), ns.tensor([1, 0, 3])],
              lambda a: a[np.arange(3), [1, 0, 3]], (3, 4)),
    # Advanced indexing (advanced_index.py, index_kernels.py, index_updates.py): index tensors
    # in dimensions apart (their shape first) and neighbouring (in place, broadcast), a mask
    # over two dimensions; index_put adding repeats up, writing, and the writes along one
    # dimension; the gathers take and take_along_dim, masked_select and masked_scatter
    tensor_op("advanced_index_reads",
              lambda ns, a: ns.cat([a[ns.tensor([0, 2, 0], device=a.device), :, ns.tensor([1, 1, 3], device=a.device)]
                                    .reshape(-1),
                                    a[:, ns.tensor([[1, 0]], device=a.device), ns.tensor([[2], [4]], device=a.device)]
                                    .reshape(-1),
                                    a[ns.tensor(MASK_34, device=a.device)].reshape(-1)]),
              lambda a: np.concatenate([a[[0, 2, 0], :, [1, 1, 3]].ravel(), a[:, [[1, 0]], [[2], [4]]].ravel(),
                                        a[MASK_34].ravel()]),
              (3, 4, 5)),
    tensor_op("index_writes",
              lambda ns, a, v, c: ns.cat([
                  ns.index_put(a, (ns.tensor([0, 2, 0], device=a.device), ns.tensor([1, 1, 1], device=a.device)), v,
                               accumulate=True).reshape(-1),
                  a.index_put((ns.tensor([[2], [0]], device=a.device), ns.tensor([3, 0], device=a.device)), v[:2])
                  .reshape(-1),
                  a.index_copy(1, ns.tensor([3, 0], device=a.device), ns.stack([v, 2 * v], 1)).reshape(-1),
                  a.index_add(2, ns.tensor([4, 4, 1], device=a.device), 0.5 * a[..., :3], alpha=2).reshape(-1),
                  a.index_fill(0, ns.tensor([1], device=a.device), c).reshape(-1)]),
              _index_writes, (3, 4, 5), (3, 5), ()),
    tensor_op("take_and_masks",
              lambda ns, a, s: ns.cat([
                  ns.take(a, ns.tensor([[0, -1], [7, 7]], device=a.device)).reshape(-1),
                  ns.take_along_dim(a, ns.tensor([[[4, 0], [1, 1], [0, 2], [3, 4]]], device=a.device), 2).reshape(-1),
                  ns.masked_select(a, ns.tensor(MASK_5, device=a.device)),
                  a.masked_scatter(ns.tensor(MASK_45, device=a.device), s).reshape(-1)]),
              lambda a, s: np.concatenate([
                  a.ravel()[[[0, -1], [7, 7]]].ravel(),
                  np.take_along_axis(a, np.broadcast_to([[[4, 0], [1, 1], [0, 2], [3, 4]]], (3, 4, 2)), 2).ravel(),
                  a[np.broadcast_to(MASK_5, a.shape)], _masked_scatter(a, MASK_45, s).ravel()]),
              (3, 4, 5), (2, 10)),
    # PyTorch's surface a learner reaches for (statistics.py, clamp.py, masks.py, concat.py,
    # matmul.py, torch_compat.py): composites, grouped few to a row to keep the suite quick
    tensor_op("surface_var_std_norm",
              lambda ns, a: (a.var(dim=1, keepdim=True) * a.std(correction=0) + a.norm(dim=0)
                             + a.norm("fro") * a.norm(p=1, dim=1, keepdim=True) + a.norm(p=math.inf)
                             + ns.var(a, 0, False).sum() + ns.std(a) + a.norm(p=3)),
              lambda a: (a.var(1, ddof=1, keepdims=True) * a.std() + np.linalg.norm(a, axis=0)
                         + np.linalg.norm(a) * np.abs(a).sum(1, keepdims=True) + np.abs(a).max()
                         + a.var(0).sum() + a.std(ddof=1) + (np.abs(a) ** 3).sum() ** (1 / 3)),
              (2, 3), domains=(AWAY,)),
    tensor_op("surface_clamp_masks",
              lambda ns, a, b: (a.clamp(-1, 1) + ns.clamp(a, min=b) * ns.clamp(a, max=0.5) + ns.triu(a, 1)
                                - ns.tril(a, -1) + ns.masked_fill(a, a > 0.5, 2.0)),
              lambda a, b: (np.clip(a, -1, 1) + np.maximum(a, b) * np.minimum(a, 0.5) + np.triu(a, 1)
                            - np.tril(a, -1) + np.where(a > 0.5, 2.0, a)),
              (3, 4), (4,)),
    tensor_op("surface_shapes",
              lambda ns, a, b: (ns.stack(list(ns.chunk(a.repeat(1, 2), 2, dim=1)) + [b.t().mT], dim=0)
                                .index_select(2, ns.tensor([2, 0, 2], device=a.device))
                                * a[:, :1].expand_as(b).view_as(ns.zeros(1, 2, 3))),
              lambda a, b: (np.stack([a, a, b])[:, :, [2, 0, 2]]
                            * np.broadcast_to(a[:, :1], (2, 3)).reshape(1, 2, 3)),
              (2, 3), (2, 3)),
    tensor_op("surface_repeat", lambda ns, a: a.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3)), (2, 2)),
    tensor_op("surface_bmm_outer", lambda ns, a, b, c, d: ns.bmm(a, b) + ns.outer(c, d),
              lambda a, b, c, d: a @ b + np.outer(c, d), (2, 3, 2), (2, 2, 4), (3,), (4,)),
    tensor_op("surface_functional",
              lambda ns, a, b: (ns.sqrt(ns.abs(a)) * ns.tanh(a) + ns.log(ns.exp(a) + 1) - ns.sigmoid(b)
                                + ns.maximum(a, b) * ns.minimum(a, b) + ns.max(a, b) + ns.min(b, a)
                                + ns.sum(a, dim=1, keepdim=True) + ns.mean(b) + ns.max(a, dim=0).values
                                + ns.min(b) + ns.unsqueeze(ns.squeeze(ns.flatten(a.unsqueeze(0))), 0).reshape(2, 3)),
              lambda a, b: (np.sqrt(np.abs(a)) * np.tanh(a) + np.log(np.exp(a) + 1) - _sigmoid(b)
                            + np.maximum(a, b) * np.minimum(a, b) + np.maximum(a, b) + np.minimum(b, a)
                            + a.sum(1, keepdims=True) + b.mean() + a.max(0) + b.min() + a),
              (2, 3), (2, 3), domains=(AWAY, AWAY)),
    # products and linear algebra (products.py, cdist.py, covariance.py, linalg/): matmuls and
    # broadcast products; the factorizations' formulas (det, inv, solve, cholesky, qr, eigh, svd) on
    # well-conditioned matrices (diagonally dominant, or eigen/singular values kept apart)
    tensor_op("products_vectors",
              lambda ns, m, v, w, c: (ns.addmm(c, m, m.mT, beta=0.5, alpha=2) + ns.addr(c, w, w, alpha=0.3)
                                      + ns.addmv(w, m, v, beta=2).unsqueeze(-1) * ns.dot(v, v) + ns.inner(m, m)
                                      + ns.mv(m, v).unsqueeze(0) + ns.ger(w, w) + v.vdot(v) + m.trace()),
              lambda m, v, w, c: (0.5 * c + 2 * m @ m.T + c + 0.3 * np.outer(w, w) + (2 * w + m @ v)[:, None] * (v @ v)
                                  + m @ m.T + (m @ v)[None] + np.outer(w, w) + v @ v + np.trace(m)),
              (2, 3), (3,), (2,), (2, 2)),
    tensor_op("products_batches",
              lambda ns, b1, b2, c, d: (ns.addbmm(c, b1, b2, alpha=0.5).sum() + ns.baddbmm(d, b1, b2, beta=3)
                                        + ns.tensordot(b1, b2, dims=([0, 2], [0, 1])).sum()
                                        + ns.tensordot(c, b2, 1).sum() + ns.kron(c, b1[0]).sum()),
              lambda b1, b2, c, d: ((c + 0.5 * np.einsum("bij,bjk->ik", b1, b2)).sum() + 3 * d + b1 @ b2
                                    + np.tensordot(b1, b2, ([0, 2], [0, 1])).sum() + np.tensordot(c, b2, 1).sum()
                                    + np.kron(c, b1[0]).sum()),
              (2, 2, 3), (2, 3, 2), (2, 2), (2, 2, 2)),
    tensor_op("products_cross_power_cdist_cov",
              lambda ns, a, b, m: (ns.cross(a, b, dim=1).sum() + ns.linalg.cross(a.mT, b.mT, dim=0).sum()
                                   + ns.matrix_power(m, 3).sum() + ns.chain_matmul(m, m.mT, m).sum()
                                   + ns.cdist(a, b).sum() + ns.cdist(a, b, p=1).sum() + ns.cdist(a.mT, b.mT, p=3).sum()
                                   + ns.cdist(a, b, compute_mode="use_mm_for_euclid_dist").sum()
                                   + ns.cov(m).sum() + ns.corrcoef(a).sum()),
              lambda a, b, m: (np.cross(a, b, axis=1).sum() + np.cross(a.T, b.T, axis=0).sum()
                               + np.linalg.matrix_power(m, 3).sum() + (m @ m.T @ m).sum()
                               + 2 * _cdist(a, b, 2).sum() + _cdist(a, b, 1).sum() + _cdist(a.T, b.T, 3).sum()
                               + np.cov(m).sum() + np.corrcoef(a).sum()),
              (4, 3), (4, 3), (3, 3)),
    tensor_op("linalg_lu",
              lambda ns, a, b: ns.cat([t.reshape(-1) for t in (
                  ns.linalg.det(a + 8 * _eye(ns, a, 3)), ns.linalg.slogdet(a + 8 * _eye(ns, a, 3))[1],
                  ns.linalg.inv(a + 8 * _eye(ns, a, 3)), ns.linalg.solve(a + 8 * _eye(ns, a, 3), b),
                  ns.linalg.solve(a[0] + 8 * _eye(ns, a, 3), b[0, :, 0]))]),
              lambda a, b: np.concatenate([t.ravel() for t in (
                  np.linalg.det(a + 8 * np.eye(3)), np.linalg.slogdet(a + 8 * np.eye(3))[1],
                  np.linalg.inv(a + 8 * np.eye(3)), np.linalg.solve(a + 8 * np.eye(3), b),
                  np.linalg.solve(a[0] + 8 * np.eye(3), b[0, :, 0]))]),
              (2, 3, 3), (2, 3, 2)),
    tensor_op("linalg_cholesky_triangular",
              lambda ns, a, b: (ns.linalg.cholesky(a @ a.mT + _eye(ns, a, 3)).sum(-1)
                                + ns.linalg.solve_triangular(a + 8 * _eye(ns, a, 3), b, upper=True).sum(-1)
                                + ns.linalg.solve_triangular(a + 8 * _eye(ns, a, 3), b, upper=False, unitriangular=True).sum(-1)),
              lambda a, b: (np.linalg.cholesky(a @ a.T + np.eye(3)).sum(-1)
                            + np.linalg.solve(np.triu(a + 8 * np.eye(3)), b).sum(-1)
                            + np.linalg.solve(np.tril(a, -1) + np.eye(3), b).sum(-1)),
              (3, 3), (3, 2)),
    tensor_op("linalg_qr",
              lambda ns, a, w: ns.cat([t.reshape(-1) for t in (*ns.linalg.qr(a + _eye(ns, a, 4, 3) * 8), *ns.linalg.qr(w))]),
              lambda a, w: np.concatenate([t.ravel() for t in (*np.linalg.qr(a + np.eye(4, 3) * 8), *np.linalg.qr(w))]),
              (4, 3), (2, 3)),
    tensor_op("linalg_eigh_svd",      # sign-free functions of the vectors: V * V, U * U
              lambda ns, a, m: ns.cat([t.reshape(-1) for t in (
                  *(lambda L, V: (L, V * V))(*ns.linalg.eigh(0.3 * (a + a.mT) + _spread(ns, a, 3))),
                  *(lambda U, S, Vh: (U * U, S, Vh * Vh))(*ns.linalg.svd(0.3 * m + _spread(ns, m, 3, 2), False)),
                  *(lambda U, S, Vh: (U * U, S, Vh * Vh))(*ns.linalg.svd(0.3 * m.mT + _spread(ns, m, 2, 3), False)))]),
              lambda a, m: np.concatenate([t.ravel() for t in (
                  *(lambda L, V: (L, V * V))(*np.linalg.eigh(0.3 * (a + a.T) + _spread(np, a, 3))),
                  *(lambda U, S, Vh: (U * U, S, Vh * Vh))(*np.linalg.svd(0.3 * m + _spread(np, m, 3, 2), False)),
                  *(lambda U, S, Vh: (U * U, S, Vh * Vh))(*np.linalg.svd(0.3 * m.T + _spread(np, m, 2, 3), False)))]),
              (3, 3), (3, 2)),
    tensor_op("linalg_norms_pinv_lstsq_exp",
              lambda ns, m, b, a: (ns.linalg.matrix_norm(m) + ns.linalg.matrix_norm(m, 1) + ns.linalg.norm(m, float("inf"))
                                   + ns.linalg.norm(b) + ns.linalg.vector_norm(m, 3, dim=0).sum()
                                   + ns.linalg.pinv(0.3 * m + _spread(ns, m, 3, 2)).sum()
                                   + ns.linalg.lstsq(0.3 * m + _spread(ns, m, 3, 2), b).solution.sum()
                                   + ns.linalg.matrix_exp(0.5 * a).sum() + ns.linalg.multi_dot([m, a, a.mT, m.mT]).sum()),
              lambda m, b, a: (np.linalg.norm(m) + np.linalg.norm(m, 1) + np.linalg.norm(m, np.inf) + np.linalg.norm(b)
                               + (np.abs(m) ** 3).sum(0).__pow__(1 / 3).sum()
                               + np.linalg.pinv(0.3 * m + _spread(np, m, 3, 2)).sum()
                               + np.linalg.lstsq(0.3 * m + _spread(np, m, 3, 2), b, rcond=None)[0].sum()
                               + _expm(0.5 * a).sum() + (m @ a @ a.T @ m.T).sum()),
              (3, 2), (3, 2), (2, 2)),
    # element-wise math and more reductions (math_functions.py, more_reductions.py), a few to a row
    tensor_op("math_trigonometry",
              lambda ns, a, u: (ns.tan(a * 0.4) + u.asin() + ns.arccos(u) + ns.atan(a) + a.sinh() + ns.cosh(a)
                                + ns.arcsinh(a) + (2 + a.abs()).acosh() + ns.atanh(u) + ns.atan2(a, u)
                                + a.hypot(u) + ns.sinc(a) + ns.deg2rad(a) * ns.rad2deg(u)),
              lambda a, u: (np.tan(a * 0.4) + np.arcsin(u) + np.arccos(u) + np.arctan(a) + np.sinh(a) + np.cosh(a)
                            + np.arcsinh(a) + np.arccosh(2 + np.abs(a)) + np.arctanh(u) + np.arctan2(a, u)
                            + np.hypot(a, u) + np.sinc(a) + np.deg2rad(a) * np.rad2deg(u)),
              (2, 3), (2, 3), domains=(AWAY, UNIT)),
    tensor_op("math_logs_and_special",
              lambda ns, p, a, u: (ns.log2(p) + p.log10() + ns.exp2(a) + ns.erfc(a) + ns.erfinv(u) + ns.lgamma(p)
                                   + p.digamma() + ns.polygamma(1, p) + ns.polygamma(2, p + 1) + ns.i0(a)
                                   + ns.special.i1(a) + ns.logit(u * 0.4 + 0.5) + ns.xlogy(a, p)
                                   + ns.special.xlog1py(a, p) + ns.logaddexp(a, u) + ns.logaddexp2(u, a)
                                   + ns.copysign(a, u) + ns.fmod(a, 0.7) + ns.frac(a) + ns.float_power(p, a)
                                   + ns.ldexp(a, ns.tensor([1.0, -2.0, 3.0], device=a.device))
                                   + ns.special.entr(p) + ns.special.ndtr(a)),
              lambda p, a, u: (np.log2(p) + np.log10(p) + np.exp2(a) + _erfc(a) + _vectorized("erfinv")(u)
                               + _lgamma(p) + _vectorized("digamma")(p) + _vectorized("trigamma")(p)
                               + _vectorized("polygamma")(2.0, p + 1) + np.i0(a) + _vectorized("bessel_i1")(a)
                               + np.log((u * 0.4 + 0.5) / (1 - (u * 0.4 + 0.5))) + a * np.log(p)
                               + a * np.log1p(p) + np.logaddexp(a, u) + np.logaddexp2(u, a) + np.copysign(a, u)
                               + np.fmod(a, 0.7) + (a - np.trunc(a)) + p ** a + a * 2.0 ** np.array([1, -2, 3])
                               - p * np.log(p) + 0.5 * _erfc(-a / math.sqrt(2))),
              (2, 3), (2, 3), (2, 3), domains=(POSITIVE, AWAY, UNIT)),
    tensor_op("math_reductions",
              lambda ns, a: ns.cat([a.prod().reshape(1), ns.prod(a, 1), a.prod(0, keepdim=True).reshape(-1),
                                    ns.nansum(a, 0), a.nanmean(1), ns.aminmax(a, dim=0).max,
                                    ns.var_mean(a, 1)[0], ns.std_mean(a)[1].reshape(1),
                                    ns.quantile(a, ns.tensor([0.2, 0.5], dtype=a.dtype, device=a.device), dim=1)
                                    .reshape(-1), a.nanquantile(0.7, dim=0, interpolation="midpoint"),
                                    ns.diff(a, dim=1).reshape(-1), a.diff(2, 0, append=a[:1]).reshape(-1),
                                    ns.logsumexp(a, 1)]),
              lambda a: np.concatenate([[a.prod()], a.prod(1), a.prod(0), a.sum(0), a.mean(1), a.max(0),
                                        a.var(1, ddof=1), [a.mean()], np.quantile(a, [0.2, 0.5], axis=1).ravel(),
                                        (np.quantile(a, 0.7, axis=0, method="lower")
                                         + np.quantile(a, 0.7, axis=0, method="higher")) / 2,
                                        np.diff(a, axis=1).ravel(), np.diff(np.concatenate([a, a[:1]]), 2, 0).ravel(),
                                        np.log(np.exp(a).sum(1))]),
              (3, 4), domains=(AWAY,)),
    tensor_op("math_prod_zeros",        # one zero in a row, two in another, none in the third
              lambda ns, a: (a * ns.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]], dtype=a.dtype,
                                           device=a.device)).prod(1),
              lambda a: (a * np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])).prod(1), (3, 3)),
]


# The surface sweep's area D (shapes and views, reductions by index): tests/optable_shapes.py
from . import optable_shapes  # noqa: E402
TENSOR_OPS += [tensor_op(name, apply, reference, *shapes) for name, apply, reference, *shapes in optable_shapes.ROWS]


# Layouts an op must not care about: the same values as a transposed view and as a view
# with an offset and a step (made inside the function, so gradients flow back to the leaf).
LAYOUTS = {
    "transposed": lambda x: x.T.contiguous().T,
    "strided": lambda x: x.unsqueeze(-1).expand(*x.shape, 2).contiguous()[..., 1],
}

# PyTorch's other nn functions (activations, losses, distances, pools, layers): their rows
# live in nn_surface_rows.py, against numpy definitions of their own
from . import nn_surface_rows  # noqa: E402
TENSOR_OPS += nn_surface_rows.rows(tensor_op, ANY, POSITIVE, AWAY)


def ops_for(engine):
    ops = [op for op in OPS if op.stages is None or engine.stage in op.stages]
    return ops if engine.scalar_only else ops + TENSOR_OPS


# ---- the primitives and fused kernels (stage2_tensor/ops.py): numpy's answer to each -------

def erf(x):
    return np.vectorize(math.erf, otypes=[float])(x)


def normal_pdf(x):
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def gelu_tanh_z(x):
    """GPT-2's GELU 0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3), is x sigmoid(z)
    with z = 2u, as the kernels compute it (the same number)."""
    return 2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)


def gelu_tanh_grad_terms(x):
    """d/dx x sigmoid(z) = s + x s (1 - s) dz/dx, s = sigmoid(z): its two terms."""
    z = gelu_tanh_z(x)
    s = _sigmoid(z)
    return s, x * s * _sigmoid(-z) * 2 * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)


class Reference(NamedTuple):
    """A primitive in float64 numpy. ``terms``: the magnitudes of the terms its formula adds,
    which bound a kernel's rounding error (test_stage3_elementwise's error_bound; None: the
    value itself). ``positive``: defined for a positive first operand (log, sqrt, powers).
    ``vectorizes``: False where the kernel calls a libm function that gcc cannot vectorize
    (logf), so a loop calling it runs scalar (test_stage3_codegen groups ops by this)."""
    value: Callable
    terms: Optional[Callable] = None
    positive: bool = False
    vectorizes: bool = True


SQRT2 = math.sqrt(2)
PRIMITIVES = {
    "neg": Reference(np.negative), "exp": Reference(np.exp),
    "log": Reference(np.log, positive=True, vectorizes=False),
    "sqrt": Reference(np.sqrt, positive=True), "abs": Reference(np.abs),
    "relu": Reference(lambda x: np.maximum(x, 0.0)), "sigmoid": Reference(_sigmoid),
    "erf": Reference(erf, vectorizes=False),
    "tanh": Reference(np.tanh), "sign": Reference(np.sign),
    "log1p": Reference(np.log1p, positive=True, vectorizes=False),
    "expm1": Reference(np.expm1, vectorizes=False),
    "sin": Reference(np.sin, vectorizes=False), "cos": Reference(np.cos, vectorizes=False),
    "floor": Reference(np.floor), "ceil": Reference(np.ceil), "trunc": Reference(np.trunc),
    "round": Reference(np.round),
    # x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), as PyTorch and the float64 kernel compute it:
    # for x < 0, 1 + erf cancels (float32's vmath.h computes the tail itself, more accurately)
    "gelu": Reference(lambda x: 0.5 * x * (1 + erf(x / SQRT2)),
                      lambda x: (0.5 * x, 0.5 * x * erf(x / SQRT2))),
    "gelu_grad": Reference(lambda x: 0.5 * (1 + erf(x / SQRT2)) + x * normal_pdf(x),
                           lambda x: (0.5, 0.5 * erf(x / SQRT2), x * normal_pdf(x) * (1 + 0.5 * x * x))),
    "gelu_tanh": Reference(lambda x: x * _sigmoid(gelu_tanh_z(x)),
                           lambda x: (x * _sigmoid(gelu_tanh_z(x)) * (1 + np.abs(gelu_tanh_z(x))),)),
    "gelu_tanh_grad": Reference(lambda x: sum(gelu_tanh_grad_terms(x)),
                                lambda x: [t * (1 + np.abs(gelu_tanh_z(x))) for t in gelu_tanh_grad_terms(x)]),
    "softplus": Reference(lambda x: np.where(x > 20, x, np.log1p(np.exp(x))), vectorizes=False),
    "add": Reference(np.add), "sub": Reference(np.subtract), "mul": Reference(np.multiply),
    "div": Reference(np.divide), "pow": Reference(np.power, positive=True),
    "maximum": Reference(np.maximum), "minimum": Reference(np.minimum),
    "pow_grad": Reference(lambda a, b: np.where(b == 0, 0.0, b * a ** (b - 1)), positive=True),
    "relu_backward": Reference(lambda g, x: np.where(x > 0, g, 0.0)),
    "eq": Reference(np.equal), "ne": Reference(np.not_equal), "lt": Reference(np.less),
    "le": Reference(np.less_equal), "gt": Reference(np.greater), "ge": Reference(np.greater_equal),
    "sum": Reference(np.sum), "max": Reference(np.max), "min": Reference(np.min),
    "argmax": Reference(np.argmax), "argmin": Reference(np.argmin),
}


# ---- ops.py's MATH: numpy's functions, math's (lgamma, erfc), and for digamma, polygamma,
# erfinv and i1 their declared formulas (tests/test_stage2_math.py checks those against
# known values and identities, so a device here is held to a checked formula)
def _vectorized(name):
    from stage2_tensor import ops as declared
    return np.vectorize(getattr(declared, name), otypes=[float])


def _lgamma(x):
    return np.vectorize(lambda v: math.lgamma(v) if not (v <= 0 and v == math.floor(v)) else math.inf,
                        otypes=[float])(x)


def _erfc(x):
    return np.vectorize(math.erfc, otypes=[float])(x)


def _integers_only(f):
    """A bitwise op's answer: f on integers, nan on floats (as the kernels, which stage2 never
    gives floats)."""
    def reference(*arrays):
        if all(np.asarray(a).dtype.kind in "iub" for a in arrays):
            return f(*arrays)
        return np.full(np.broadcast(*arrays).shape, np.nan)
    return reference


def _polygamma(n, x):
    return _vectorized("polygamma")(n, x)


PRIMITIVES.update({
    "tan": Reference(np.tan, vectorizes=False), "asin": Reference(np.arcsin, vectorizes=False),
    "acos": Reference(np.arccos, vectorizes=False), "atan": Reference(np.arctan, vectorizes=False),
    "sinh": Reference(np.sinh, vectorizes=False), "cosh": Reference(np.cosh, vectorizes=False),
    "asinh": Reference(np.arcsinh, vectorizes=False), "acosh": Reference(np.arccosh, positive=True, vectorizes=False),
    "atanh": Reference(np.arctanh, vectorizes=False), "log2": Reference(np.log2, positive=True, vectorizes=False),
    "log10": Reference(np.log10, positive=True, vectorizes=False), "exp2": Reference(np.exp2, vectorizes=False),
    "erfc": Reference(_erfc, vectorizes=False), "erfinv": Reference(_vectorized("erfinv"), vectorizes=False),
    # near its zeros (1, 2, ...) lgamma's value is far smaller than its terms (math's and libm's
    # formulas differ there by an ulp of 1)
    "lgamma": Reference(_lgamma, lambda x: (_lgamma(x), np.ones_like(x)), vectorizes=False), "digamma": Reference(_vectorized("digamma"), vectorizes=False),
    "i0": Reference(np.i0, vectorizes=False), "i1": Reference(_vectorized("bessel_i1"), vectorizes=False),
    "bitwise_not": Reference(_integers_only(np.invert)),
    "atan2": Reference(np.arctan2), "fmod": Reference(np.fmod), "copysign": Reference(np.copysign),
    "hypot": Reference(np.hypot), "polygamma": Reference(_polygamma),
    "bitwise_and": Reference(_integers_only(np.bitwise_and)), "bitwise_or": Reference(_integers_only(np.bitwise_or)),
    "bitwise_xor": Reference(_integers_only(np.bitwise_xor)),
    "bitwise_left_shift": Reference(_integers_only(np.left_shift)),
    "bitwise_right_shift": Reference(_integers_only(np.right_shift)),
    "gcd": Reference(_integers_only(np.gcd)), "lcm": Reference(_integers_only(np.lcm)),
})
