"""What a kernel may assume about how its arguments fit together, checked where a backend's
Python code hands them to native code (backend.py, "What a kernel may assume").

One function per backend method that takes several views or a dimension: it has the
method's signature and raises ValueError, naming the kernel, the argument and the shapes,
when they disagree (a source shorter than its index, a target list shorter than the batch,
a gradient of another shape than its parameter). A C kernel would read or write past a
buffer instead; the python kernels would compute something silently wrong. Every check is
a few comparisons of shape tuples, per call or per parameter, never per element.

Native devices call these at the top of their methods (``binary``, ``where`` and
``write``, which run for every element-wise operation, compare the shapes inline and call
them only to raise; a reduction's dims are checked once per layout). A lazy device calls
``check`` when it records a call, so the error comes from the operation that made it
rather than from a later read. "python" checks write,
index_add and the optimizer updates, whose loops would otherwise stop at the shorter
view.
"""
import math

from . import dtypes
from .strides import make_strides, numel

REDUCTIONS = ("none", "sum", "mean")


# Each check compares inline and calls one of these only when something is wrong: a check
# runs on every kernel call, and a Python call costs as much as the comparison.
def differ(kernel, what, got, expected):
    """Raise unless view shape `got` equals `expected` (a tuple, or a list a hand-made View
    may hold)."""
    if tuple(got) != tuple(expected):
        raise ValueError(f"{kernel}: {what} has shape {tuple(got)}, expected {tuple(expected)}")


def bad_dim(kernel, dim, ndim):
    raise ValueError(f"{kernel}: dim {dim!r} is not a dimension of a {ndim}-d view "
                     f"(expected 0 to {ndim - 1}, already normalized)")


def bad_reduction(kernel, reduction):
    raise ValueError(f"{kernel}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def not_rows(kernel, what, shape):
    raise ValueError(f"{kernel}: {what} must be (N, C), got shape {tuple(shape)}")


def binary(op, a, b, dtype):
    if b.shape != a.shape:
        differ("binary", "b", b.shape, a.shape)


def where(cond, a, b, dtype):
    if not cond.shape == a.shape == b.shape:
        differ("where", "a", a.shape, cond.shape)
        differ("where", "b", b.shape, cond.shape)


def reduce(op, view, dims, dtype):
    reduced_dims("reduce", dims, len(view.shape))


def cumsum(view, dim, dtype):
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("cumsum", dim, len(view.shape))


def reduced_dims(kernel, dims, ndim):
    """Distinct dimensions of a view of ndim dimensions (a reduction's)."""
    for d in dims:
        if not (type(d) is int and 0 <= d < ndim):
            bad_dim(kernel, d, ndim)
    if len(set(dims)) != len(dims):
        raise ValueError(f"{kernel}: dims {tuple(dims)} name a dimension twice")


def matmul(a, b, dtype, bias=None):
    sa, sb = a.shape, b.shape
    fits = len(sa) >= 2 and len(sb) == len(sa) and sa[-1] == sb[-2]
    if fits and len(sa) > 2:                    # batched: the same batch dimensions
        fits = tuple(sa[:-2]) == tuple(sb[:-2])
    if not fits:
        raise ValueError(f"matmul: expected a (..., m, k) and b (..., k, n) with the same "
                         f"batch dimensions, got shapes {tuple(sa)} and {tuple(sb)}")
    if bias is not None and bias.shape != sb[-1:] and tuple(bias.shape) != tuple(sb[-1:]):
        raise ValueError(f"matmul: bias must have shape ({sb[-1]},), got {tuple(bias.shape)}")


def index_select(view, dim, index):
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("index_select", dim, len(view.shape))


def index_add(shape, dim, index, src):
    shape = tuple(shape)
    if not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"index_add: shape {shape} is not a tuple of non-negative ints")
    if not (type(dim) is int and 0 <= dim < len(shape)):
        bad_dim("index_add", dim, len(shape))
    differ("index_add", "src", src.shape, shape[:dim] + (numel(index.shape),) + shape[dim + 1:])


def write(dst, src):
    if src.shape != dst.shape:
        differ("write", "src", src.shape, dst.shape)


def softmax(view, dim, log, dtype):
    if not (type(dim) is int and 0 <= dim < len(view.shape)):
        bad_dim("softmax", dim, len(view.shape))


