"""The op table's rows for PyTorch's other nn functions (activations, margin and likelihood
losses, distances, pools, layers): each against its definition written in numpy, a few
functions to a row to keep the suite quick. optable.py adds ``rows(...)`` to its tensor
ops; this file takes the row maker and domains from it, so it imports nothing of it."""
import math

import numpy as np

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _piecewise(x):
    """relu6, hardtanh, hardsigmoid, hardswish, softshrink, hardshrink, threshold and rrelu
    (evaluation: the mean slope) by their definitions, one after another."""
    return np.concatenate([
        np.minimum(np.maximum(2 * x + 3, 0), 6),
        np.clip(x, -1.0, 2.0),
        np.clip(2 * x / 6 + 0.5, 0, 1),
        2 * x * np.clip(2 * x + 3, 0, 6) / 6,
        np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0.0)),
        np.where(np.abs(x) > 0.7, x, 0.0),
        np.where(x > 0.3, x, -2.0),
        np.where(x >= 0, x, x * (1 / 8 + 1 / 3) / 2),
    ]).ravel()


def _smooth(x):
    """mish, selu, celu, softsign, logsigmoid, tanhshrink, softmin and glu."""
    return np.concatenate([
        (x * np.tanh(_softplus(x))).ravel(),
        (SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1))).ravel(),
        np.where(x > 0, x, 0.7 * (np.exp(x / 0.7) - 1)).ravel(),
        (x / (1 + np.abs(x))).ravel(),
        (-_softplus(-x)).ravel(),
        (x - np.tanh(x)).ravel(),
        _softmax(-x, 1).ravel(),
        (x[:, :2] * _sigmoid(x[:, 2:])).ravel(),
    ])


def _lrn(x, size, alpha, beta, k):
    """Each element over (k + alpha / size * the sum of squares of its channel window)^beta,
    the window size // 2 channels before and (size - 1) // 2 after, zeros outside."""
    c = x.shape[1]
    out = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        out[:, i] = x[:, i] / (k + alpha / size * (x[:, lo:hi] ** 2).sum(1)) ** beta
    return out


def _cos(a, b, eps=1e-8):
    na = np.maximum(np.linalg.norm(a, axis=-1), eps)
    nb = np.maximum(np.linalg.norm(b, axis=-1), eps)
    return (a * b).sum(-1) / (na * nb)


def _pdistance(a, b, p=2.0, eps=1e-6):
    d = np.abs(a - b + eps)
    return d.max(-1) if p == math.inf else (d ** p).sum(-1) ** (1 / p)


Y4 = np.array([1.0, -1.0, -1.0, 1.0])
CLASSES = [2, 0, 3, 1]
LABELS = [[0, 3, -1, 2], [1, -1, 0, 0], [3, 2, 1, 0], [-1, 1, 2, 3]]


def _pair_losses(a, b, c):
    """margin_ranking, hinge_embedding, cosine_embedding, triplet_margin (twice) and
    soft_margin of (4, 4) inputs, by their definitions, each a scalar."""
    y = Y4
    ranking = np.maximum(0, -y * (a[:, 0] - b[:, 0]) + 0.3).mean()
    ys = np.sign(c)
    hinge = np.where(ys == 1, a, np.maximum(0, 0.7 - a)).sum()
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    cosine = np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.2)).mean()
    triplet = np.maximum(0, 2.0 + _pdistance(a, b) - _pdistance(a, c)).mean()
    swapped = np.maximum(0, 2.0 + _pdistance(a, b, 1) - np.minimum(_pdistance(a, c, 1), _pdistance(b, c, 1))).sum()
    soft = np.log1p(np.exp(-ys * a)).mean()
    return np.array([ranking, hinge, cosine, triplet, swapped, soft])


def _class_losses(a, b):
    """multilabel_soft_margin, multi_margin (twice) and multilabel_margin of (4, 4) inputs."""
    w = np.array([0.5, 1.0, 1.5, 2.0])
    t = (b > 0) * 1.0
    multilabel_soft = (-(t * np.log(_sigmoid(a)) + (1 - t) * np.log(_sigmoid(-a))) * w).mean(1).mean()
    multi, multi2 = [], []
    for n, k in enumerate(CLASSES):
        h = np.maximum(0, 1.0 - a[n, k] + a[n])
        h[k] = 0
        multi.append(h.sum() / 4)
        h2 = np.maximum(0, 0.5 - a[n, k] + a[n]) ** 2 * w[k]
        h2[k] = 0
        multi2.append(h2.sum() / 4)
    multilabel = []
    for n, row in enumerate(LABELS):
        listed = []
        for k in row:
            if k == -1:
                break
            listed.append(k)
        others = [i for i in range(4) if i not in listed]
        multilabel.append(sum(max(0, 1 - (a[n, j] - a[n, i])) for j in listed for i in others) / 4)
    return np.array([multilabel_soft, np.mean(multi), np.sum(multi2), np.mean(multilabel)])


