"""searchsorted and bucketize, as PyTorch's: where values would go in sorted boundaries.

One kernel (kernels/ordering.py's ``searchsorted``): a binary search per value, O(m log n)
for m values in rows of n boundaries, PyTorch's search test for test (so a NaN value goes
last, and a NaN boundary reads as below every value). ``sorter`` (the indices that sort an
unsorted row) gathers the boundaries in order first. The results are positions, int64 (or
int32 with ``out_int32``), and carry no gradient.
"""
import numbers

from . import backend as backends
from . import dtypes
from .factories import as_tensor
from .tensor import Tensor


def _side(right, side):
    """Whether to search right of equal boundaries: ``right`` or ``side="right"``."""
    if not isinstance(right, bool):
        raise TypeError(f"searchsorted(): argument 'right' must be a bool, not {type(right).__name__}")
    if side is None:
        return right
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                           "while right was True")
    return side == "right"


def _search(op, boundaries, values, right, out_int32):
    """The positions, boundaries and values brought to one dtype first (PyTorch's promotion)."""
    if not isinstance(out_int32, bool):
        raise TypeError(f"{op}(): argument 'out_int32' must be a bool, not {type(out_int32).__name__}")
    if values.device != boundaries.device:
        raise RuntimeError(f"{op}(): boundaries are on device {boundaries.device!r}, the values on "
                           f"{values.device!r}")
    dtype = dtypes.promote(boundaries.dtype, values.dtype)
    if dtype is dtypes.bool_:
        raise NotImplementedError(f"{op}(): not implemented for bool tensors")
    dtype = dtype.compute                       # a half as float32, a small int as int64: the same order
    b, v = boundaries.detach().to(dtype=dtype), values.detach().to(dtype=dtype)
    found = backends.launch(v.device, "searchsorted", b.as_view(), v.as_view(), right, dtype,
                            out_dtype=dtypes.int64)
    out = Tensor.from_buffer(found, v.shape, dtypes.int64, v.device)
    return out.to(dtype=dtypes.int32) if out_int32 else out


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):  # noqa: A002
    """For each element of input, the index in sorted_sequence's last dimension where it
    would go to keep it sorted: the first boundary >= it (> it when ``right`` or
    ``side="right"``). sorted_sequence is 1-d (one sequence for every value) or has input's
    leading dimensions, one sequence per row; input may be a number (a 0-d result)."""
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be a Tensor, not "
                        f"{type(sorted_sequence).__name__}")
    right = _side(right, side)
    if isinstance(input, numbers.Number) and not isinstance(input, bool):
        input = as_tensor(input, device=sorted_sequence.device)
    if not isinstance(input, Tensor):
        raise TypeError(f"searchsorted(): argument 'input' must be a Tensor or a number, not {type(input).__name__}")
    if sorted_sequence.ndim == 0 or not (sorted_sequence.ndim == 1
                                         or sorted_sequence.shape[:-1] == input.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
                           f"{list(input.shape)}")
    if sorter is not None:
        sorted_sequence = _in_order(sorted_sequence, sorter)
    return _search("searchsorted", sorted_sequence, input, right, out_int32)


def _in_order(sequence, sorter):
    """The sequence's rows read in the order ``sorter`` gives (a gather along the last
    dimension), its indices checked first."""
    if not isinstance(sorter, Tensor):
        raise TypeError(f"searchsorted(): argument 'sorter' must be a Tensor, not {type(sorter).__name__}")
    if sorter.dtype is not dtypes.int64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{sorter.dtype.name}")
    if sorter.shape != sequence.shape:
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got "
                           f"boundary tensor {list(sequence.shape)} and got sorter tensor {list(sorter.shape)}")
    if sorter.numel() and not (0 <= int(sorter.min().item()) and int(sorter.max().item()) < sequence.shape[-1]):
        raise RuntimeError("torch.searchsorted(): sorter index out of range")
    return sequence.detach().gather(sequence.ndim - 1, sorter)


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """The bucket of each element of input among the 1-d sorted boundaries: i with
    boundaries[i - 1] < x <= boundaries[i] (boundaries[i - 1] <= x < boundaries[i] when
    ``right``), which is searchsorted(boundaries, input, right=right)."""
    if not isinstance(boundaries, Tensor):
        raise TypeError(f"bucketize(): argument 'boundaries' must be a Tensor, not {type(boundaries).__name__}")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    if not isinstance(right, bool):
        raise TypeError(f"bucketize(): argument 'right' must be a bool, not {type(right).__name__}")
    if isinstance(input, numbers.Number) and not isinstance(input, bool):
        input = as_tensor(input, device=boundaries.device)
    if not isinstance(input, Tensor):
        raise TypeError(f"bucketize(): argument 'input' must be a Tensor or a number, not {type(input).__name__}")
    return _search("bucketize", boundaries, input, right, out_int32)