def softmax_backward(grad, out, dim, log, dtype):
    if grad.shape != out.shape:
        differ("softmax_backward", "grad", grad.shape, out.shape)
    if not (type(dim) is int and 0 <= dim < len(out.shape)):
        bad_dim("softmax_backward", dim, len(out.shape))


def bad_ignore_index(kernel, ignore_index):
    raise TypeError(f"{kernel}: ignore_index must be an int or None, got {ignore_index!r}")


def cross_entropy(logits, targets, reduction, ignore_index, dtype):
    if len(logits.shape) != 2:
        not_rows("cross_entropy", "logits", logits.shape)
    if targets.shape != logits.shape[:1]:
        differ("cross_entropy", "targets", targets.shape, logits.shape[:1])
    if reduction not in REDUCTIONS:
        bad_reduction("cross_entropy", reduction)
    if ignore_index is not None and type(ignore_index) is not int:
        bad_ignore_index("cross_entropy", ignore_index)


def cross_entropy_backward(probs, targets, scale, kept, ignore_index, dtype):
    rows = probs.shape[:1]
    if len(probs.shape) != 2:
        not_rows("cross_entropy_backward", "probs", probs.shape)
    if not targets.shape == scale.shape == rows:
        differ("cross_entropy_backward", "targets", targets.shape, rows)
        differ("cross_entropy_backward", "scale", scale.shape, rows)
    if kept is not None and tuple(kept.shape) != ():
        differ("cross_entropy_backward", "kept", kept.shape, ())
    if ignore_index is not None and type(ignore_index) is not int:
        bad_ignore_index("cross_entropy_backward", ignore_index)


def _linear_rows(kernel, x, weight, bias, targets):
    """linear_cross_entropy's operands: x (N, C), weight (V, C), bias (V,) or None, N targets."""
    if len(x.shape) != 2:
        not_rows(kernel, "x", x.shape)
    if len(weight.shape) != 2 or weight.shape[1] != x.shape[1]:
        raise ValueError(f"{kernel}: weight has shape {tuple(weight.shape)}, expected (V, "
                         f"{x.shape[1]}) for x of shape {tuple(x.shape)}")
    if bias is not None and bias.shape != weight.shape[:1]:
        differ(kernel, "bias", bias.shape, weight.shape[:1])
    if targets.shape != x.shape[:1]:
        differ(kernel, "targets", targets.shape, x.shape[:1])


def linear_cross_entropy(x, weight, bias, targets, reduction, ignore_index, dtype):
    _linear_rows("linear_cross_entropy", x, weight, bias, targets)
    if reduction not in REDUCTIONS:
        bad_reduction("linear_cross_entropy", reduction)
    if ignore_index is not None and type(ignore_index) is not int:
        bad_ignore_index("linear_cross_entropy", ignore_index)


def linear_cross_entropy_backward(x, weight, bias, targets, lse, scale, kept, ignore_index, needs, dtype):
    kernel = "linear_cross_entropy_backward"
    _linear_rows(kernel, x, weight, bias, targets)
    if not lse.shape == scale.shape == x.shape[:1]:
        differ(kernel, "lse", lse.shape, x.shape[:1])
        differ(kernel, "scale", scale.shape, x.shape[:1])
    if kept is not None and tuple(kept.shape) != ():
        differ(kernel, "kept", kept.shape, ())
    if ignore_index is not None and type(ignore_index) is not int:
        bad_ignore_index(kernel, ignore_index)
    if len(needs) != 3 or (needs[2] and bias is None):
        raise ValueError(f"{kernel}: needs must say (dx, dweight, dbias), dbias only with a "
                         f"bias, got {needs!r}")


def mse_loss(a, b, reduction, dtype):
    if b.shape != a.shape:
        differ("mse_loss", "b", b.shape, a.shape)
    if reduction not in REDUCTIONS:
        bad_reduction("mse_loss", reduction)


def mse_loss_backward(diff, grad, factor, dtype):
    if grad.shape != diff.shape:
        differ("mse_loss_backward", "grad", grad.shape, diff.shape)


def dropout(view, seed, p, dtype):
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p} (p = 1 drops everything: "
                         "F.dropout returns zeros without the kernel)")
    if not (type(seed) is int and 0 <= seed < 1 << 64):
        raise ValueError(f"dropout: seed must be a 64-bit unsigned int, got {seed!r}")


