"""Padding and interpolation (resampling.py; without these kernels it gathers through an
index table per dimension). Each output position's source is worked out by the formulas of
sampling_grid.py; contracts.py checks that sizes and paddings are ints below 2^62, reflect
padding smaller than its dimension, circular at most as large, and steps finite."""
import math

from ..contracts import (INTERPOLATE_MODES, LIMIT, PAD_CODES, destination, ints, pad_geometry, padding,
                         plane_sizes)
from ..strides import numel
from . import kernel


def _padded(view, before, after, *_):
    planes, spatial, _ = pad_geometry(view.shape, before, after)
    return {"planes": planes, "n": len(before), "spatial": spatial}


@kernel("y", float_only=True, fails=True, sizes=lambda view, before, after, mode, value, dtype: {
            **_padded(view, before, after), "mode_code": PAD_CODES.index(mode)},
        native="i64 planes, int n, const i64 *spatial, const i64 *before, const i64 *after, int mode_code, double value, "
               "const T *view, T *y")
def pad(view: "dense", before: "ints", after: "ints", mode: "choice", value: "float", dtype: "dtype"):
    """The view's last n = len(before) dimensions grown by before[d] and after[d]: output
    position o reads pad_source(o - before, size, mode) in each, `value` where that is the
    fill (mode "constant"; also "reflect", "replicate", "circular")."""
    padding("pad", tuple(view.shape), before, after, mode)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"pad: value must be a number, got {value!r}")
    planes, _, padded = pad_geometry(view.shape, before, after)
    plane_sizes("pad", planes, (padded,))
    n = len(before)
    lead = tuple(view.shape[:len(view.shape) - n])
    return [(lead + tuple(s + b + a for s, b, a in zip(view.shape[len(view.shape) - n:], before, after)), dtype)]


@kernel("dx", float_only=True, fails=True, sizes=lambda grad, spatial, before, after, mode, dtype: {
            "planes": pad_geometry(grad.shape, before, after)[0], "n": len(before), "mode_code": PAD_CODES.index(mode)},
        native="i64 planes, int n, const i64 *spatial, const i64 *before, const i64 *after, int mode_code, "
               "const T *grad, T *dx")
def pad_backward(grad: "dense", spatial: "ints", before: "ints", after: "ints", mode: "choice", dtype: "dtype"):
    """pad's adjoint: zeros (..., *spatial) with each element of grad added where it was read
    from."""
    spatial = tuple(spatial) if isinstance(spatial, (tuple, list)) else spatial
    if not (isinstance(spatial, tuple) and len(spatial) == len(before) if isinstance(before, (tuple, list))
            else False) or not all(type(s) is int and 0 <= s < LIMIT for s in spatial):
        raise ValueError(f"pad_backward: spatial {spatial!r} must be one non-negative int per padded "
                         f"dimension (before {before!r}), the padded input's last extents")
    padding("pad_backward", spatial, before, after, mode)
    n = len(spatial)
    plane_sizes("pad_backward", numel(grad.shape[:max(len(grad.shape) - n, 0)]), (numel(spatial),))
    expected = tuple(s + b + a for s, b, a in zip(spatial, before, after))
    if len(grad.shape) < n or tuple(grad.shape[len(grad.shape) - n:]) != expected:
        raise ValueError(f"pad_backward: grad has shape {tuple(grad.shape)}, expected (..., "
                         f"{', '.join(map(str, expected))}) (the padded extents)")
    return [(tuple(grad.shape[:len(grad.shape) - n]) + spatial, dtype)]


def _interpolation(kernel_name, spatial, out, steps, mode, align_corners):
    """Two spatial extents (H, W) and two output extents, positive; two finite non-negative
    steps (sampling_grid.interpolation_step) whose positions stay in the input (min(...,
    size - 1) in the formulas clamps them anyway)."""
    for what, values, low in (("spatial", spatial, 1), ("out", out, 1)):
        ints(kernel_name, what, values, 2, low)
    if not (isinstance(steps, (tuple, list)) and len(steps) == 2
            and all(type(s) is float and math.isfinite(s) and 0 <= s < LIMIT for s in steps)):
        raise ValueError(f"{kernel_name}: steps must be 2 finite non-negative floats, got {steps!r}")
    if mode not in INTERPOLATE_MODES:
        raise ValueError(f"{kernel_name}: mode must be 'nearest' or 'linear', got {mode!r}")
    if type(align_corners) is not bool:
        raise ValueError(f"{kernel_name}: align_corners must be a bool, got {align_corners!r}")


def _resized(kernel_name, view, out, steps, mode, align_corners):
    if len(view.shape) != 4:
        raise ValueError(f"{kernel_name}: expected a view (N, C, H, W), got shape {tuple(view.shape)}")
    _interpolation(kernel_name, tuple(view.shape[2:]), out, steps, mode, align_corners)
    plane_sizes(kernel_name, view.shape[0] * view.shape[1], (numel(view.shape[2:]), numel(out)))
    return tuple(view.shape[:2]) + tuple(out)


@kernel("y", float_only=True)
def interpolate(view: "dense", out: "ints", steps: "floats", mode: "choice", align_corners: "bool", dtype: "dtype"):
    """Each (H, W) plane of view (N, C, H, W) resampled to out = (H_out, W_out): mode
    "nearest" reads one position, "linear" mixes the four around it, by
    interpolation_source(j, size, step, ...) with steps (two floats, interpolation_step's),
    one per dimension."""
    return [(_resized("interpolate", view, out, steps, mode, align_corners), dtype)]


@kernel("", role="into", optional=True)
def interpolate_into(view: "dense", out: "ints", steps: "floats", mode: "choice", align_corners: "bool",
                     dst: "view", dtype: "dtype"):
    """interpolate written into `dst` (float32, float64; a view of the result's shape, each
    plane row-major, planes apart, sharing no byte with view: a slice of a Concat's
    buffer)."""
    shape = _resized("interpolate", view, out, steps, mode, align_corners)
    destination("interpolate_into", dst, shape, dtype)
    return []


@kernel("dx", float_only=True, fails=True,
        sizes=lambda grad, spatial, steps, mode, align_corners, dtype: {
            "planes": numel(grad.shape[:2]), "h": spatial[0], "w": spatial[1], "oh": grad.shape[2],
            "ow": grad.shape[3], "step_h": steps[0], "step_w": steps[1], "linear": int(mode == "linear")},
        native="i64 planes, i64 h, i64 w, i64 oh, i64 ow, double step_h, double step_w, int linear, "
               "int align_corners, const T *grad, T *dx")
def interpolate_backward(grad: "dense", spatial: "ints", steps: "floats", mode: "choice", align_corners: "bool",
                         dtype: "dtype"):
    """interpolate's adjoint: zeros (N, C, *spatial) with each output's gradient added at the
    positions it mixed, times their weights."""
    if len(grad.shape) != 4:
        raise ValueError(f"interpolate_backward: expected grad (N, C, H_out, W_out), got shape {tuple(grad.shape)}")
    _interpolation("interpolate_backward", spatial, tuple(grad.shape[2:]), steps, mode, align_corners)
    plane_sizes("interpolate_backward", grad.shape[0] * grad.shape[1], (numel(spatial), numel(grad.shape[2:])))
    return [(tuple(grad.shape[:2]) + tuple(spatial), dtype)]
