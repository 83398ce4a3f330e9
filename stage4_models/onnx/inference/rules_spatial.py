"""Shape rules of the windowed and resizing operators (chapter 13, "13_inference_compiler":
symbolic shapes): Conv, ConvTranspose, MaxPool, AveragePool, the global pools, Resize,
Upsample, Pad, Slice, DepthToSpace, SpaceToDepth. The formulas are those of
operators/conv.py, pooling.py, resize.py and slicing.py, written on expressions.
"""
import math
from fractions import Fraction

from ..symbolic import as_expr, ceildiv
from . import rule
from .values import TO_THE_END, CannotInfer, Sym, const_ints, dmax, dmin, ints, shape, sign


def _ints_attr(node, key, default):
    value = node.attr(key, default)
    if isinstance(value, int):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) for v in value):
        raise CannotInfer(f"attribute {key} is not a list of ints")
    return list(value)


def _extents(node, spatial, kernel, ceil_mode=False):
    """The output extents of a windowed op. auto_pad SAME_UPPER or SAME_LOWER pads by
    max((ceil(L/s) - 1) s + (k - 1) d + 1 - L, 0) in all, which makes the extent ceil(L / s)
    exactly, in floor and in ceil mode (the padded span is then a multiple of s, or the
    unpadded window count already ceil(L / s)): that short form, not the max, is kept."""
    n = len(kernel)
    strides = _ints_attr(node, "strides", [1] * n)
    dilations = _ints_attr(node, "dilations", [1] * n)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return [ceildiv(size, s) for size, s in zip(spatial, strides)]
    if auto_pad == "VALID":
        pads = [0] * 2 * n
    elif auto_pad in ("NOTSET", ""):
        pads = _ints_attr(node, "pads", [0] * 2 * n)
    else:
        raise CannotInfer(f"auto_pad {auto_pad!r}")
    # pooling.py pads first where the pads are unequal or over half the kernel: its windows
    # then see no padding, and a last window may start in what was the end padding
    padded_first = pads[:n] != pads[n:] or any(2 * p > k for p, k in zip(pads[:n], kernel))
    return [window_extent(L, k, s, d, b, e, ceil_mode, padded_first) for L, k, s, d, b, e in
            zip(spatial, kernel, strides, dilations, pads[:n], pads[n:])]


def window_extent(size, k, s, d, begin, end, ceil_mode=False, padded_first=False):
    """A window's output extent: floor or ceil of (L + pads - d (k - 1) - 1) / s, plus 1;
    with ceil_mode a last window that would start in the end padding is dropped, as
    stage2_tensor.convolution.output_size does (where the input was padded first, its
    padding is part of the input: only windows starting past L + begin + end are)."""
    span = size + begin + end - d * (k - 1) - 1
    if not ceil_mode:
        return span // s + 1
    return dmin(ceildiv(span, s) + 1, ceildiv(size + begin + (end if padded_first else 0), s))


@rule("Conv")
def conv(inf, node, ins):
    x, w = shape(ins[0]), shape(ins[1])
    kernel = _ints_attr(node, "kernel_shape", [int(k) for k in w[2:]])
    group = node.attr("group", 1)
    inf_channels = w[1] * group
    if inf_channels.is_constant() and x[1].is_constant() and inf_channels != x[1]:
        raise CannotInfer("the channels do not match")          # the operator says so at run time
    return [Sym((x[0], w[0], *_extents(node, x[2:], kernel)), ins[0].dtype)]


@rule("ConvTranspose")
def conv_transpose(inf, node, ins):
    x, w = shape(ins[0]), shape(ins[1])
    n = len(w) - 2
    kernel = _ints_attr(node, "kernel_shape", [int(k) for k in w[2:]])
    strides = _ints_attr(node, "strides", [1] * n)
    dilations = _ints_attr(node, "dilations", [1] * n)
    out_pad = _ints_attr(node, "output_padding", [0] * n)
    output_shape = node.attr("output_shape")
    auto_pad = node.attr("auto_pad", "NOTSET")
    channels = w[1] * node.attr("group", 1)
    if output_shape is not None:
        spatial = [as_expr(o) for o in _ints_attr(node, "output_shape", None)[-n:]]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        spatial = [i * s for i, s in zip(x[2:], strides)]
    else:
        pads = [0] * 2 * n if auto_pad == "VALID" else _ints_attr(node, "pads", [0] * 2 * n)
        spatial = [s * (i - 1) + op + (k - 1) * d + 1 - pb - pe for i, s, op, k, d, pb, pe in
                   zip(x[2:], strides, out_pad, kernel, dilations, pads[:n], pads[n:])]
    return [Sym((x[0], channels, *spatial), ins[0].dtype)]


@rule("MaxPool", "AveragePool")
def pool(inf, node, ins):
    x = shape(ins[0])
    kernel = _ints_attr(node, "kernel_shape", None)
    y = Sym((*x[:2], *_extents(node, x[2:], kernel, bool(node.attr("ceil_mode", 0)))), ins[0].dtype)
    return [y, Sym(y.shape, "int64")]            # MaxPool's Indices (refused at run time)


@rule("GlobalAveragePool", "GlobalMaxPool")
def global_pool(inf, node, ins):
    x = shape(ins[0])
    return [Sym((*x[:2], *[1] * (len(x) - 2)), ins[0].dtype)]


def scaled(size, factor):
    """floor(size * factor), as resize.py computes it: exact for a factor that is a short
    binary fraction (2.0, 0.5, 1.5: floor(X * p / q) == (p X) // q); another factor on a
    symbolic extent cannot be written exactly (floats round)."""
    size = as_expr(size)
    if size.is_constant():
        return as_expr(int(math.floor(size.const * factor)))
    f = Fraction(factor)
    if f.denominator > 1024:
        raise CannotInfer(f"the scale {factor} is not a short binary fraction")
    return (f.numerator * size) // f.denominator


