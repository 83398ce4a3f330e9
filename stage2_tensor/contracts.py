"""What a kernel may assume about how its arguments fit together: the checks the kernel
declarations (kernels/) share.

A kernel's declaration raises ValueError, naming the kernel, the argument and the shapes,
when its arguments disagree (a source shorter than its index, a target list shorter than
the batch, a gradient of another shape than its parameter). A C kernel would read or write
past a buffer instead; the python kernels would compute something silently wrong. Every
check is a few comparisons of shape tuples, per call or per parameter, never per element.
Native devices run a kernel's check before handing views to C (``binary``, ``where`` and
``write``, which run for every element-wise operation, compare the shapes inline and call it
only to raise); a lazy device runs it when it records a call, so the error comes from the
operation that made it rather than from a later read; the python device runs those of
write, index_add and the optimizer updates, whose loops would otherwise stop at the shorter
view.
"""
from . import dtypes
from .strides import make_strides, numel

REDUCTIONS = ("none", "sum", "mean")     # the loss kernels' reductions, in their C code order
PAD_CODES = ("constant", "reflect", "replicate", "circular")     # the C kernels' mode numbers
INTERPOLATE_MODES = ("nearest", "linear")
LIMIT = 1 << 62                         # every size and position a window kernel computes fits int64


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


def same_dtype(kernel, view, dtype, why=""):
    """Raise unless dtype is the view's: a kernel that moves elements without computing."""
    if dtype is not view.dtype:
        raise ValueError(f"{kernel}: dtype {dtype} differs from the view's {view.dtype}{why}")


def reduced_dims(kernel, dims, ndim):
    """Distinct dimensions of a view of ndim dimensions (a reduction's)."""
    for d in dims:
        if not (type(d) is int and 0 <= d < ndim):
            bad_dim(kernel, d, ndim)
    if len(set(dims)) != len(dims):
        raise ValueError(f"{kernel}: dims {tuple(dims)} name a dimension twice")


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


def plane_sizes(kernel_name, planes, sizes):
    """Element counts (planes times each of ``sizes``) that fit int64 (and so a buffer);
    with no planes, the sizes of one (the kernels compute them whatever the count)."""
    for size in sizes:
        if max(planes, 1) * size >= LIMIT:
            raise ValueError(f"{kernel_name}: {planes} planes of {size} elements: too many "
                             "elements for a buffer")


def planes_of(kernel_name, what, view, spatial):
    """A view (N, C, *spatial): returns N * C."""
    if len(view.shape) != 2 + len(spatial) or tuple(view.shape[2:]) != tuple(spatial):
        raise ValueError(f"{kernel_name}: {what} has shape {tuple(view.shape)}, expected "
                         f"(N, C, {', '.join(map(str, spatial))})")
    return view.shape[0] * view.shape[1]


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


def ints(kernel, what, values, n, low):
    if not (isinstance(values, (tuple, list)) and len(values) == n and all(type(v) is int for v in values)
            and all(low <= v < LIMIT for v in values)):
        raise ValueError(f"{kernel}: {what} must be a tuple of {n} ints from {low} below 2^62, "
                         f"one per padded dimension, got {values!r}")


def padding(kernel, spatial, before, after, mode):
    """before and after: n non-negative ints each (the view's last n dimensions), within what
    ``mode`` can read (sampling_grid.pad_source): reflect smaller than the dimension,
    circular at most as large, replicate of a non-empty one."""
    n = len(before) if isinstance(before, (tuple, list)) else -1
    if not 1 <= n <= 16 or len(spatial) < n:
        raise ValueError(f"{kernel}: before must be a tuple of 1 to 16 ints, at most one per dimension "
                         f"of a {len(spatial)}-d view, got {before!r}")
    ints(kernel, "before", before, n, 0)
    ints(kernel, "after", after, n, 0)
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