def _xlogy(t):
    return np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)


def _likelihood_losses(a, b, v):
    """kl_div (a probability target, a log target, batchmean), poisson_nll_loss (log input,
    rate input with Stirling's term) and gaussian_nll_loss (full and shared variances)."""
    la = a - np.log(np.exp(a).sum(1, keepdims=True))
    pb = _softmax(b, 1)
    lb = np.log(pb)
    kl = (_xlogy(pb) - pb * la).mean()
    kl_log = (np.exp(lb) * (lb - la)).sum() / a.shape[0]
    counts = np.abs(b) * 3
    poisson = (np.exp(a) - counts * a).mean()
    rate = v
    stirling = np.where(counts > 1, counts * np.log(np.where(counts > 1, counts, 1)) - counts
                        + 0.5 * np.log(2 * math.pi * np.where(counts > 1, counts, 1)), 0.0)
    poisson_full = (rate - counts * np.log(rate + 1e-8) + stirling).sum()
    var = np.maximum(v, 1e-6)
    gauss = (0.5 * (np.log(var) + (a - b) ** 2 / var)).mean()
    shared = np.maximum(v[:, :1], 1e-6)
    gauss_full = (0.5 * (np.log(shared) + (a - b) ** 2 / shared) + 0.5 * math.log(2 * math.pi)).sum()
    return np.array([kl, kl_log, poisson, poisson_full, gauss, gauss_full])


def _distances(a, b):
    """cosine_similarity along each dimension, pairwise_distance (p = 2, 3, inf) and pdist."""
    n = a.shape[0]
    pdist = [np.linalg.norm(a[i] - a[j]) for i in range(n) for j in range(i + 1, n)]
    pdist1 = [np.abs(a[i] - a[j]).sum() for i in range(n) for j in range(i + 1, n)]
    return np.concatenate([_cos(a, b), _cos(a.T, b.T), _pdistance(a, b), _pdistance(a, b, 3.0),
                           _pdistance(a, b, math.inf), pdist, pdist1])


