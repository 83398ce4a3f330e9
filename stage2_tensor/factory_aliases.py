"""PyTorch's other factories, each a spelling of one tracegrad has: ``empty_like``,
``empty_strided``, ``scalar_tensor``, ``asarray``; and broadcasting as functions,
``broadcast_shapes`` and ``broadcast_tensors`` (``broadcast.py`` computes the shape).
"""
from . import broadcast, factories
from .strides import Size
from .tensor import Tensor


def empty_like(input, *, dtype=None, device=None, requires_grad=False):  # noqa: A002  (PyTorch's name)
    """A tensor of input's shape, dtype and device unless told; zeros, as tracegrad's empty."""
    _check_tensor("empty_like", input)
    return factories.zeros(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                           requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` laid out with ``stride`` (a view of a storage just large enough),
    zeros; as PyTorch's, whose values are unspecified."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {size}, stride {stride}")
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: strides must be non-negative ints, got {stride}")
    factories.check_size("empty_strided", size, dtype or factories.dtypes.DEFAULT_FOR_KIND[2])
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    flat = factories.zeros(extent, dtype=dtype, device=device)
    out = Tensor(flat.storage, size, stride, 0, flat.dtype)          # checked: inside the storage
    return out.requires_grad_(True) if requires_grad else out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor of the number s, of the default float dtype unless told (as PyTorch)."""
    return factories.tensor(s, dtype=dtype or factories.dtypes.DEFAULT_FOR_KIND[2], device=device,
                            requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj: obj itself when it is one of that dtype and device (unless ``copy``),
    else a new one from the data (a tensor, a numpy array, a nested list, a number)."""
    if copy is False and isinstance(obj, Tensor) and ((dtype or obj.dtype) is not obj.dtype
                                                      or (device or obj.device) != obj.device):
        raise ValueError("asarray(): copy=False, but the dtype or device asked for needs a copy")
    out = factories.tensor(obj, dtype=dtype, device=device) if copy or not isinstance(obj, Tensor) \
        else factories.as_tensor(obj, dtype=dtype, device=device)
    return out.requires_grad_(True) if requires_grad else out


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to (an int is a 1-d shape); RuntimeError
    where they do not fit, as PyTorch."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return Size(broadcast.broadcast_shapes(*shapes))
    except ValueError as e:
        raise RuntimeError(str(e)) from None


def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (views; differentiable)."""
    for t in tensors:
        _check_tensor("broadcast_tensors", t)
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.broadcast_to(shape) for t in tensors)


def _check_tensor(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
