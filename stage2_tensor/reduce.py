"""Reductions: sum, mean, max, min, argmax, argmin over any set of dimensions (chapter 4).

Summing is broadcasting's mirror image: the gradient of a sum is the upstream gradient
repeated (expanded) over the summed dimensions. The gradient of a max goes to the elements
that were the maximum, shared equally between ties. NaN propagates, as in PyTorch: the max
of a row holding a NaN is NaN, its argmax the first NaN's index, and its gradient goes to
the NaNs.
"""
from collections import namedtuple

from . import dtypes
from .elementwise import where
from .gradient_function import GradientFunction
from .strides import normalize_dim

ValuesIndices = namedtuple("ValuesIndices", "values indices")


# (0, 1, ..., n - 1) by n: every dimension, made once (a loss sums everything every step)
ALL_DIMS = [tuple(range(n)) for n in range(17)]


def normalize_dims(x, dim):
    """None: every dimension; an int or a tuple of ints, negative ones from the end."""
    if dim is None:
        n = len(x.shape)
        return ALL_DIMS[n] if n < len(ALL_DIMS) else tuple(range(n))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = sorted({normalize_dim(d, x.ndim) for d in dims})
    if len(out) != len(dims):
        raise ValueError(f"dim {dim} names a dimension twice")
    return tuple(out)


def kept_shape(shape, dims, keepdim):
    if len(dims) == len(shape):         # every dimension (dims has no repeats): a 0-d result
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple([1 if d in dims else s for d, s in enumerate(shape)])
    return tuple([s for d, s in enumerate(shape) if d not in dims])


def _reduce_kernel(op, x, dims, keepdim, dtype):
    # over every dimension (dims has no repeats), the result is 0-d: no kept shape to work out
    shape = () if len(dims) == len(x.shape) else kept_shape(x.shape, dims, False)
    out = x.launch("reduce", op, x.as_view(), dims, dtype, shape=shape, dtype=dtype)
    if keepdim:
        out = out.view_of(kept_shape(x.shape, dims, True), None, 0)
    return out


class Sum(GradientFunction):
    def forward(self, x, dims, keepdim):
        self.shape, self.dims = x.shape, dims
        dtype = x.dtype if x.dtype.is_floating_point else dtypes.int64
        return _reduce_kernel("sum", x, dims, keepdim, dtype)

    def backward(self, grad):
        if grad.shape:          # a 0-d gradient (the sum of everything: a loss) expands as it is
            grad = grad.reshape(*kept_shape(self.shape, self.dims, True))
        return (grad.expand(*self.shape),)


class Extremum(GradientFunction):
    def forward(self, x, dims, keepdim, op):
        out = _reduce_kernel(op, x, dims, keepdim, x.dtype)
        self.dims = dims
        self.save_for_backward(x, out)
        return out

    def backward(self, grad):
        x, out = self.saved_tensors
        keep = kept_shape(x.shape, self.dims, True)
        out = out.reshape(*keep)
        # where the extremum was: the elements equal to it, or the NaNs where it is NaN
        # (NaN equals nothing, itself included)
        hit = where(out != out, x != x, x == out)
        share = hit.to(dtype=grad.dtype)
        share = share / share.sum(dim=self.dims, keepdim=True)
        return (grad.reshape(*keep) * share,)


def reduce(op, x, dim=None, keepdim=False):
    n = len(x.shape)                # normalize_dims, less its call for the usual dim=None
    dims = ALL_DIMS[n] if dim is None and n < len(ALL_DIMS) else normalize_dims(x, dim)
    if op == "sum":
        fn = Sum()                  # Sum.apply, less its walk over the arguments: x is the one tensor
        return fn.link(fn.forward(x, dims, keepdim), (x,))
    if op == "mean":
        count = 1
        for d in dims:
            count *= x.shape[d]
        if not x.dtype.is_floating_point:
            x = x.to(dtype=dtypes.float32)
        return Sum.apply(x, dims, keepdim) / count
    values = Extremum.apply(x, dims, keepdim, op)
    if dim is None:
        return values
    return ValuesIndices(values, arg_reduce("arg" + op, x, dim, keepdim))


def arg_reduce(op, x, dim=None, keepdim=False):
    """Index of the max/min: along `dim`, or into the flattened tensor when dim is None."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    dims = normalize_dims(x, dim)
    return _reduce_kernel(op, x, dims, keepdim, dtypes.int64)