def layer_norm(x, weight, bias, eps, dtype):
    if not x.shape:
        raise ValueError("layer_norm: x must have at least one dimension, got a 0-d view")
    n = x.shape[-1:]
    for what, v in (("weight", weight), ("bias", bias)):
        if v is not None and v.shape != n:
            differ("layer_norm", what, v.shape, n)


def layer_norm_backward(grad, x, mean, rstd, weight, dtype):
    if not x.shape:
        raise ValueError("layer_norm_backward: x must have at least one dimension, got a 0-d view")
    if grad.shape != x.shape:
        differ("layer_norm_backward", "grad", grad.shape, x.shape)
    rows = numel(x.shape[:-1])
    for what, v in (("mean", mean), ("rstd", rstd)):
        if numel(v.shape) != rows:
            differ("layer_norm_backward", what, v.shape, (rows,))
    if weight is not None and weight.shape != x.shape[-1:]:
        differ("layer_norm_backward", "weight", weight.shape, x.shape[-1:])


def _attention_inputs(kernel, q, k, v, causal, scale):
    """q (..., T, d), k (..., S, d), v (..., S, e) with one batch shape, S >= 1; causal None
    or an int offset >= 0 (query i sees keys 0 .. i + offset); scale a finite number.
    Returns (T, e)."""
    fits = len(q.shape) >= 2 and len(k.shape) == len(q.shape) == len(v.shape)
    if fits:
        fits = (tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2])
                and q.shape[-1] == k.shape[-1] and k.shape[-2] == v.shape[-2] and k.shape[-2] >= 1)
    if not fits:
        raise ValueError(f"{kernel}: expected q (..., T, d), k (..., S, d) and v (..., S, e) with "
                         f"the same batch dimensions and S >= 1, got shapes {tuple(q.shape)}, "
                         f"{tuple(k.shape)} and {tuple(v.shape)}")
    if causal is not None and not (type(causal) is int and causal >= 0):
        raise ValueError(f"{kernel}: causal must be None (no mask) or an int offset >= 0 (query i "
                         f"sees keys 0 .. i + offset), got {causal!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise ValueError(f"{kernel}: scale must be a finite number, got {scale!r}")
    return q.shape[-2], v.shape[-1]


def _attention_dtype(kernel, dtype):
    """The kernels' dtypes (a half one reaches them as float32: backend.launch)."""
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{kernel}: the kernels compute in float32 or float64, got {dtype!r}")


def attention(q, k, v, causal, scale, dtype):
    _attention_inputs("attention", q, k, v, causal, scale)
    _attention_dtype("attention", dtype)


def attention_backward(grad, q, k, v, out, lse, causal, scale, dtype):
    t, e = _attention_inputs("attention_backward", q, k, v, causal, scale)
    _attention_dtype("attention_backward", dtype)
    rows = tuple(q.shape[:-1])
    for what, v, expected in (("out", out, rows + (e,)), ("grad", grad, rows + (e,)), ("lse", lse, rows)):
        if tuple(v.shape) != expected:
            differ("attention_backward", what, v.shape, expected)


def _channels(kernel, x):
    """x (N, C, *spatial), at least 2-d, its element count within int64: returns C."""
    if len(x.shape) < 2:
        raise ValueError(f"{kernel}: x must be (N, C, ...) with at least 2 dimensions, got shape {tuple(x.shape)}")
    if numel(x.shape) >= LIMIT:
        raise ValueError(f"{kernel}: {numel(x.shape)} elements: too many for a buffer")
    return x.shape[1]


def _non_negative_eps(kernel, eps):
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ValueError(f"{kernel}: eps must be a non-negative number, got {eps!r}")


def batch_norm(x, weight, bias, eps, dtype):
    c = _channels("batch_norm", x)
    _non_negative_eps("batch_norm", eps)
    for what, v in (("weight", weight), ("bias", bias)):
        if v is not None and tuple(v.shape) != (c,):
            differ("batch_norm", what, v.shape, (c,))


def batch_norm_backward(grad, x, mean, var, weight, eps, dtype):
    c = _channels("batch_norm_backward", x)
    _non_negative_eps("batch_norm_backward", eps)
    if grad.shape != x.shape:
        differ("batch_norm_backward", "grad", grad.shape, x.shape)
    for what, v in (("mean", mean), ("var", var)) + ((("weight", weight),) if weight is not None else ()):
        if tuple(v.shape) != (c,):
            differ("batch_norm_backward", what, v.shape, (c,))


# ---- resampling (pad, interpolate): the last dimensions of a view, read arithmetically ----
PAD_CODES = ("constant", "reflect", "replicate", "circular")     # the C kernels' mode numbers


def _ints(kernel, what, values, n, low):
    if not (isinstance(values, (tuple, list)) and len(values) == n and all(type(v) is int for v in values)
            and all(low <= v < LIMIT for v in values)):
        raise ValueError(f"{kernel}: {what} must be a tuple of {n} ints from {low} below 2^62, "
                         f"one per padded dimension, got {values!r}")


def _padding(kernel, spatial, before, after, mode):
    """before and after: n non-negative ints each (the view's last n dimensions), within what
    ``mode`` can read (sampling_grid.pad_source): reflect smaller than the dimension,
    circular at most as large, replicate of a non-empty one."""
    n = len(before) if isinstance(before, (tuple, list)) else -1
    if not 1 <= n <= 16 or len(spatial) < n:
        raise ValueError(f"{kernel}: before must be a tuple of 1 to 16 ints, at most one per dimension "
                         f"of a {len(spatial)}-d view, got {before!r}")
    _ints(kernel, "before", before, n, 0)
    _ints(kernel, "after", after, n, 0)
    if mode not in PAD_CODES:
        raise ValueError(f"{kernel}: mode must be one of {', '.join(PAD_CODES)}, got {mode!r}")
    for size, b, a in zip(spatial[-n:], before, after):
        if (mode == "reflect" and max(a, b) >= size) or (mode == "circular" and max(a, b) > size) \
                or (mode == "replicate" and size < 1 and max(a, b) > 0):
            raise ValueError(f"{kernel}: {mode} padding ({b}, {a}) does not fit a dimension of {size}")
        if size + a + b >= LIMIT:
            raise ValueError(f"{kernel}: a padded dimension of {size + a + b}, beyond int64 sizes")
    return n


def pad_geometry(shape, before, after):
    """What a pad kernel loops over, for a tensor of ``shape`` padded in its last
    len(before) dimensions: (planes, spatial, padded), the product of the leading extents,
    the padded dimensions' extents and the number of elements of one padded plane."""
    n = len(before)
    spatial = tuple(shape[len(shape) - n:])
    return (numel(shape[:len(shape) - n]), spatial,
            numel([s + b + a for s, b, a in zip(spatial, before, after)]))


def pad(view, before, after, mode, value, dtype):
    _padding("pad", tuple(view.shape), before, after, mode)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"pad: value must be a number, got {value!r}")
    planes, _, padded = pad_geometry(view.shape, before, after)
    _plane_sizes("pad", planes, (padded,))


