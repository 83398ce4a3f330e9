"""The inference compiler's own paths to the device's inference kernels (chapter 13,
"13_inference_compiler"): conv_bands, max_pool_into and interpolate_into (declared optional
in stage2_tensor/kernels/, C in stage3_native/csrc), which record no gradient and write each output
plane wherever they are told, a slice of a larger buffer included (an ONNX Concat written
in place: passes/writes.py).

stage2_tensor's convolution, pooling and interpolation are the definitions, with the
gradients training needs; these functions are for a plan's replay alone, so they live here
with their one caller, and so does the choice of a band's size, which is tuned to a CPU's
caches. Each falls back to stage2's operation (and a copy into the destination) where the
kernel cannot run: another device, another dtype, a gradient wanted, a destination whose
planes are not row-major. The results are the same bits either way (the kernels compute
what the GEMM of the whole columns computes, tests/test_stage3_conv_bands.py,
tests/test_stage3_into_kernels.py).

    conv            stage2's conv, its chunked no-gradient path as one conv_bands call
    conv_into       conv (bias, optionally ReLU) into a given tensor or a new one
    max_pool_into   max pool's maxima, no positions kept, into a given tensor or a new one
    interpolate_into  F.interpolate into a given tensor or a new one
"""
from stage2_tensor import backend as backends
from stage2_tensor import convolution, dtypes
from stage2_tensor.factories import empty
from stage2_tensor.grad_mode import is_grad_enabled
from stage2_tensor.resampling import _interpolation_args, interpolate
from stage2_tensor.sampling_grid import interpolation_step
from stage2_tensor.strides import make_strides, numel
from stage2_tensor.tensor import Tensor

# conv_bands' bands: each thread's columns about BAND_BYTES, small enough to stay in its core's
# L2 cache while its product reads them (benchmarks/RESULTS.md has the measurements).
BAND_BYTES = 1 << 18

# ... and at least BAND_POSITIONS wide: the product's micro-tiles are 32 columns wide
# (AVX-512), and a narrower band would leave part of each empty.
BAND_POSITIONS = 256


def banded(x, weight, bias):
    """Whether conv_bands runs this convolution: the device has the kernel, and x, weight
    and bias share a dtype it covers (float32, float64) and x's device."""
    if x.dtype not in (dtypes.float32, dtypes.float64) or not backends.get(x.device).has("conv_bands"):
        return False
    return all(t is None or (t.dtype is x.dtype and t.device == x.device) for t in (weight, bias))


def band_rows(x, weight, out):
    """How many output rows (all but the last spatial dimension) a band of conv_bands
    holds: its columns (C_in / groups * K rows of the band's positions) about BAND_BYTES,
    at least BAND_POSITIONS positions."""
    per_row = weight.shape[1] * numel(weight.shape[2:]) * out[-1] * x.dtype.itemsize
    return max(1, BAND_BYTES // per_row, -(-BAND_POSITIONS // out[-1]))


def conv_bands(x, weight, bias, stride, before, dilation, groups, out, relu, band_rows, dst=None):
    """The device's conv_bands kernel (no autograd): im2col and the product a band of
    output rows at a time inside one kernel, bias and ReLU (when ``relu``) added as it
    stores: (N, C_out, *out), written into ``dst`` (a Tensor of that shape, its planes
    row-major) and returned as it, or a new tensor."""
    views = (x.as_view(), weight.as_view(), None if bias is None else bias.as_view())
    y = backends.launch(x.device, "conv_bands", *views, stride, before, dilation, groups, out, relu, band_rows,
                        None if dst is None else dst.as_view(), x.dtype, out_dtype=x.dtype)
    if dst is not None:
        dst.storage.version += 1            # written in place, as copy_ does
        return dst
    return Tensor.from_buffer(y, (x.shape[0], weight.shape[0]) + tuple(out), x.dtype, x.device)


def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, n=2):
    """stage2's conv, except that where it would convolve in chunks (no gradient recorded,
    columns above convolution.CHUNK_ABOVE) and the device has conv_bands, the chunks are
    that one kernel's bands, the bias added in its store."""
    xb, unbatched, kernel, strides, before, after, dilations = convolution._conv_args(
        x, weight, stride, padding, dilation, groups, n, f"conv{n}d")
    if convolution._chunks(xb, weight, bias, kernel, strides, before, after, dilations) \
            and banded(xb, weight, bias):
        out = convolution._extents(xb.shape[2:], kernel, strides, before, after, dilations)
        y = conv_bands(xb, weight, bias, strides, before, dilations, groups, out, False, band_rows(xb, weight, out))
        return y[0] if unbatched else y
    return convolution.conv(x, weight, bias, stride, padding, dilation, groups, n)