def _floats(sym, what):
    if sym is None or sym.value is None:
        raise CannotInfer(f"{what} is not known at import")
    return [float(v) if isinstance(v, float) else float(int(v)) for v in sym.value.reshape(-1)]


def _resized(inf, node, x, dtype, scales=None, sizes=None):
    """The resized shape; a dim whose scale has no exact expression becomes a fresh symbol
    (and a fallback listed), the others stay exact."""
    if sizes is not None:
        return [Sym(sizes, dtype)]
    if len(scales) != len(x):
        raise CannotInfer("one scale per dim is needed")
    out = []
    for d, f in zip(x, scales):
        try:
            out.append(scaled(d, f))
        except CannotInfer as e:
            inf.fallbacks.append((node, f"CannotInfer: {e}"))
            out.append(inf.fresh(node.name))
    return [Sym(out, dtype)]


@rule("Upsample")
def upsample(inf, node, ins):
    x = shape(ins[0])
    scales = node.attr("scales") if node.opset < 9 else _floats(ins[1], "scales")
    if not isinstance(scales, list):
        raise CannotInfer("scales are missing")
    return _resized(inf, node, x, ins[0].dtype, [float(f) for f in scales])


@rule("Resize")
def resize(inf, node, ins):
    x = shape(ins[0])
    if node.opset < 11:
        return _resized(inf, node, x, ins[0].dtype, _floats(ins[1], "scales"))
    scales = ins[2] if len(ins) > 2 else None
    if scales is not None and scales.value is not None and scales.value.size == 0:
        scales = None
    if scales is not None:
        return _resized(inf, node, x, ins[0].dtype, _floats(scales, "scales"))
    return _resized(inf, node, x, ins[0].dtype, sizes=ints(ins[3] if len(ins) > 3 else None, "sizes"))


@rule("Pad")
def pad(inf, node, ins):
    x = shape(ins[0])
    if node.opset < 11:
        pads = [as_expr(p) for p in _ints_attr(node, "pads" if node.opset >= 2 else "paddings", None)]
    else:
        pads = ints(ins[1], "pads")
    axes = list(range(len(x)))
    if len(ins) > 3 and ins[3] is not None:
        axes = [a % len(x) for a in const_ints(ins[3], "axes")]
    if len(pads) != 2 * len(axes):
        raise CannotInfer("pads do not fit the axes")
    out = list(x)
    for i, a in enumerate(axes):
        out[a] = out[a] + pads[i] + pads[i + len(axes)]
    return [Sym(out, ins[0].dtype)]


def _clamped(bound, size, low, high):
    """ONNX's clamp of a slice bound: a negative one counts from the end, then into
    [low, size + high]; a constant from TO_THE_END on is the end itself."""
    bound = as_expr(bound)
    if bound.is_constant() and abs(bound.const) >= TO_THE_END:
        return size + high if bound.const > 0 else as_expr(low)
    if sign(bound) < 0:
        bound = bound + size
    return dmin(dmax(bound, low), size + high)


def slice_extent(start, end, step, size):
    """The extent of x[start:end:step] along a dim of ``size``, clamped as ONNX clamps."""
    if step > 0:
        b, e = _clamped(start, size, 0, 0), _clamped(end, size, 0, 0)
        return ceildiv(dmax(e - b, 0), step)
    b, e = _clamped(start, size, -1, -1), _clamped(end, size, -1, -1)
    return ceildiv(dmax(b - e, 0), -step)


@rule("Slice")
def slice_(inf, node, ins):
    x = shape(ins[0])
    if node.opset < 10:
        starts = [as_expr(v) for v in _ints_attr(node, "starts", None)]
        ends = [as_expr(v) for v in _ints_attr(node, "ends", None)]
        axes, steps = node.attr("axes"), None
    else:
        starts, ends = ints(ins[1], "starts"), ints(ins[2], "ends")
        axes = const_ints(ins[3], "axes") if len(ins) > 3 and ins[3] is not None else None
        steps = const_ints(ins[4], "steps") if len(ins) > 4 and ins[4] is not None else None
    axes = list(range(len(starts))) if axes is None else [a % len(x) for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    out, value = list(x), ins[0].value
    for a, b, e, s in zip(axes, starts, ends, steps):
        out[a] = slice_extent(b, e, s, x[a])
        if value is not None:       # a shape vector sliced: the same bounds on its entries
            low = 0 if s > 0 else -1
            b, e = (_clamped(v, x[a], low, low) for v in (b, e))
            if not (b.is_constant() and e.is_constant()):
                value = None
                continue
            b, e, index = b.const, e.const, [slice(None)] * len(x)
            index[a] = slice(b, e if e >= 0 else None, s)
            value = value[tuple(index)]
    return [Sym(out, ins[0].dtype, value)]


def _blocksize(node, x):
    b = node.attr("blocksize")
    if not isinstance(b, int) or b < 1 or len(x) != 4:
        raise CannotInfer("needs a positive blocksize and a 4-d input")
    return b


@rule("DepthToSpace")
def depth_to_space(inf, node, ins):
    n, c, h, w = shape(ins[0])
    b = _blocksize(node, shape(ins[0]))
    return [Sym((n, c // (b * b), h * b, w * b), ins[0].dtype)]


@rule("SpaceToDepth")
def space_to_depth(inf, node, ins):
    n, c, h, w = shape(ins[0])
    b = _blocksize(node, shape(ins[0]))
    return [Sym((n, c * b * b, h // b, w // b), ins[0].dtype)]

