"""Convolution and pooling as a gather and a matrix product (chapter on convolutional
networks, "im2col").

A convolution slides a small kernel over the input: each output position takes the dot
product of the kernel with the window of input under it. im2col ("image to columns") lists,
for every output position, the input positions its window reads: a table of indices that
depends only on the shapes, the stride, the padding and the dilation, so it is worked out
once (``windows``) and reused every step. Gathering those positions (``index_select``,
whose gradient scatter-adds back: col2im) lays the windows out as the columns of a matrix,
and the whole convolution is then one matrix product with the kernels, flattened to rows.

Padding costs no padded copy: each input row gets one extra element (0 for a convolution
and an average, -inf for a maximum), and a window position outside the input reads it.
Pooling gathers the same windows and reduces them (max, mean). Everything here is written
with differentiable tensor operations, so every device runs it and autograd needs no
gradient of its own: the backward pass is the gather's scatter-add and the matrix
product's two products, the two convolutions of the thesis.

A device with the optional window kernels (backend.py: im2col, col2im, max_pool) runs those
instead, which work each window position out arithmetically (window_kernels.py): no table,
no padded copy, one pass each way. ``native`` is where the choice is made, for every
function here; the tables stay as the path every device has.

Two shortcuts, both general: a 1x1 window with stride 1 and no padding makes no columns
(the input's planes already are its columns), and inference (no gradient to record) makes
a large column matrix a few samples, or for a large image a band of output rows, at a time
(``_conv_chunked``), so its memory is bounded: the inference engine's U-net (chapter 13)
never holds its 113 MB one whole.
(That engine's own paths to the device's inference kernels, conv_bands and max_pool_into,
are its own: stage4_models/onnx/operators/inference_kernels.py.)
"""
import functools
import math

from . import backend as backends
from . import dtypes
from . import window_kernels
from .concat import cat
from .factories import arange, empty, full, zeros
from .grad_mode import is_grad_enabled
from .strides import numel
from .tensor import Tensor
from .views import IndexAdd, IndexSelect, constant_tensor


def _tuple(value, n, name):
    """An int or a sequence of n ints, as a tuple of n ints (PyTorch's _pair, _triple)."""
    values = (value,) * n if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(values) != n or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{name} must be an int or {n} ints, got {value!r}")
    return values


def output_size(size, kernel, stride, before, after, dilation, ceil_mode=False):
    """How many windows fit along one dimension of ``size`` padded by before + after."""
    span = size + before + after - dilation * (kernel - 1) - 1
    if span < 0:
        return 0
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + before:     # a last window in the padding alone
        out -= 1
    return out


@functools.lru_cache(maxsize=256)
def windows(spatial, kernel, stride, before, after, dilation, ceil_mode=False):
    """The im2col table for an input of ``spatial`` extents: (indices, out extents, counts).

    ``indices``: for each kernel position k (row-major over the kernel) and each output
    position l (row-major), the flat position in the input of what window l reads at k, or
    numel(spatial) (the extra element) where that lies in the padding: K * L ints, k-major.
    ``counts``: per output position, (inside the padded bounds, inside the input) window
    positions: the divisors of an average with and without the padding."""
    n = len(spatial)
    out = tuple(output_size(spatial[d], kernel[d], stride[d], before[d], after[d], dilation[d], ceil_mode)
                for d in range(n))
    pad_index = numel(spatial)
    offsets = _grid(kernel)                                   # each kernel position
    starts = _grid(out)                                       # each output position
    indices, padded, inside = [], [0] * len(starts), [0] * len(starts)
    for k in offsets:
        for j, o in enumerate(starts):
            flat, ok = 0, True
            within = True
            for d in range(n):
                p = o[d] * stride[d] - before[d] + k[d] * dilation[d]
                ok = ok and 0 <= p < spatial[d]
                within = within and p < spatial[d] + after[d]
                flat = flat * spatial[d] + p
            indices.append(flat if ok else pad_index)
            padded[j] += within
            inside[j] += ok
    return indices, out, (padded, inside)


def _grid(extents):
    """Every index tuple of a grid of these extents, row-major."""
    grid = [()]
    for e in extents:
        grid = [g + (i,) for g in grid for i in range(e)]
    return grid


