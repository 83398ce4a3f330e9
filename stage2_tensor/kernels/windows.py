"""Windows, for convolution and pooling (window_kernels.py; without them convolution.py
gathers through index tables). A view x (N, C, *spatial) is N * C planes; kernel, stride,
before (the padding before each dimension), dilation and out (the output's extents) are
tuples of n ints, one per spatial dimension; output position o reads the input at o * stride
- before + k * dilation for kernel position k (each row-major; K = numel(kernel) positions,
L = numel(out) outputs), in the padding where that is outside the input. contracts.windows
checks a geometry first: n from 1 to 16, extents, strides and dilations positive, padding
non-negative, every position and size below 2^62."""
from .. import dtypes
from ..contracts import LIMIT, destination, differ, plane_sizes, planes_of, windows
from ..strides import numel
from . import kernel

GEOMETRY = "const i64 *kernel_size, const i64 *stride, const i64 *before, const i64 *dilation, const i64 *out"


@kernel("cols", float_only=True, fails=True,
        native=f"i64 planes, int n, const i64 *spatial, {GEOMETRY}, const T *view, double fill, T *cols",
        sizes=lambda view, *_: {"planes": numel(view.shape[:2]), "n": len(view.shape) - 2,
                                "spatial": tuple(view.shape[2:])})
def im2col(view: "dense", kernel_size: "ints", stride: "ints", before: "ints", dilation: "ints", out: "ints",
           fill: "float", dtype: "dtype"):
    """Each plane's windows as columns (N, C, K, L): what window l reads at position k, `fill`
    (0, or -inf for a maximum) in the padding."""
    n = windows("im2col", tuple(view.shape[2:]), kernel_size, stride, before, dilation, out)
    planes = planes_of("im2col", "view", view, view.shape[2:2 + n])
    plane_sizes("im2col", planes, (numel(view.shape[2:]), numel(kernel_size) * numel(out)))
    return [(tuple(view.shape[:2]) + (numel(kernel_size), numel(out)), dtype)]


@kernel("x", float_only=True, fails=True,
        native=f"i64 planes, int n, const i64 *spatial, {GEOMETRY}, const T *cols, T *x",
        sizes=lambda cols, spatial, *_: {"planes": numel(cols.shape[:2]), "n": len(spatial)})
def col2im(cols: "dense", spatial: "ints", kernel_size: "ints", stride: "ints", before: "ints", dilation: "ints",
           out: "ints", dtype: "dtype"):
    """im2col's adjoint: zeros (N, C, *spatial) with each element of cols (N, C, K, L) added at
    the position it was read from (those in the padding dropped)."""
    windows("col2im", spatial, kernel_size, stride, before, dilation, out)
    if len(cols.shape) != 4 or tuple(cols.shape[2:]) != (numel(kernel_size), numel(out)):
        raise ValueError(f"col2im: cols has shape {tuple(cols.shape)}, expected (N, C, "
                         f"{numel(kernel_size)}, {numel(out)}) (N, C, kernel positions, output positions)")
    plane_sizes("col2im", cols.shape[0] * cols.shape[1], (numel(spatial), numel(kernel_size) * numel(out)))
    return [(tuple(cols.shape[:2]) + tuple(spatial), dtype)]


def _convolution(kernel_name, x, weight, bias, stride, before, dilation, groups, out):
    spatial, kernel_size = tuple(x.shape[2:]), tuple(weight.shape[2:])
    n = windows(kernel_name, spatial, kernel_size, stride, before, dilation, out)
    if len(x.shape) != n + 2 or len(weight.shape) != n + 2:
        raise ValueError(f"{kernel_name}: x {tuple(x.shape)} and weight {tuple(weight.shape)} must "
                         f"both be (N or C_out, C, *{n} spatial extents)")
    c_in, c_out = x.shape[1], weight.shape[0]
    if not (type(groups) is int and groups >= 1 and c_out % groups == 0 and weight.shape[1] * groups == c_in):
        raise ValueError(f"{kernel_name}: x of {c_in} channels, weight {tuple(weight.shape)} and "
                         f"groups={groups!r}: expected C_in = weight.shape[1] * groups, C_out divisible by groups")
    if bias is not None and tuple(bias.shape) != (c_out,):
        differ(kernel_name, "bias", bias.shape, (c_out,))
    plane_sizes(kernel_name, x.shape[0] * max(c_in, c_out), (numel(spatial), numel(kernel_size) * numel(out)))
    return (x.shape[0], c_out) + tuple(out)


