"""repeat_interleave, as PyTorch's: each slice along a dimension repeated in place, a given
number of times (``[1, 2].repeat_interleave(2)`` is ``[1, 1, 2, 2]``; ``repeat`` in concat.py
tiles the whole tensor instead).

One index_select of the positions each output slice comes from, so the gradient is
index_select's (the repeats' gradients added up). For a tensor of repeats r, output slice j
comes from the number of slices whose repeats end at or before j: with ends the running
sums of r, the ends counted at each position (bincount's kernel) and summed again (cumsum)
give it, O(n + total), no search. The total, which sizes the output, is read and checked
before anything of its size is made.
"""
import numbers

from . import backend as backends
from . import dtypes, factories
from .strides import normalize_dim
from .tensor import Tensor

INT64_LIMIT = 2 ** 62               # a total of repeats beyond it could wrap in int64 running sums


def _check_dtype(repeats):
    if repeats.dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f"repeat_interleave(): repeats must be an int64 or int32 tensor, got "
                                  f"{repeats.dtype.name}")


def _output_shape(x, dim, total):
    """The result's shape, total slices along dim, checked to fit before it is made."""
    return factories.check_size("repeat_interleave", x.shape[:dim] + (total,) + x.shape[dim + 1:], x.dtype)


def _sources(repeats, output_size, x, dim):
    """For a 1-d integer tensor of repeats, the int64 position each output slice of x along
    dim comes from: i repeated repeats[i] times, in order."""
    n, device = repeats.shape[0], repeats.device
    if n and int(repeats.min().item()) < 0:
        raise RuntimeError("repeats can not be negative")
    if n and repeats.dtype is dtypes.int64 and int(repeats.max().item()) * n >= INT64_LIMIT:   # sums could wrap
        total = float(repeats.to(dtype=dtypes.float64).sum().item())
        if total >= INT64_LIMIT:
            raise RuntimeError(f"repeat_interleave(): the repeats add up to {total:.4g} elements, more than "
                               "a tensor can hold")
    ends = repeats.detach().to(dtype=dtypes.int64).cumsum(0)
    total = int(ends[-1].item()) if n else 0
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave(): allocated size does not match required size: output_size "
                           f"is {output_size}, the repeats add up to {total}")
    _output_shape(x, dim, total)
    factories.check_size("repeat_interleave", (total + 1,), dtypes.int64)
    marks = backends.launch(device, "bincount", ends.as_view(), None, total + 1, dtypes.int64, out_dtype=dtypes.int64)
    return Tensor.from_buffer(marks, (total + 1,), dtypes.int64, device).cumsum(0)[:total]


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002  (PyTorch's names)
    """input with each slice along dim repeated: ``repeats`` times (an int, or a 0-d or
    one-element tensor), or repeats[i] times for slice i (a 1-d integer tensor of input's
    size along dim). Without dim, input is flattened first. ``repeat_interleave(r)``, with
    a tensor r alone: 0, 1, ... repeated r[0], r[1], ... times, in r's dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"repeat_interleave(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if output_size is not None and (isinstance(output_size, bool) or not isinstance(output_size, numbers.Integral)):
        raise TypeError(f"repeat_interleave(): output_size must be an int, not {type(output_size).__name__}")
    if repeats is None:                                      # torch.repeat_interleave(repeats)
        _check_dtype(input)
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return _sources(input, output_size, input, 0).to(dtype=input.dtype)
    x = input.reshape(-1) if dim is None or input.ndim == 0 else input
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(f"repeat_interleave(): argument 'dim' must be an int, not {type(dim).__name__}")
    dim = 0 if dim is None else normalize_dim(dim, max(input.ndim, 1))
    n = x.shape[dim]
    if isinstance(repeats, Tensor):
        _check_dtype(repeats)
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.numel() == 1:
            repeats = int(repeats.reshape(()).item())
        elif repeats.shape[0] != n or repeats.ndim != 1:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0] if repeats.ndim else 1} and input.size({dim}) = {n}")
        elif repeats.device != x.device:
            raise RuntimeError(f"repeat_interleave(): repeats are on device {repeats.device!r}, the input on "
                               f"{x.device!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, (numbers.Integral, Tensor)):
        raise TypeError(f"repeat_interleave(): repeats must be an int or an integer tensor, not "
                        f"{type(repeats).__name__}")
    if isinstance(repeats, Tensor):
        index = _sources(repeats, output_size, x, dim)
    else:
        repeats = int(repeats)
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        total = n * repeats
        if output_size is not None and output_size != total:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
        _output_shape(x, dim, total)
        index = factories.arange(total, device=x.device) // repeats if total else \
            factories.zeros(0, dtype=dtypes.int64, device=x.device)
    return x.index_select(dim, index)
