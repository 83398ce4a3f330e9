"""What each backend method returns: a (shape, dtype) per output buffer, known when the call
is recorded (chapter 11). The printer shows it; later passes count bytes with it. A buffer
is flat: the shape is the one its tensor will most likely view it as.

One rule per method of stage2's backend boundary (stage2_tensor/backend.py explains their
arguments); an output the method will return as None is None here.
"""
from stage2_tensor import dtypes
from stage2_tensor.strides import numel


def _same(i, dtype_at=-1):
    """The shape of argument i (a View), the dtype given as the last argument."""
    return lambda *args: [(tuple(args[i].shape), args[dtype_at])]


def _reduce(op, view, dims, dtype):
    return [(tuple(s for d, s in enumerate(view.shape) if d not in dims), dtype)]


def _matmul(a, b, dtype, bias=None):
    return [(tuple(a.shape[:-1]) + (b.shape[-1],), dtype)]


def _index_select(view, dim, index):
    return [(view.shape[:dim] + (numel(index.shape),) + view.shape[dim + 1:], view.dtype)]


def _cross_entropy(logits, targets, reduction, ignore_index, dtype):
    n = logits.shape[0]
    kept = ((), dtype) if reduction == "mean" else None      # the count of rows kept, for the mean
    return [((n,) if reduction == "none" else (), dtype), (tuple(logits.shape), dtype), kept]


def _mse_loss(a, b, reduction, dtype):
    return [(tuple(a.shape) if reduction == "none" else (), dtype), (tuple(a.shape), dtype)]


def _layer_norm(x, weight, bias, eps, dtype):
    rows = tuple(x.shape[:-1])
    return [(tuple(x.shape), dtype), (rows, dtype), (rows, dtype)]


def _layer_norm_backward(grad, x, mean, rstd, weight, dtype):
    n = (x.shape[-1],)
    return [(tuple(x.shape), dtype)] + ([(n, dtype)] * 2 if weight is not None else [None, None])


def _batch_norm(x, weight, bias, eps, dtype):
    c = (x.shape[1],)
    return [(tuple(x.shape), dtype), (c, dtype), (c, dtype)]


def _batch_norm_backward(grad, x, mean, var, weight, eps, dtype):
    c = (x.shape[1],)
    return [(tuple(x.shape), dtype), (c, dtype), (c, dtype)]


def _pad(view, before, after, mode, value, dtype):
    n = len(before)
    lead = tuple(view.shape[:len(view.shape) - n])
    return [(lead + tuple(s + b + a for s, b, a in zip(view.shape[len(view.shape) - n:], before, after)), dtype)]


def _pad_backward(grad, spatial, before, after, mode, dtype):
    return [(tuple(grad.shape[:len(grad.shape) - len(before)]) + tuple(spatial), dtype)]


def _im2col(view, kernel, stride, before, dilation, out, fill, dtype):
    return [(tuple(view.shape[:2]) + (numel(kernel), numel(out)), dtype)]


def _col2im(cols, spatial, kernel, stride, before, dilation, out, dtype):
    return [(tuple(cols.shape[:2]) + tuple(spatial), dtype)]


def _conv_direct(x, weight, bias, stride, before, dilation, groups, out, dtype):
    return [((x.shape[0], weight.shape[0]) + tuple(out), dtype)]


def _max_pool(view, kernel, stride, before, dilation, out, dtype):
    shape = tuple(view.shape[:2]) + tuple(out)
    return [(shape, dtype), (shape, dtypes.int64)]


def _attention(q, k, v, causal, scale, dtype):
    rows = tuple(q.shape[:-1])
    return [(rows + (v.shape[-1],), dtype), (rows, dtype)]


def _linear_cross_entropy(x, weight, bias, targets, reduction, ignore_index, dtype):
    n = x.shape[0]
    kept = ((), dtype) if reduction == "mean" else None
    return [((n,) if reduction == "none" else (), dtype), ((n,), dtype), kept]


def _linear_cross_entropy_backward(x, weight, bias, targets, lse, scale, kept, ignore_index, needs, dtype):
    shapes = (tuple(x.shape), tuple(weight.shape), (weight.shape[0],))
    return [(shape, dtype) if need else None for shape, need in zip(shapes, needs)]


OUTPUTS = {
    "contiguous": _same(0),
    "unary": _same(1),
    "binary": _same(1),
    "where": _same(1),
    "reduce": _reduce,
    "cumsum": _same(0),
    "matmul": _matmul,
    "index_select": _index_select,
    "index_add": lambda shape, dim, index, src: [(tuple(shape), src.dtype)],
    "softmax": _same(0),
    "softmax_backward": _same(1),
    "cross_entropy": _cross_entropy,
    "cross_entropy_backward": _same(0),
    "mse_loss": _mse_loss,
    "mse_loss_backward": _same(0),
    "dropout": _same(0),
    "layer_norm": _layer_norm,
    "layer_norm_backward": _layer_norm_backward,
    "batch_norm": _batch_norm,
    "batch_norm_backward": _batch_norm_backward,
    "pad": _pad,
    "pad_backward": _pad_backward,
    "interpolate": lambda view, out, steps, mode, align_corners, dtype: [(tuple(view.shape[:2]) + tuple(out), dtype)],
    "interpolate_backward": lambda grad, spatial, steps, mode, align_corners, dtype: [
        (tuple(grad.shape[:2]) + tuple(spatial), dtype)],
    "im2col": _im2col,
    "col2im": _col2im,
    "conv_direct": _conv_direct,
    "max_pool": _max_pool,
    "max_pool_backward": lambda grad, where, spatial, dtype: [(tuple(grad.shape[:2]) + tuple(spatial), dtype)],
    "attention": _attention,
    "attention_backward": lambda grad, q, k, v, out, lse, causal, scale, dtype: [
        (tuple(t.shape), dtype) for t in (q, k, v)],
    "linear_cross_entropy": _linear_cross_entropy,
    "linear_cross_entropy_backward": _linear_cross_entropy_backward,
}
MULTIPLE = {"cross_entropy", "mse_loss", "layer_norm", "layer_norm_backward", "max_pool",
            "batch_norm", "batch_norm_backward", "attention", "attention_backward",
            "linear_cross_entropy", "linear_cross_entropy_backward"}   # return tuples


def outputs(op, args):
    return OUTPUTS[op](*args)