@kernel("y", float_only=True,
        native="i64 batch, i64 c_in, i64 c_out, i64 groups, int n, const i64 *spatial, const i64 *kernel_size, "
               "const i64 *stride, const i64 *before, const i64 *dilation, const i64 *out, const T *x, "
               "const T *weight, const T *bias, T *y",
        sizes=lambda x, weight, *_: {"batch": x.shape[0], "c_in": x.shape[1], "c_out": weight.shape[0],
                                     "n": len(x.shape) - 2, "spatial": tuple(x.shape[2:]),
                                     "kernel_size": tuple(weight.shape[2:])})
def conv_direct(x: "dense", weight: "dense", bias: "dense?", stride: "ints", before: "ints", dilation: "ints",
                groups: "int", out: "ints", dtype: "dtype"):
    """The convolution by its definition (N, C_out, *out): weight (C_out, C / groups,
    *kernel), bias C_out values or None; no gradient (a test oracle)."""
    return [(_convolution("conv_direct", x, weight, bias, stride, before, dilation, groups, out), dtype)]


@kernel("y?", role="into", optional=True)
def conv_bands(x: "dense", weight: "dense", bias: "dense?", stride: "ints", before: "ints", dilation: "ints",
               groups: "int", out: "ints", relu: "bool", band_rows: "int", dst: "view?", dtype: "dtype"):
    """conv_direct's result (float32, float64; no gradient), ReLU'd when `relu`, computed as
    im2col and a matrix product band_rows output rows (all dims but the last) at a time
    inside one kernel: the columns never exist whole. Into `dst` (a view of the result's
    shape, each plane row-major, planes apart, sharing no byte with the inputs; returns
    None) or a new buffer (returned)."""
    shape = _convolution("conv_bands", x, weight, bias, stride, before, dilation, groups, out)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"conv_bands: expected float32 or float64, got {dtype}")
    if type(relu) is not bool or type(band_rows) is not int or not 1 <= band_rows < LIMIT:
        raise ValueError(f"conv_bands: relu must be a bool and band_rows a positive int, got "
                         f"{relu!r}, {band_rows!r}")
    if dst is not None:
        destination("conv_bands", dst, shape, dtype)
        return [None]
    return [(shape, dtype)]


def _pool(kernel_name, view, kernel_size, stride, before, dilation, out):
    n = windows(kernel_name, tuple(view.shape[2:]), kernel_size, stride, before, dilation, out)
    planes = planes_of(kernel_name, "view", view, view.shape[2:2 + n])
    plane_sizes(kernel_name, planes, (numel(view.shape[2:]), numel(kernel_size) * numel(out)))
    return tuple(view.shape[:2]) + tuple(out)


@kernel("values, where", float_only=True)
def max_pool(view: "dense", kernel_size: "ints", stride: "ints", before: "ints", dilation: "ints", out: "ints",
             dtype: "dtype"):
    """The maxima (N, C, *out) and their flat positions in the plane as int64: the first of
    equal values, a NaN over any number, never the padding."""
    shape = _pool("max_pool", view, kernel_size, stride, before, dilation, out)
    return [(shape, dtype), (shape, dtypes.int64)]


@kernel("", role="into", optional=True)
def max_pool_into(view: "dense", kernel_size: "ints", stride: "ints", before: "ints", dilation: "ints", out: "ints",
                  dst: "view", dtype: "dtype"):
    """max_pool's maxima alone (inference: no positions) written into `dst` (float32,
    float64; a view of the result's shape, as conv_bands' dst)."""
    shape = _pool("max_pool_into", view, kernel_size, stride, before, dilation, out)
    destination("max_pool_into", dst, shape, dtype)
    return []


@kernel("dx", float_only=True)
def max_pool_backward(grad: "dense", where: "index", spatial: "ints", dtype: "dtype"):
    """Zeros (N, C, *spatial) with grad (N, C, *out) added at the positions `where` (-1: none;
    one outside the plane raises backend.bad_position)."""
    if tuple(where.shape) != tuple(grad.shape) or len(grad.shape) < 3:
        raise ValueError(f"max_pool_backward: grad {tuple(grad.shape)} and where {tuple(where.shape)} "
                         "must be one shape (N, C, *out)")
    spatial = tuple(spatial)
    if len(spatial) != len(grad.shape) - 2 or not all(type(s) is int and s >= 0 for s in spatial):
        raise ValueError(f"max_pool_backward: spatial {spatial!r} must be {len(grad.shape) - 2} "
                         "non-negative ints, the input's extents")
    plane_sizes("max_pool_backward", grad.shape[0] * grad.shape[1], (numel(spatial), numel(grad.shape[2:])))
    return [(tuple(grad.shape[:2]) + spatial, dtype)]