def pad_backward(grad, spatial, before, after, mode, dtype):
    spatial = tuple(spatial) if isinstance(spatial, (tuple, list)) else spatial
    if not (isinstance(spatial, tuple) and len(spatial) == len(before) if isinstance(before, (tuple, list))
            else False) or not all(type(s) is int and 0 <= s < LIMIT for s in spatial):
        raise ValueError(f"pad_backward: spatial {spatial!r} must be one non-negative int per padded "
                         f"dimension (before {before!r}), the padded input's last extents")
    _padding("pad_backward", spatial, before, after, mode)
    n = len(spatial)
    _plane_sizes("pad_backward", numel(grad.shape[:max(len(grad.shape) - n, 0)]), (numel(spatial),))
    expected = tuple(s + b + a for s, b, a in zip(spatial, before, after))
    if len(grad.shape) < n or tuple(grad.shape[len(grad.shape) - n:]) != expected:
        raise ValueError(f"pad_backward: grad has shape {tuple(grad.shape)}, expected (..., "
                         f"{', '.join(map(str, expected))}) (the padded extents)")


INTERPOLATE_MODES = ("nearest", "linear")


def _interpolation(kernel, spatial, out, steps, mode, align_corners):
    """Two spatial extents (H, W) and two output extents, positive; two finite non-negative
    steps (sampling_grid.interpolation_step) whose positions stay in the input (min(...,
    size - 1) in the formulas clamps them anyway)."""
    for what, values, low in (("spatial", spatial, 1), ("out", out, 1)):
        _ints(kernel, what, values, 2, low)
    if not (isinstance(steps, (tuple, list)) and len(steps) == 2
            and all(type(s) is float and math.isfinite(s) and 0 <= s < LIMIT for s in steps)):
        raise ValueError(f"{kernel}: steps must be 2 finite non-negative floats, got {steps!r}")
    if mode not in INTERPOLATE_MODES:
        raise ValueError(f"{kernel}: mode must be 'nearest' or 'linear', got {mode!r}")
    if type(align_corners) is not bool:
        raise ValueError(f"{kernel}: align_corners must be a bool, got {align_corners!r}")