def conv_into(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, relu=False, out=None, n=2):
    """Inference's convolution, no gradient recorded: conv's result, ReLU'd when ``relu``,
    written into ``out`` (a tensor of the result's shape, e.g. a slice of a larger buffer
    along its channels: an ONNX Concat written in place) or returned as a new tensor.
    The device's conv_bands kernel where it has one (bias and ReLU as it stores, each plane
    written once); otherwise conv, relu and a copy: the definition."""
    x, unbatched, kernel, stride, before, after, dilation = convolution._conv_args(
        x, weight, stride, padding, dilation, groups, n, f"conv{n}d")
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (weight.shape[0],)):
        raise ValueError(f"conv{n}d: expected a bias of shape ({weight.shape[0]},), "
                         f"got {getattr(bias, 'shape', type(bias).__name__)}")
    if unbatched and out is not None:
        out = out.unsqueeze(0)
    extents = convolution._extents(x.shape[2:], kernel, stride, before, after, dilation)
    shape = (x.shape[0], weight.shape[0]) + extents
    if out is not None and (not isinstance(out, Tensor) or out.shape != shape or out.dtype is not x.dtype):
        raise ValueError(f"conv{n}d: out must be a {x.dtype} tensor of shape {shape}, got "
                         f"{getattr(out, 'shape', type(out).__name__)} {getattr(out, 'dtype', '')}")
    grads = is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias))
    if not grads and banded(x, weight, bias) and (out is None or row_major_planes(out)):
        y = conv_bands(x, weight, bias, stride, before, dilation, groups, extents, bool(relu),
                       band_rows(x, weight, extents), out)
    else:
        y = conv(x, weight, bias, stride, padding, dilation, groups, n)
        if relu:
            y = y.relu()
        if out is not None:
            y = out.copy_(y)
    return y[0] if unbatched else y


def row_major_planes(t):
    """Whether each (N, C) plane of t is row-major (what the kernels here write), the planes apart."""
    return tuple(t.stride()[2:]) == tuple(make_strides(t.shape[2:]))


def max_pool_into(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, out=None, n=2):
    """Inference's max pool, no gradient recorded: max_pool's maxima written into ``out``
    (a tensor of the result's shape, e.g. a slice of a larger buffer along its channels:
    an ONNX Concat written in place) or returned as a new tensor. The device's
    max_pool_into kernel where it has one (no positions kept: nothing will go backward,
    so a new result skips max_pool's int64 positions too); otherwise max_pool and a copy:
    the definition."""
    what = f"max_pool{n}d"
    x, unbatched = convolution._batched(x, n, what)
    kernel, stride, pad, dilation = convolution._pool_args(kernel_size, stride, padding, dilation, n, what)
    extents = convolution._extents(x.shape[2:], kernel, stride, pad, pad, dilation, ceil_mode)
    shape = x.shape[:2] + extents
    if out is not None:
        if not isinstance(out, Tensor) or out.dtype is not x.dtype \
                or (out.unsqueeze(0) if unbatched else out).shape != shape:
            raise ValueError(f"{what}: out must be a {x.dtype} tensor of shape {shape[1:] if unbatched else shape}, "
                             f"got {getattr(out, 'shape', type(out).__name__)} {getattr(out, 'dtype', '')}")
        out = out.unsqueeze(0) if unbatched else out
    grads = is_grad_enabled() and x.requires_grad
    kernel_runs = not grads and x.dtype in (dtypes.float32, dtypes.float64) \
        and backends.get(x.device).has("max_pool_into")
    if kernel_runs and out is None:
        out = empty(*shape, dtype=x.dtype, device=x.device)
    if not kernel_runs or not row_major_planes(out):
        y = convolution.max_pool(x, kernel, stride, pad, dilation, ceil_mode, n=n)
        y = y if out is None else out.copy_(y)
    else:
        backends.launch(x.device, "max_pool_into", x.as_view(), kernel, stride, pad, dilation, extents,
                        out.as_view(), x.dtype)
        out.storage.version += 1            # written in place, as copy_ does
        y = out
    return y[0] if unbatched else y


def interpolate_into(input, size=None, scale_factor=None, mode="nearest", align_corners=None, out=None):
    """Inference's interpolate, no gradient recorded: F.interpolate's result written into
    ``out`` (a tensor of the result's shape, e.g. a slice of a larger buffer along its
    channels: an ONNX Concat written in place) or returned as a new tensor. The device's
    interpolate_into kernel where it has one (each plane written once, where it belongs);
    otherwise interpolate and a copy: the definition."""
    shape, scales = _interpolation_args(input, size, scale_factor, mode, align_corners)
    shape = tuple(input.shape[:2]) + tuple(shape)
    if out is not None and (not isinstance(out, Tensor) or out.shape != shape or out.dtype is not input.dtype):
        raise ValueError(f"interpolate: out must be a {input.dtype} tensor of shape {shape}, got "
                         f"{getattr(out, 'shape', type(out).__name__)} {getattr(out, 'dtype', '')}")
    be = backends.get(input.device)
    if out is None or input.requires_grad and is_grad_enabled() or input.ndim != 4 \
            or input.dtype not in (dtypes.float32, dtypes.float64) or not be.has("interpolate_into") \
            or not row_major_planes(out):
        y = interpolate(input, size, scale_factor, mode, align_corners)
        return y if out is None else out.copy_(y)
    kind = "nearest" if mode == "nearest" else "linear"
    steps = tuple(interpolation_step(s, o, kind, bool(align_corners), f)
                  for s, o, f in zip(input.shape[2:], shape[2:], scales))
    backends.launch(input.device, "interpolate_into", input.as_view(), shape[2:], steps, kind,
                    bool(align_corners), out.as_view(), input.dtype)
    out.storage.version += 1            # written in place, as copy_ does
    return out