def _adaptive(x, out, reduce):
    """Adaptive pooling of the last dimension: window i of o over s is [i s // o, ceil((i + 1) s / o))."""
    s = x.shape[-1]
    return np.stack([reduce(x[..., i * s // out:-(-(i + 1) * s // out)], axis=-1) for i in range(out)], -1)


def _windows(x, k, stride, reduce):
    """Pooling of the trailing len(k) dimensions, no padding, by its definition."""
    n = len(k)
    out = [(x.shape[-n + d] - k[d]) // stride[d] + 1 for d in range(n)]
    y = np.zeros(x.shape[:-n] + tuple(out))
    for pos in np.ndindex(*out):
        window = x[(Ellipsis,) + tuple(slice(p * stride[d], p * stride[d] + k[d]) for d, p in enumerate(pos))]
        y[(Ellipsis,) + pos] = reduce(window.reshape(*x.shape[:-n], -1), axis=-1)
    return y


def _unpool2(x):
    """max_unpool2d(max_pool2d(x, 2)): each window's maximum in place, zeros elsewhere."""
    y = np.zeros_like(x)
    H, W = x.shape[-2:]
    for i in range(0, H - 1, 2):
        for j in range(0, W - 1, 2):
            w = x[..., i:i + 2, j:j + 2].reshape(*x.shape[:-2], 4)
            k = w.argmax(-1)
            for pos in np.ndindex(*x.shape[:-2]):
                y[pos + (i + k[pos] // 2, j + k[pos] % 2)] = w[pos][k[pos]]
    return y


def _pools(x):
    """adaptive average and max pools (1-d), lp_pool2d (p = 2) and max_unpool2d of max_pool2d."""
    return np.concatenate([
        _adaptive(x.reshape(1, 2, 8), 3, np.mean).ravel(),
        _adaptive(x.reshape(1, 2, 8), 3, np.max).ravel(),
        np.sqrt(_windows(x.reshape(1, 1, 4, 4) ** 2, (2, 3), (1, 1), np.sum)).ravel(),
        _unpool2(x.reshape(1, 1, 4, 4)).ravel(),
    ])


def _affine_grid(theta, h, w, align_corners):
    def steps(n):
        s = np.linspace(-1, 1, n) if n > 1 else np.zeros(1)
        return s if align_corners else s * (n - 1) / n
    ys, xs = np.meshgrid(steps(h), steps(w), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1)                   # (h, w, 3)
    return np.einsum("hwk,nck->nhwc", base, theta)


BAG_INPUT, BAG_OFFSETS = [1, 2, 4, 4, 3, 0, 5, 5, 2], [0, 2, 2, 7]
BAG_WEIGHTS = [[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]]


def _embedding_bag(w):
    """sum, mean and max of the bags [1, 2], [], [4, 4, 3, 0, 5], [5, 2] of table w, and a
    2-d input's two bags with per-sample weights in sum mode."""
    bags = [[1, 2], [], [4, 4, 3, 0, 5], [5, 2]]             # BAG_INPUT cut at BAG_OFFSETS
    out = []
    for reduce in (np.sum, np.mean, np.max):
        out += [reduce(w[b], 0) if b else np.zeros(w.shape[1]) for b in bags]
    weights = np.array(BAG_WEIGHTS)
    out += [(w[[0, 2, 2]] * weights[0][:, None]).sum(0), (w[[3, 1, 5]] * weights[1][:, None]).sum(0)]
    return np.concatenate(out)


def _conv_transpose3d(x, w, stride):
    """Each input value times the kernel, added into the output at stride * position."""
    N, C, D, H, W = x.shape
    O, k = w.shape[1], w.shape[2:]
    y = np.zeros((N, O, (D - 1) * stride + k[0], (H - 1) * stride + k[1], (W - 1) * stride + k[2]))
    for i, j, m in np.ndindex(D, H, W):
        y[:, :, i * stride:i * stride + k[0], j * stride:j * stride + k[1], m * stride:m * stride + k[2]] += \
            np.einsum("nc,codhw->nodhw", x[:, :, i, j, m], w)
    return y


def _layers(x1, x2, w, b, theta):
    """bilinear, channel_shuffle and affine_grid (both alignments)."""
    shuffled = x1[:, [0, 2, 1, 3]]                      # 4 channels in 2 groups, read across the groups
    return np.concatenate([
        (np.einsum("bi,oij,bj->bo", x1[:, :3], w, x2) + b).ravel(),
        shuffled.ravel(),
        _affine_grid(theta, 2, 3, False).ravel(),
        _affine_grid(theta, 3, 1, True).ravel(),
    ])


def _grid_sample(x, grid, padding_mode, align_corners):
    """Bilinear sampling of (N, C, H, W) at normalized grid points, by its definition."""
    N, C, H, W = x.shape

    def pixel(v, size):
        v = (v + 1) * (size - 1) / 2 if align_corners else ((v + 1) * size - 1) / 2
        if padding_mode == "border":
            v = min(max(v, 0), size - 1)
        elif padding_mode == "reflection":
            low, high = (0, size - 1) if align_corners else (-0.5, size - 0.5)
            while not low <= v <= high:
                v = 2 * low - v if v < low else 2 * high - v
            v = min(max(v, 0), size - 1)
        return v

    def at(n, i, j):
        return x[n, :, i, j] if 0 <= i < H and 0 <= j < W else np.zeros(C)

    out = np.zeros((N, C) + grid.shape[1:3])
    for n, a, b in np.ndindex(N, *grid.shape[1:3]):
        px, py = pixel(grid[n, a, b, 0], W), pixel(grid[n, a, b, 1], H)
        j, i = math.floor(px), math.floor(py)
        u, v = px - j, py - i
        out[n, :, a, b] = (at(n, i, j) * (1 - u) * (1 - v) + at(n, i, j + 1) * u * (1 - v)
                           + at(n, i + 1, j) * (1 - u) * v + at(n, i + 1, j + 1) * u * v)
    return out


CTC_TARGETS, CTC_INPUT_LENGTHS, CTC_TARGET_LENGTHS = [[1, 2], [1, 1]], [4, 3], [2, 2]


def _ctc(x):
    """ctc_loss of log_softmax(x) (T, N, C) by its definition: minus the log of the summed
    probability of every labelling of the frames that collapses (repeats merged, blanks 0
    dropped) to the target; "none" and "mean" (divided by the target lengths)."""
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    T, N, C = x.shape
    losses = []
    for n in range(N):
        frames, target = CTC_INPUT_LENGTHS[n], CTC_TARGETS[n][:CTC_TARGET_LENGTHS[n]]
        total = 0.0
        for path in np.ndindex(*(C,) * frames):
            merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
            if [c for c in merged if c != 0] == target:
                total += np.exp(sum(lp[t, n, c] for t, c in enumerate(path)))
        losses.append(-np.log(total))
    losses = np.array(losses)
    return np.concatenate([losses, [(losses / CTC_TARGET_LENGTHS).mean()]])


def rows(tensor_op, ANY, POSITIVE, AWAY):
    """The rows, made by optable's ``tensor_op``."""
    def F(ns):
        return ns.nn.functional

    def dev(ns, x, values, **kw):
        return ns.tensor(values, device=x.device, **kw)

    return [
        tensor_op("nn_activations_piecewise",
                  lambda ns, x: ns.cat([F(ns).relu6(2 * x + 3), F(ns).hardtanh(x, -1.0, 2.0),
                                        F(ns).hardsigmoid(2 * x), F(ns).hardswish(2 * x), F(ns).softshrink(x),
                                        F(ns).hardshrink(x, 0.7), F(ns).threshold(x, 0.3, -2.0),
                                        F(ns).rrelu(x)]).reshape(-1),
                  _piecewise, (2, 3), domains=(AWAY,)),
        tensor_op("nn_activations_smooth",
                  lambda ns, x: ns.cat([F(ns).mish(x).reshape(-1), F(ns).selu(x).reshape(-1),
                                        F(ns).celu(x, 0.7).reshape(-1), F(ns).softsign(x).reshape(-1),
                                        F(ns).logsigmoid(x).reshape(-1), F(ns).tanhshrink(x).reshape(-1),
                                        F(ns).softmin(x, 1).reshape(-1), F(ns).glu(x, 1).reshape(-1)]),
                  _smooth, (2, 4), domains=(AWAY,)),
        tensor_op("nn_local_response_norm",
                  lambda ns, x: ns.cat([F(ns).local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0).reshape(-1),
                                        F(ns).local_response_norm(x.reshape(1, 4, 1, 3), 2, alpha=0.3, k=2.0)
                                        .reshape(-1)]),
                  lambda x: np.concatenate([_lrn(x, 3, 0.5, 0.75, 1.0).ravel(), _lrn(x, 2, 0.3, 0.75, 2.0).ravel()]),
                  (1, 4, 3)),
        tensor_op("nn_pair_losses",
                  lambda ns, a, b, c: ns.stack([
                      F(ns).margin_ranking_loss(a[:, 0], b[:, 0], dev(ns, a, Y4.tolist(), dtype=a.dtype), margin=0.3),
                      F(ns).hinge_embedding_loss(a, c.sign(), margin=0.7, reduction="sum"),
                      F(ns).cosine_embedding_loss(a, b, dev(ns, a, Y4.tolist(), dtype=a.dtype), margin=0.2),
                      F(ns).triplet_margin_loss(a, b, c, margin=2.0),
                      F(ns).triplet_margin_loss(a, b, c, margin=2.0, p=1, swap=True, reduction="sum"),
                      F(ns).soft_margin_loss(a, c.sign())]),
                  _pair_losses, (4, 4), (4, 4), (4, 4), domains=(ANY, ANY, AWAY)),
        tensor_op("nn_class_losses",
                  lambda ns, a, b: ns.stack([
                      F(ns).multilabel_soft_margin_loss(a, (b > 0).to(dtype=a.dtype),
                                                        weight=dev(ns, a, [0.5, 1.0, 1.5, 2.0], dtype=a.dtype)),
                      F(ns).multi_margin_loss(a, dev(ns, a, CLASSES)),
                      F(ns).multi_margin_loss(a, dev(ns, a, CLASSES), p=2, margin=0.5, reduction="sum",
                                              weight=dev(ns, a, [0.5, 1.0, 1.5, 2.0], dtype=a.dtype)),
                      F(ns).multilabel_margin_loss(a, dev(ns, a, LABELS))]),
                  _class_losses, (4, 4), (4, 4), domains=(ANY, AWAY)),
        tensor_op("nn_likelihood_losses",
                  lambda ns, a, b, v: ns.stack([
                      F(ns).kl_div(a.log_softmax(1), b.softmax(1), reduction="mean"),
                      F(ns).kl_div(a.log_softmax(1), b.log_softmax(1), reduction="batchmean", log_target=True),
                      F(ns).poisson_nll_loss(a, b.abs() * 3),
                      F(ns).poisson_nll_loss(v, b.abs() * 3, log_input=False, full=True, reduction="sum"),
                      F(ns).gaussian_nll_loss(a, b, v),
                      F(ns).gaussian_nll_loss(a, b, v[:, 0], full=True, reduction="sum")]),
                  _likelihood_losses, (2, 3), (2, 3), (2, 3), domains=(ANY, AWAY, POSITIVE)),
        tensor_op("nn_distances",
                  lambda ns, a, b: ns.cat([F(ns).cosine_similarity(a, b, dim=1), F(ns).cosine_similarity(a, b, dim=0),
                                           F(ns).pairwise_distance(a, b), F(ns).pairwise_distance(a, b, p=3.0),
                                           F(ns).pairwise_distance(a, b, p=math.inf), F(ns).pdist(a),
                                           F(ns).pdist(a, p=1)]),
                  _distances, (3, 4), (3, 4), domains=(AWAY, AWAY)),
        tensor_op("nn_pools",
                  lambda ns, x: ns.cat([
                      F(ns).adaptive_avg_pool1d(x.reshape(1, 2, 8), 3).reshape(-1),
                      F(ns).adaptive_max_pool1d(x.reshape(1, 2, 8), 3).reshape(-1),
                      F(ns).lp_pool2d(x.reshape(1, 1, 4, 4), 2, (2, 3), stride=1).reshape(-1),
                      F(ns).max_unpool2d(*F(ns).max_pool2d(x.reshape(1, 1, 4, 4), 2, return_indices=True), 2)
                      .reshape(-1)]),
                  _pools, (4, 4)),
        tensor_op("nn_pools_3d",
                  lambda ns, z: ns.cat([F(ns).max_pool3d(z, 2, stride=(1, 1, 2)).reshape(-1),
                                        F(ns).avg_pool3d(z, (2, 1, 2), stride=1).reshape(-1)]),
                  lambda z: np.concatenate([_windows(z, (2, 2, 2), (1, 1, 2), np.max).ravel(),
                                            _windows(z, (2, 1, 2), (1, 1, 1), np.mean).ravel()]),
                  (1, 1, 2, 3, 4)),
        tensor_op("nn_layers",
                  lambda ns, x1, x2, w, b, theta: ns.cat([
                      F(ns).bilinear(x1[:, :3], x2, w, b).reshape(-1),
                      F(ns).channel_shuffle(x1.reshape(2, 4, 1), 2).reshape(-1),
                      F(ns).affine_grid(theta, (2, 1, 2, 3), align_corners=False).reshape(-1),
                      F(ns).affine_grid(theta, (2, 1, 3, 1), align_corners=True).reshape(-1)]),
                  _layers, (2, 4), (2, 2), (2, 3, 2), (2,), (2, 2, 3)),
        tensor_op("nn_embedding_bag",
                  lambda ns, table: ns.cat([
                      F(ns).embedding_bag(dev(ns, table, BAG_INPUT), table, dev(ns, table, BAG_OFFSETS), mode=mode)
                      .reshape(-1) for mode in ("sum", "mean", "max")] + [
                      F(ns).embedding_bag(dev(ns, table, [[0, 2, 2], [3, 1, 5]]), table, mode="sum",
                                          per_sample_weights=dev(ns, table, BAG_WEIGHTS, dtype=table.dtype))
                      .reshape(-1)]),
                  _embedding_bag, (6, 2)),
        tensor_op("nn_ctc_loss",
                  lambda ns, x: ns.cat([
                      F(ns).ctc_loss(x.log_softmax(-1), dev(ns, x, CTC_TARGETS), CTC_INPUT_LENGTHS,
                                     CTC_TARGET_LENGTHS, reduction="none"),
                      F(ns).ctc_loss(x.log_softmax(-1), dev(ns, x, [1, 2, 1, 1]), dev(ns, x, CTC_INPUT_LENGTHS),
                                     dev(ns, x, CTC_TARGET_LENGTHS)).reshape(1)]),
                  _ctc, (4, 2, 3)),
        tensor_op("nn_grid_sample",
                  lambda ns, x, g: ns.cat([
                      F(ns).grid_sample(x, g * 0.4, align_corners=False).reshape(-1),
                      F(ns).grid_sample(x, g * 0.4, padding_mode="border", align_corners=True).reshape(-1),
                      F(ns).grid_sample(x, g * 0.4, padding_mode="reflection", align_corners=False).reshape(-1)]),
                  lambda x, g: np.concatenate([_grid_sample(x, g * 0.4, "zeros", False).ravel(),
                                               _grid_sample(x, g * 0.4, "border", True).ravel(),
                                               _grid_sample(x, g * 0.4, "reflection", False).ravel()]),
                  (1, 2, 3, 4), (1, 2, 2, 2)),
        tensor_op("nn_conv_transpose3d", lambda ns, z, k: F(ns).conv_transpose3d(z, k, stride=2),
                  lambda z, k: _conv_transpose3d(z, k, 2), (1, 1, 1, 2, 1), (1, 2, 2, 1, 2)),
    ]