def interpolate(view, out, steps, mode, align_corners, dtype):
    if len(view.shape) != 4:
        raise ValueError(f"interpolate: expected a view (N, C, H, W), got shape {tuple(view.shape)}")
    _interpolation("interpolate", tuple(view.shape[2:]), out, steps, mode, align_corners)
    _plane_sizes("interpolate", view.shape[0] * view.shape[1], (numel(view.shape[2:]), numel(out)))


def interpolate_into(view, out, steps, mode, align_corners, dst, dtype):
    interpolate(view, out, steps, mode, align_corners, dtype)
    destination("interpolate_into", dst, tuple(view.shape[:2]) + tuple(out), dtype)


def interpolate_backward(grad, spatial, steps, mode, align_corners, dtype):
    if len(grad.shape) != 4:
        raise ValueError(f"interpolate_backward: expected grad (N, C, H_out, W_out), got shape {tuple(grad.shape)}")
    _interpolation("interpolate_backward", spatial, tuple(grad.shape[2:]), steps, mode, align_corners)
    _plane_sizes("interpolate_backward", grad.shape[0] * grad.shape[1], (numel(spatial), numel(grad.shape[2:])))


def _group(kernel, params, per_parameter):
    """One entry per parameter in every list, each of its parameter's shape (None allowed
    where ``optional``). One list comparison per list; the loop that names the culprit
    runs only when it differs."""
    shapes = [p.shape for p in params]
    for what, values, optional in per_parameter:
        if len(values) != len(shapes):
            raise ValueError(f"{kernel}: {len(shapes)} parameters but {len(values)} {what}")
        if None not in values and [v.shape for v in values] == shapes:
            continue
        for i, (p, v) in enumerate(zip(params, values)):
            if v is None:
                if not optional:
                    raise ValueError(f"{kernel}: {what}[{i}] is None, expected a view of its "
                                     f"parameter's shape {tuple(p.shape)}")
            else:
                differ(kernel, f"{what}[{i}]", v.shape, p.shape)


def sgd_update(params, grads, velocities, lr, momentum, dampening, weight_decay, first_steps, nesterov):
    _group("sgd_update", params, [("grads", grads, False),
                                  ("velocities", velocities, not momentum)])
    if len(first_steps) != len(params):
        raise ValueError(f"sgd_update: {len(params)} parameters but {len(first_steps)} first_steps")


def adam_update(params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps):
    _group("adam_update", params, [("grads", grads, False), ("ms", ms, False), ("vs", vs, False)])
    if len(steps) != len(params):
        raise ValueError(f"adam_update: {len(params)} parameters but {len(steps)} steps")
    if steps and min(steps) < 1:
        raise ValueError(f"adam_update: steps {list(steps)} must count from 1")


# ---- windows (im2col, col2im, conv_direct, max_pool): a geometry of n spatial dimensions ----
LIMIT = 1 << 62                         # every size and position a window kernel computes fits int64


def windows(kernel_name, spatial, kernel, stride, before, dilation, out, max_dims=16):
    """A geometry the C window kernels (csrc/windows.h) can walk without reading or writing
    outside their buffers: six tuples of n ints (1 <= n <= max_dims), extents and steps
    positive, padding and output extents non-negative, and every position, extent and
    element count they compute below 2^62 (no int64 product overflows). Returns n."""
    parts = (("spatial", spatial), ("kernel", kernel), ("stride", stride), ("before", before),
             ("dilation", dilation), ("out", out))
    n = len(tuple(kernel)) if isinstance(kernel, (tuple, list)) else -1
    if not 1 <= n <= max_dims:
        raise ValueError(f"{kernel_name}: kernel must be a tuple of 1 to {max_dims} ints, got {kernel!r}")
    for what, values in parts:
        if not (isinstance(values, (tuple, list)) and len(values) == n
                and all(type(v) is int for v in values)):
            raise ValueError(f"{kernel_name}: {what} must be a tuple of {n} ints (one per spatial "
                             f"dimension, as kernel {tuple(kernel)}), got {values!r}")
        low = 0 if what in ("before", "out") else 1
        if any(v < low or v >= LIMIT for v in values):
            raise ValueError(f"{kernel_name}: {what} {tuple(values)} must be "
                             f"{'non-negative' if low == 0 else 'positive'} and below 2^62")
    for d in range(n):                  # the farthest position a window reads, either side
        reach = max(out[d] - 1, 0) * stride[d] + (kernel[d] - 1) * dilation[d] + before[d] + spatial[d]
        if reach >= LIMIT:
            raise ValueError(f"{kernel_name}: dimension {d}'s windows reach position {reach}, "
                             "beyond what int64 positions hold")
    return n