def _padding(padding, n, kernel, stride, dilation):
    """(before, after) per dimension: an int or n ints each side, or 'valid' (none) or 'same'
    (the output as large as the input, stride 1 only; an odd total pads one more after, as
    PyTorch does)."""
    if padding == "valid":
        return (0,) * n, (0,) * n
    if padding == "same":
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    if isinstance(padding, str):
        raise ValueError(f"padding must be 'valid', 'same', an int or {n} ints, got {padding!r}")
    pad = _tuple(padding, n, "padding")
    if any(p < 0 for p in pad):
        raise ValueError(f"padding must be non-negative, got {padding!r}")
    return pad, pad


def native(x, kernel):
    """Whether x's device runs window kernel ``kernel`` ("im2col", which needs "col2im" for
    its gradient and conversely, or "max_pool"), and x's dtype is one of a float: the one
    place where convolution and pooling choose the device's kernels (window_kernels.py)
    over the index tables every device runs. (max_pool's two results, values and int64
    positions, are not for a half dtype's float32 round trip, which rounds every result:
    a half max pool takes the tables.)"""
    be = backends.get(x.device)
    if kernel in ("im2col", "col2im"):
        return x.dtype.is_floating_point and be.has("im2col") and be.has("col2im")
    return x.dtype.is_floating_point and not getattr(x.dtype, "is_half", False) and be.has(kernel)


def _extents(spatial, kernel, stride, before, after, dilation, ceil_mode=False):
    """The output extents of windows over ``spatial`` (all positive, else ValueError)."""
    out = tuple(output_size(spatial[d], kernel[d], stride[d], before[d], after[d], dilation[d], ceil_mode)
                for d in range(len(spatial)))
    if 0 in out:
        raise ValueError(f"the input's extents {spatial} are smaller than the kernel's "
                         f"{tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))} (with dilation)")
    return out


def _gather(x, kernel, stride, before, after, dilation, fill, ceil_mode=False):
    """x (N, C, *spatial) as its windows (N, C, K, L), the padding reading ``fill``; with
    the output extents."""
    spatial = x.shape[2:]
    out = _extents(spatial, kernel, stride, before, after, dilation, ceil_mode)
    if _identity(kernel, stride, before, after):
        # a 1x1 window, stride 1, no padding: window l reads position l alone, so the
        # input's planes are already the columns (a view, no copy: a 1x1 convolution is
        # one matrix product of the input)
        return x.reshape(*x.shape[:2], 1, numel(spatial)), out
    if native(x, "im2col"):
        return window_kernels.Im2col.apply(x, kernel, stride, before, dilation, out, fill), out
    key = (spatial, kernel, stride, before, after, dilation, ceil_mode)
    return _read(x, windows(*key)[0], key, fill, numel(kernel), numel(out)), out


def _identity(kernel, stride, before, after):
    """Whether these windows are the input itself: kernel 1, stride 1, no padding."""
    return all(v == 1 for v in kernel + stride) and not any(before + after)


def _read(x, indices, key, fill, k, l):
    """x (N, C, *spatial) read at a table's positions, (N, C, k, l): each input row gets one
    extra element, ``fill``, which the table's padding positions (numel(spatial)) read."""
    N, C = x.shape[:2]
    rows = cat([x.reshape(N, C, numel(x.shape[2:])), full((N, C, 1), fill, dtype=x.dtype, device=x.device)], dim=2)
    return IndexSelect.apply(rows, 2, constant_tensor(key, x.device, indices)).reshape(N, C, k, l)


