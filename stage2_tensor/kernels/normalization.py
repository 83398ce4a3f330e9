"""Normalization layers in one pass each: layer norm over a row, batch norm over a channel
(normalization_functions.py's Functions; the python device's loops are the definition)."""

from ..contracts import LIMIT, differ
from ..strides import numel
from . import kernel



def _rows(x, *_):
    return {"rows": numel(x.shape[:-1]), "n": x.shape[-1]}


def _channels_of(x, *_):
    return {"batch": x.shape[0], "channels": x.shape[1], "size": numel(x.shape[2:])}


def _channels(kernel_name, x):
    """x (N, C, *spatial), at least 2-d, its element count within int64: returns C."""
    if len(x.shape) < 2:
        raise ValueError(f"{kernel_name}: x must be (N, C, ...) with at least 2 dimensions, got shape {tuple(x.shape)}")
    if numel(x.shape) >= LIMIT:
        raise ValueError(f"{kernel_name}: {numel(x.shape)} elements: too many for a buffer")
    return x.shape[1]


def _non_negative_eps(kernel_name, eps):
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ValueError(f"{kernel_name}: eps must be a non-negative number, got {eps!r}")


@kernel("out, mean, rstd", float_only=True, sizes=_rows,
        native="i64 rows, i64 n, const T *x, const T *weight, const T *bias, double eps, T *out, T *mean, T *rstd")
def layer_norm(x: "dense", weight: "dense?", bias: "dense?", eps: "float", dtype: "dtype"):
    """Each row of x (its last dimension, n values) to (x - mean) * rstd * weight + bias, rstd
    = 1 / sqrt(var + eps), var biased; weight and bias n values or None. mean and rstd, one
    per row, are kept for the backward pass."""
    if not x.shape:
        raise ValueError("layer_norm: x must have at least one dimension, got a 0-d view")
    n = x.shape[-1:]
    for what, v in (("weight", weight), ("bias", bias)):
        if v is not None and v.shape != n:
            differ("layer_norm", what, v.shape, n)
    rows = tuple(x.shape[:-1])
    return [(tuple(x.shape), dtype), (rows, dtype), (rows, dtype)]


@kernel("dx, dweight?, dbias?", float_only=True, sizes=_rows, fails=True,
        native="i64 rows, i64 n, const T *grad, const T *x, const T *mean, const T *rstd, const T *weight, "
               "T *dx, T *dweight, T *dbias")
def layer_norm_backward(grad: "dense", x: "dense", mean: "dense", rstd: "dense", weight: "dense?", dtype: "dtype"):
    """layer_norm's gradients: per row, with xhat = (x - mean) * rstd and gw = grad * weight,
    dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)); dweight and dbias the sums over
    rows of grad * xhat and of grad (both None when weight is None)."""
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
    n = (x.shape[-1],)
    return [(tuple(x.shape), dtype)] + ([(n, dtype)] * 2 if weight is not None else [None, None])


@kernel("out, mean, var", float_only=True, sizes=_channels_of,
        native="i64 batch, i64 channels, i64 size, const T *x, const T *weight, const T *bias, double eps, "
               "T *out, T *mean, T *var")
def batch_norm(x: "dense", weight: "dense?", bias: "dense?", eps: "float", dtype: "dtype"):
    """Batch normalization in training mode: x (N, C, ...) normalized per channel with its
    mean and biased var over every dimension but 1, then times weight[c] plus bias[c] (C
    values each, or None); mean and var (C values each) are kept."""
    c = _channels("batch_norm", x)
    _non_negative_eps("batch_norm", eps)
    for what, v in (("weight", weight), ("bias", bias)):
        if v is not None and tuple(v.shape) != (c,):
            differ("batch_norm", what, v.shape, (c,))
    return [(tuple(x.shape), dtype), ((c,), dtype), ((c,), dtype)]


@kernel("dx, dweight, dbias", float_only=True, sizes=_channels_of,
        native="i64 batch, i64 channels, i64 size, const T *grad, const T *x, const T *mean, const T *var, "
               "const T *weight, double eps, T *dx, T *dweight, T *dbias")
def batch_norm_backward(grad: "dense", x: "dense", mean: "dense", var: "dense", weight: "dense?", eps: "float",
                        dtype: "dtype"):
    """batch_norm's gradients: per channel, with rstd = 1 / sqrt(var + eps) and xhat = (x -
    mean) * rstd, dbias = sum grad, dweight = sum grad * xhat, dx = weight * rstd * (grad -
    mean(grad) - xhat * mean(grad * xhat)), means over the channel's elements."""
    c = _channels("batch_norm_backward", x)
    _non_negative_eps("batch_norm_backward", eps)
    if grad.shape != x.shape:
        differ("batch_norm_backward", "grad", grad.shape, x.shape)
    for what, v in (("mean", mean), ("var", var)) + ((("weight", weight),) if weight is not None else ()):
        if tuple(v.shape) != (c,):
            differ("batch_norm_backward", what, v.shape, (c,))
    return [(tuple(x.shape), dtype), ((c,), dtype), ((c,), dtype)]