def _plane_sizes(kernel_name, planes, sizes):
    """Element counts (planes times each of ``sizes``) that fit int64 (and so a buffer);
    with no planes, the sizes of one (the kernels compute them whatever the count)."""
    for size in sizes:
        if max(planes, 1) * size >= LIMIT:
            raise ValueError(f"{kernel_name}: {planes} planes of {size} elements: too many "
                             "elements for a buffer")


def _planes(kernel_name, what, view, spatial):
    """A view (N, C, *spatial): returns N * C."""
    if len(view.shape) != 2 + len(spatial) or tuple(view.shape[2:]) != tuple(spatial):
        raise ValueError(f"{kernel_name}: {what} has shape {tuple(view.shape)}, expected "
                         f"(N, C, {', '.join(map(str, spatial))})")
    return view.shape[0] * view.shape[1]


def im2col(view, kernel, stride, before, dilation, out, fill, dtype):
    n = windows("im2col", tuple(view.shape[2:]), kernel, stride, before, dilation, out)
    planes = _planes("im2col", "view", view, view.shape[2:2 + n])
    _plane_sizes("im2col", planes, (numel(view.shape[2:]), numel(kernel) * numel(out)))


def col2im(cols, spatial, kernel, stride, before, dilation, out, dtype):
    windows("col2im", spatial, kernel, stride, before, dilation, out)
    if len(cols.shape) != 4 or tuple(cols.shape[2:]) != (numel(kernel), numel(out)):
        raise ValueError(f"col2im: cols has shape {tuple(cols.shape)}, expected (N, C, "
                         f"{numel(kernel)}, {numel(out)}) (N, C, kernel positions, output positions)")
    _plane_sizes("col2im", cols.shape[0] * cols.shape[1], (numel(spatial), numel(kernel) * numel(out)))


def conv_direct(x, weight, bias, stride, before, dilation, groups, out, dtype):
    spatial, kernel = tuple(x.shape[2:]), tuple(weight.shape[2:])
    n = windows("conv_direct", spatial, kernel, stride, before, dilation, out)
    if len(x.shape) != n + 2 or len(weight.shape) != n + 2:
        raise ValueError(f"conv_direct: x {tuple(x.shape)} and weight {tuple(weight.shape)} must "
                         f"both be (N or C_out, C, *{n} spatial extents)")
    c_in, c_out = x.shape[1], weight.shape[0]
    if not (type(groups) is int and groups >= 1 and c_out % groups == 0 and weight.shape[1] * groups == c_in):
        raise ValueError(f"conv_direct: x of {c_in} channels, weight {tuple(weight.shape)} and "
                         f"groups={groups!r}: expected C_in = weight.shape[1] * groups, C_out divisible by groups")
    if bias is not None and tuple(bias.shape) != (c_out,):
        differ("conv_direct", "bias", bias.shape, (c_out,))
    _plane_sizes("conv_direct", x.shape[0] * max(c_in, c_out), (numel(spatial), numel(kernel) * numel(out)))


def conv_bands(x, weight, bias, stride, before, dilation, groups, out, relu, band_rows, dst, dtype):
    """conv_direct's geometry, a float dtype the kernels have, a positive band of rows,
    and a destination (or None) of the result's shape whose planes are row-major and
    whose planes never share an element (a slice of a larger buffer along its channels
    or images is one)."""
    conv_direct(x, weight, bias, stride, before, dilation, groups, out, dtype)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"conv_bands: expected float32 or float64, got {dtype}")
    if type(relu) is not bool or type(band_rows) is not int or not 1 <= band_rows < LIMIT:
        raise ValueError(f"conv_bands: relu must be a bool and band_rows a positive int, got "
                         f"{relu!r}, {band_rows!r}")
    if dst is not None:
        destination("conv_bands", dst, (x.shape[0], weight.shape[0]) + tuple(out), dtype)