def _batched(x, n, what):
    """x with its batch dimension: (N, C, *spatial) as it is, (C, *spatial) as N = 1."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: expected a tensor, got {type(x).__name__}")
    if x.ndim == n + 1:
        return x.unsqueeze(0), True
    if x.ndim != n + 2:
        raise ValueError(f"{what}: expected a {n + 1}-d (unbatched) or {n + 2}-d (batched) input, "
                         f"got shape {x.shape}")
    return x, False


def _conv_args(x, weight, stride, padding, dilation, groups, n, what):
    """conv's arguments checked: (x batched, unbatched, kernel, stride, before, after,
    dilation)."""
    x, unbatched = _batched(x, n, what)
    if not isinstance(weight, Tensor) or weight.ndim != n + 2:
        raise ValueError(f"{what}: expected a {n + 2}-d weight (C_out, C_in / groups, kernel...), "
                         f"got {getattr(weight, 'shape', type(weight).__name__)}")
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{what}: groups must be a positive int, got {groups!r}")
    c_out, c_group, kernel = weight.shape[0], weight.shape[1], weight.shape[2:]
    if x.shape[1] != c_group * groups or c_out % groups:
        raise ValueError(f"{what}: input of {x.shape[1]} channels, weight {weight.shape} and "
                         f"groups={groups}: expected C_in = {c_group} * groups and C_out divisible by groups")
    stride, dilation = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ValueError(f"{what}: stride and dilation must be positive, got {stride}, {dilation}")
    before, after = _padding(padding, n, kernel, stride, dilation)
    return x, unbatched, kernel, stride, before, after, dilation


def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, n=2):
    """The n-d convolution (PyTorch's conv1d/2d/3d, a cross-correlation): x (N, C_in,
    *spatial), weight (C_out, C_in / groups, *kernel), bias (C_out,) or None. ``groups``
    splits the channels into that many independent convolutions (groups = C_in: depthwise)."""
    x, unbatched, kernel, stride, before, after, dilation = _conv_args(
        x, weight, stride, padding, dilation, groups, n, f"conv{n}d")
    c_out, c_group = weight.shape[:2]
    if _chunks(x, weight, bias, kernel, stride, before, after, dilation):
        y = _conv_chunked(x, weight, kernel, stride, before, after, dilation, groups)
        if bias is not None:
            y = y + bias.reshape(c_out, *(1,) * n)
        return y[0] if unbatched else y
    cols, out = _gather(x, kernel, stride, before, after, dilation, 0)
    y = _product(x, weight, cols, groups)
    y = y.reshape(x.shape[0], c_out, *out)
    if bias is not None:
        y = y + bias.reshape(c_out, *(1,) * n)
    return y[0] if unbatched else y


def _product(x, weight, cols, groups):
    """The kernels (C_out, C_in / groups, *kernel) times the columns (N, C_in, K, L) of x:
    (N, C_out, L), or (C_out, L) when N * groups == 1."""
    c_out, c_group = weight.shape[:2]
    N, K, L = x.shape[0], cols.shape[2], cols.shape[3]
    if N * groups == 1:
        # one product, as a plain 2-D matmul: the lazy device runs it with the bias and
        # activation that follow as its epilogue (one kernel: lazy/epilogue.py)
        return weight.reshape(c_out, c_group * K) @ cols.reshape(c_group * K, L)
    rows, cols = weight.reshape(groups, c_out // groups, c_group * K), cols.reshape(N, groups, c_group * K, L)
    if L < c_out // groups:
        return _samples_apart(rows @ _samples_side_by_side(cols), N)
    # (N, groups, C_in / groups * K, L) columns against (groups, C_out / groups, C_in / groups * K) rows
    return rows @ cols


def _samples_side_by_side(t):
    """(N, groups, R, L) as (groups, R, N * L), each sample's L columns beside the last's (a
    copy), so that one product per group covers the whole batch. A product per sample reads
    the whole weight for its L columns: where L is smaller than the weight's rows (the late
    layers of a network, a 2x2 or 1x1 output), reading it is most of the work, and the
    weight's gradient would be one product per sample, each larger than the sample's
    columns, summed only at the end."""
    N, groups, R, L = t.shape
    return t.permute(1, 2, 0, 3).reshape(groups, R, N * L)


def _samples_apart(y, N):
    """A product's (groups, R, N * L) back as (N, groups * R, L): a view."""
    groups, R, NL = y.shape
    return y.reshape(groups * R, N, NL // N).permute(1, 0, 2)


# Inference convolves in chunks of output rows whose columns take about CHUNK_BYTES when
# the whole column matrix would take more than CHUNK_ABOVE: the columns of a large input
# (113 MB for a 3x3 convolution of 48 channels at 256x256) never exist whole. Smaller ones
# (a few activations' worth: ResNet-50's largest are 7.4 MB) are made whole, as each chunk
# costs a copy of its product into the output and a smaller, less efficient product.
CHUNK_BYTES = 1 << 22
CHUNK_ABOVE = 1 << 24


def _chunks(x, weight, bias, kernel, stride, before, after, dilation):
    """Whether conv runs in chunks (``_conv_chunked``): no gradient is recorded (im2col's
    columns would be saved for the backward pass: whole), the device has the im2col
    kernel, the windows are not the input itself (no columns to bound) and the columns
    exceed CHUNK_ABOVE."""
    if is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias)):
        return False
    if _identity(kernel, stride, before, after) or not native(x, "im2col"):
        return False
    out = _extents(x.shape[2:], kernel, stride, before, after, dilation)
    return numel(x.shape[:2]) * numel(kernel) * numel(out) * x.dtype.itemsize > CHUNK_ABOVE