def destination(kernel, dst, shape, dtype):
    """A destination a kernel writes (N, C, *out) into, plane by plane: of that shape and
    dtype (float32 or float64), each plane row-major, the planes never sharing an element
    (a slice of a larger buffer along its channels or images is one). That it lies inside
    its buffer is the View's promise 1 below; that it shares nothing with the inputs, the
    backend's check (it knows which inputs it reads in place)."""
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{kernel}: a destination of float32 or float64, got {dtype}")
    shape = tuple(shape)
    if tuple(dst.shape) != shape or dst.dtype is not dtype:
        raise ValueError(f"{kernel}: the destination is {tuple(dst.shape)} {dst.dtype}, expected "
                         f"{shape} {dtype}")
    plane = numel(shape[2:])
    image, channel = dst.strides[0], dst.strides[1]
    if tuple(dst.strides[2:]) != tuple(make_strides(shape[2:])) or (shape[1] > 1 and channel < plane) \
            or (shape[0] > 1 and image < (shape[1] - 1) * channel + plane) or min(image, channel) < 0:
        raise ValueError(f"{kernel}: the destination's strides {tuple(dst.strides)} must keep each "
                         f"plane row-major ({tuple(make_strides(shape[2:]))}) and the planes apart")


def max_pool(view, kernel, stride, before, dilation, out, dtype):
    n = windows("max_pool", tuple(view.shape[2:]), kernel, stride, before, dilation, out)
    planes = _planes("max_pool", "view", view, view.shape[2:2 + n])
    _plane_sizes("max_pool", planes, (numel(view.shape[2:]), numel(kernel) * numel(out)))


def max_pool_into(view, kernel, stride, before, dilation, out, dst, dtype):
    max_pool(view, kernel, stride, before, dilation, out, dtype)
    destination("max_pool_into", dst, tuple(view.shape[:2]) + tuple(out), dtype)


def max_pool_backward(grad, where, spatial, dtype):
    if tuple(where.shape) != tuple(grad.shape) or len(grad.shape) < 3:
        raise ValueError(f"max_pool_backward: grad {tuple(grad.shape)} and where {tuple(where.shape)} "
                         "must be one shape (N, C, *out)")
    spatial = tuple(spatial)
    if len(spatial) != len(grad.shape) - 2 or not all(type(s) is int and s >= 0 for s in spatial):
        raise ValueError(f"max_pool_backward: spatial {spatial!r} must be {len(grad.shape) - 2} "
                         "non-negative ints, the input's extents")
    _plane_sizes("max_pool_backward", grad.shape[0] * grad.shape[1], (numel(spatial), numel(grad.shape[2:])))


CHECKS = {"binary": binary, "where": where, "reduce": reduce, "cumsum": cumsum, "matmul": matmul,
          "index_select": index_select, "index_add": index_add, "write": write,
          "softmax": softmax, "softmax_backward": softmax_backward,
          "cross_entropy": cross_entropy, "cross_entropy_backward": cross_entropy_backward,
          "linear_cross_entropy": linear_cross_entropy,
          "linear_cross_entropy_backward": linear_cross_entropy_backward,
          "mse_loss": mse_loss, "mse_loss_backward": mse_loss_backward, "dropout": dropout,
          "layer_norm": layer_norm, "layer_norm_backward": layer_norm_backward,
          "batch_norm": batch_norm, "batch_norm_backward": batch_norm_backward,
          "attention": attention, "attention_backward": attention_backward,
          "pad": pad, "pad_backward": pad_backward, "interpolate": interpolate,
          "interpolate_backward": interpolate_backward, "interpolate_into": interpolate_into,
          "sgd_update": sgd_update, "adam_update": adam_update, "im2col": im2col, "col2im": col2im,
          "conv_direct": conv_direct, "conv_bands": conv_bands, "max_pool": max_pool,
          "max_pool_into": max_pool_into, "max_pool_backward": max_pool_backward}


def check(kernel, args):
    """The check of backend method ``kernel`` on its arguments (none for the kernels that
    read one view only)."""
    fn = CHECKS.get(kernel)
    if fn is not None:
        fn(*args)