def _conv_chunked(x, weight, kernel, stride, before, after, dilation, groups):
    """conv without a gradient, its columns made and multiplied a few samples at a time
    where one sample's columns fit CHUNK_BYTES (``_conv_samples``), else a few output rows
    (along the first spatial dimension) of every sample at a time, each chunk's product
    written into its rows of the output: the columns take about CHUNK_BYTES whatever the
    input's size. A band's windows read a band of input rows, which im2col gets as a slice
    with the padding before it that remains (the rows above the slice are input rows, not
    padding: the slice starts where the band does, so only true padding is ``before`` it)."""
    spatial = x.shape[2:]
    out = _extents(spatial, kernel, stride, before, after, dilation)
    N, c_out = x.shape[0], weight.shape[0]
    per_sample = x.shape[1] * numel(kernel) * numel(out) * x.dtype.itemsize
    if N > 1 and per_sample <= CHUNK_BYTES:
        return _conv_samples(x, weight, kernel, stride, before, dilation, groups, out, CHUNK_BYTES // per_sample)
    per_row = numel(x.shape[:2]) * numel(kernel) * numel(out[1:]) * x.dtype.itemsize
    rows = max(1, CHUNK_BYTES // per_row)
    y = zeros((N, c_out) + out, dtype=x.dtype, device=x.device)
    for r0 in range(0, out[0], rows):
        r1 = min(out[0], r0 + rows)
        start = r0 * stride[0] - before[0]                             # the band's first row
        end = (r1 - 1) * stride[0] - before[0] + (kernel[0] - 1) * dilation[0] + 1
        if end <= 0 or start >= spatial[0]:
            continue                                    # windows in the padding alone: 0
        a, b = max(0, start), min(spatial[0], end)
        band = x[:, :, a:b]
        chunk = (r1 - r0,) + out[1:]
        cols = window_kernels.Im2col.apply(band, kernel, stride, (a - start,) + before[1:], dilation, chunk, 0)
        y[:, :, r0:r1] = _product(x, weight, cols, groups).reshape((N, c_out) + chunk)
    return y


def _conv_samples(x, weight, kernel, stride, before, dilation, groups, out, n):
    """conv without a gradient, ``n`` whole samples at a time: a batch of images each small
    enough for its columns to fit a chunk (bands of output rows across the whole batch would
    each make a product of a few columns per image)."""
    N, c_out = x.shape[0], weight.shape[0]
    y = empty((N, c_out) + out, dtype=x.dtype, device=x.device)
    for n0 in range(0, N, n):
        part = x[n0:n0 + n]
        cols = window_kernels.Im2col.apply(part, kernel, stride, before, dilation, out, 0)
        y[n0:n0 + n] = _product(part, weight, cols, groups).reshape((part.shape[0], c_out) + out)
    return y


def conv_direct(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The convolution by its definition, the seven nested loops of the device's
    ``conv_direct`` kernel (backend.py; csrc/convolution_t.h): conv's arguments and result,
    n-d from the weight's dimensions, without autograd. The first rung of the chapter's
    speed ladder, and an oracle for the im2col path."""
    n = getattr(weight, "ndim", 0) - 2
    if n < 1:
        raise ValueError(f"conv_direct: expected a weight (C_out, C_in / groups, kernel...) with at least "
                         f"one kernel dimension, got {getattr(weight, 'shape', type(weight).__name__)}")
    x, unbatched, kernel, stride, before, after, dilation = _conv_args(
        x, weight, stride, padding, dilation, groups, n, "conv_direct")
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (weight.shape[0],)):
        raise ValueError(f"conv_direct: expected a bias of shape ({weight.shape[0]},), "
                         f"got {getattr(bias, 'shape', type(bias).__name__)}")
    if len({x.device, weight.device} | ({bias.device} if bias is not None else set())) != 1:
        raise ValueError("conv_direct: x, weight and bias must be on one device")
    dtype = dtypes.promote(x.dtype, weight.dtype)
    if not dtype.is_floating_point:
        raise TypeError(f"conv_direct: expected floating-point tensors, got {x.dtype} and {weight.dtype}")
    x, weight = x.to(dtype=dtype), weight.to(dtype=dtype)
    bias = None if bias is None else bias.to(dtype=dtype)
    out = _extents(x.shape[2:], kernel, stride, before, after, dilation)
    y = window_kernels.conv_direct(x, weight, bias, stride, before, dilation, groups, out)
    return y[0] if unbatched else y


def _fold(cols, spatial, kernel, stride, before, after, dilation):
    """col2im: columns (N, C, K * L) of the windows of an input of ``spatial`` extents, each
    added back at the input position it was read from (the padding's element dropped):
    the transpose of ``_gather``, and so a convolution's gradient with respect to its input."""
    key = (spatial, kernel, stride, before, after, dilation, False)
    N, C, P = cols.shape[0], cols.shape[1], numel(spatial)
    if native(cols, "col2im"):
        out = tuple(output_size(*a) for a in zip(spatial, kernel, stride, before, after, dilation))
        cols = cols.reshape(N, C, numel(kernel), numel(out))
        return window_kernels.Col2im.apply(cols, spatial, kernel, stride, before, dilation, out), out
    indices, out, _ = windows(*key)
    rows = IndexAdd.apply(cols, (N, C, P + 1), 2, constant_tensor(key, cols.device, indices))
    return rows[:, :, :P].reshape(N, C, *spatial), out


def conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, n=2):
    """The transposed convolution (PyTorch's conv_transpose1d/2d): the gradient of a
    convolution with respect to its input, used as a layer that upsamples. x (N, C_in,
    *spatial), weight (C_in, C_out / groups, *kernel): each input position adds its values
    times the kernels into the output window it maps to (col2im of W^T x)."""
    what = f"conv_transpose{n}d"
    x, unbatched = _batched(x, n, what)
    if weight.ndim != n + 2 or x.shape[1] != weight.shape[0] or weight.shape[0] % groups:
        raise ValueError(f"{what}: input of {x.shape[1]} channels needs a weight (C_in = {x.shape[1]}, "
                         f"C_out / groups, kernel...) with C_in divisible by groups={groups}, got {weight.shape}")
    c_in, c_group, kernel = weight.shape[0], weight.shape[1], weight.shape[2:]
    stride, dilation = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
    pad, extra = _tuple(padding, n, "padding"), _tuple(output_padding, n, "output_padding")
    if any(e >= max(s, d) or e < 0 for e, s, d in zip(extra, stride, dilation)):
        raise ValueError(f"{what}: output_padding {extra} must be smaller than stride {stride} or dilation {dilation}")
    spatial = tuple((i - 1) * s - 2 * p + d * (k - 1) + e + 1
                    for i, s, p, d, k, e in zip(x.shape[2:], stride, pad, dilation, kernel, extra))
    if any(s < 1 for s in spatial):
        raise ValueError(f"{what}: the output would have extents {spatial}")
    N, L, K = x.shape[0], numel(x.shape[2:]), numel(kernel)
    # (groups, C_out / groups * K, C_in / groups) rows against (N, groups, C_in / groups, L)
    w = weight.reshape(groups, c_in // groups, c_group * K).transpose(-2, -1)
    planes = x.reshape(N, groups, c_in // groups, L)
    y = _samples_apart(w @ _samples_side_by_side(planes), N) if L < c_group * K else w @ planes
    cols = y.reshape(N, groups * c_group, K * L)
    # the windows of a convolution of the output whose padding after is output_padding short
    # (so exactly the input's extents of them fit): the extra positions are read by none of
    # them and get the bias alone
    after = tuple(p - e for p, e in zip(pad, extra))
    y, out = _fold(cols, spatial, kernel, stride, pad, after, dilation)
    if out != x.shape[2:]:
        raise ValueError(f"{what}: input extents {x.shape[2:]} do not come from an output of {spatial}")
    if bias is not None:
        y = y + bias.reshape(groups * c_group, *(1,) * n)
    return y[0] if unbatched else y


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col as a public op (PyTorch's F.unfold, 4-d input): (N, C * K, L), each column one
    window of the zero-padded input, kernel positions fastest within each channel."""
    x = input
    if x.ndim != 4:
        raise ValueError(f"unfold: expected a 4-d input (N, C, H, W), got shape {x.shape}")
    kernel, stride = _tuple(kernel_size, 2, "kernel_size"), _tuple(stride, 2, "stride")
    dilation, pad = _tuple(dilation, 2, "dilation"), _tuple(padding, 2, "padding")
    cols, out = _gather(x, kernel, stride, pad, pad, dilation, 0)
    return cols.reshape(x.shape[0], x.shape[1] * numel(kernel), numel(out))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im (PyTorch's F.fold): (N, C * K, L) columns summed back into (N, C, *output_size),
    overlapping windows adding up; unfold's transpose."""
    spatial, kernel = _tuple(output_size, 2, "output_size"), _tuple(kernel_size, 2, "kernel_size")
    stride, dilation, pad = _tuple(stride, 2, "stride"), _tuple(dilation, 2, "dilation"), _tuple(padding, 2, "padding")
    K = numel(kernel)
    L = numel(windows(spatial, kernel, stride, pad, pad, dilation)[1])
    if input.ndim != 3 or input.shape[1] % K or input.shape[2] != L:
        raise ValueError(f"fold: expected input (N, C * {K}, {L}) for output_size {spatial} and "
                         f"kernel_size {kernel}, got shape {input.shape}")
    N, C = input.shape[0], input.shape[1] // K
    return _fold(input.reshape(N, C, K * L), spatial, kernel, stride, pad, pad, dilation)[0]


@functools.lru_cache(maxsize=256)
def adaptive_windows(spatial, out):
    """The windows of adaptive pooling: output position i along a dimension of size s
    covers [floor(i s / o), ceil((i + 1) s / o)), so windows differ in size. Laid out as
    ``windows`` lays its table, each window padded to the largest with the extra element:
    (indices, counts of real positions)."""
    spans = [[(i * s // o, -(-(i + 1) * s // o)) for i in range(o)] for s, o in zip(spatial, out)]
    width = [max(b - a for a, b in span) for span in spans]
    starts, offsets = _grid(out), _grid(width)
    indices, counts = [], [0] * len(starts)
    for k in offsets:
        for j, o in enumerate(starts):
            flat, ok = 0, True
            for d in range(len(spatial)):
                a, b = spans[d][o[d]]
                ok = ok and a + k[d] < b
                flat = flat * spatial[d] + a + k[d]
            indices.append(flat if ok else numel(spatial))
            counts[j] += ok
    return indices, numel(width), counts


def adaptive_pool(x, output_size, reduce, n=2, return_indices=False):
    """Adaptive average or max pooling (PyTorch's adaptive_avg_pool2d, adaptive_max_pool2d):
    windows sized to give exactly ``output_size``. With ``return_indices`` (max), also each
    maximum's flat position in its input plane, as max_pool's."""
    what = f"adaptive_{reduce}_pool{n}d"
    x, unbatched = _batched(x, n, what)
    spatial = x.shape[2:]
    out = tuple(s if o is None else o for s, o in zip(spatial, _tuple_or_none(output_size, n)))
    if any(o < 1 for o in out):
        raise ValueError(f"{what}: output_size must be positive, got {output_size!r}")
    key = ("adaptive", spatial, out)
    indices, K, counts = adaptive_windows(spatial, out)
    N, C, L = *x.shape[:2], numel(out)
    cols = _read(x, indices, key, 0 if reduce == "avg" else -math.inf, K, L)
    if reduce == "avg":
        y = cols.sum(dim=2) / constant_tensor(("counts",) + key, x.device, counts, x.dtype)
    else:
        y = cols.max(dim=2).values
    y = y.reshape(N, C, *out)
    if not return_indices:
        return y[0] if unbatched else y
    table = constant_tensor(("adaptive table",) + key, x.device, indices)          # K * L positions
    flat = cols.argmax(dim=2) * L + arange(L, dtype=dtypes.int64, device=x.device)
    where = IndexSelect.apply(table, 0, flat.reshape(-1)).reshape(N, C, *out)
    return (y[0], where[0]) if unbatched else (y, where)


def _tuple_or_none(value, n):
    """output_size: an int, or n entries each an int or None (keep that extent)."""
    if isinstance(value, int):
        return (value,) * n
    values = tuple(value)
    if len(values) != n or not all(v is None or isinstance(v, int) for v in values):
        raise ValueError(f"output_size must be an int or {n} ints (or None), got {value!r}")
    return values


def _pool_args(kernel_size, stride, padding, dilation, n, what):
    kernel = _tuple(kernel_size, n, "kernel_size")
    stride = kernel if stride is None or stride == () else _tuple(stride, n, "stride")
    pad, dilation = _tuple(padding, n, "padding"), _tuple(dilation, n, "dilation")
    if any(v < 1 for v in kernel + stride + dilation) or any(p < 0 for p in pad):
        raise ValueError(f"{what}: kernel_size, stride and dilation must be positive and padding "
                         f"non-negative, got {kernel}, {stride}, {pad}, {dilation}")
    if any(2 * p > k for p, k in zip(pad, kernel)):
        raise ValueError(f"{what}: padding should be at most half of kernel_size, got padding "
                         f"{pad} for kernel_size {kernel}")
    return kernel, stride, pad, dilation


def max_pool(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
             return_indices=False, n=2):
    """The largest value of each window (PyTorch's max_pool1d/2d). With ``return_indices``,
    also each maximum's flat position in its input plane (what max_unpool takes)."""
    what = f"max_pool{n}d"
    x, unbatched = _batched(x, n, what)
    kernel, stride, pad, dilation = _pool_args(kernel_size, stride, padding, dilation, n, what)
    if native(x, "max_pool"):                       # one pass, the positions kept
        out = _extents(x.shape[2:], kernel, stride, pad, pad, dilation, ceil_mode)
        y, where = window_kernels.max_pool(x, kernel, stride, pad, dilation, out)
        if not return_indices:
            return y[0] if unbatched else y
        return (y[0], where[0]) if unbatched else (y, where)
    cols, out = _gather(x, kernel, stride, pad, pad, dilation, -math.inf, ceil_mode)
    y = cols.max(dim=2).values.reshape(*x.shape[:2], *out)
    if not return_indices:
        return y[0] if unbatched else y
    key = (x.shape[2:], kernel, stride, pad, pad, dilation, ceil_mode)
    table = constant_tensor(key, x.device, windows(*key)[0])            # K * L positions
    L = numel(out)
    k = cols.argmax(dim=2)                                           # (N, C, L)
    flat = k * L + arange(L, dtype=dtypes.int64, device=x.device)
    where = IndexSelect.apply(table, 0, flat.reshape(-1)).reshape(*x.shape[:2], *out)
    return (y[0], where[0]) if unbatched else (y, where)


def avg_pool(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, n=2):
    """The mean of each window (PyTorch's avg_pool1d/2d): divided by the window's positions
    inside the padded input (``count_include_pad``) or inside the input alone."""
    what = f"avg_pool{n}d"
    x, unbatched = _batched(x, n, what)
    kernel, stride, pad, dilation = _pool_args(kernel_size, stride, padding, 1, n, what)
    cols, out = _gather(x, kernel, stride, pad, pad, dilation, 0, ceil_mode)
    padded, inside = windows(x.shape[2:], kernel, stride, pad, pad, dilation, ceil_mode)[2]
    key = ("divisor", count_include_pad, x.shape[2:], kernel, stride, pad, ceil_mode)
    divisor = constant_tensor(key, x.device, padded if count_include_pad else inside, x.dtype)
    y = (cols.sum(dim=2) / divisor).reshape(*x.shape[:2], *out)
    return y[0] if unbatched else y


# ---- PyTorch's names ------------------------------------------------------------------------

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv(input, weight, bias, stride, padding, dilation, groups, n=1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv(input, weight, bias, stride, padding, dilation, groups, n=2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv(input, weight, bias, stride, padding, dilation, groups, n=3)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n=1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, n=2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, n=1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, n=2)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n=1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n=2)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n=3)


def adaptive_avg_pool2d(input, output_size):
    return adaptive_pool(input, output_size, "avg", n=2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return adaptive_pool(input, output_size, "max", 2, return_indices)
