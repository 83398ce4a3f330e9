"""Two ways to lay out a unary operation's result (chapter 1, "Unary operations and strides").

A unary operation (exp, neg, ...) maps every element on its own, so any visiting order gives
the same values. What the order decides is which memory accesses run one position after
another, now and in whatever reads the result later:

* ``keep_layout``, the thesis's: walk the operand's storage in storage order, write each
  result at the same position of a new buffer and view that buffer with the operand's
  strides. Reads and writes are sequential, but the result keeps the operand's layout (a
  transposed operand gives a transposed result), so a later row-major reader jumps. It only
  applies to a *dense* view, one whose elements fill a stretch of storage exactly once (a
  contiguous tensor or a permutation of its dimensions): a slice skips positions, which the
  walk would compute for nothing, and a broadcast reads positions more than once.
* ``row_major``, what stage2's devices do: visit the elements in row-major order, reading
  the operand through its strides, and write a contiguous result. The reads jump when the
  operand is not contiguous; everything that reads the result afterwards reads in order.

Both return the result with the buffer positions read and written, in access order;
``jumps`` counts the accesses that are not to the next position, which is what a cache
pays for. Device "python" only: this is a demonstration of orders, not a kernel.
"""
import array
from collections import namedtuple

from . import dtypes
from .python_backend import positions
from .strides import numel
from .tensor import Tensor

Applied = namedtuple("Applied", "result reads writes")


def _checked(fn, t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(t).__name__}")
    if not callable(fn):
        raise TypeError(f"{name}: expected a function of one number, got {type(fn).__name__}")
    if t.storage.device != "python":
        raise ValueError(f"{name}: expected a tensor on device 'python', got {t.storage.device!r}")
    if t.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{name}: expected a float32 or float64 tensor, got {t.dtype.name}")


def is_dense(t):
    """True when ``t``'s elements occupy a stretch of its storage, each position once."""
    pos = sorted(positions(t.as_view()))
    return pos == list(range(pos[0], pos[0] + len(pos))) if pos else True


def keep_layout(fn, t):
    """fn applied to every element of the dense view ``t`` in storage order; the result has
    t's shape and strides (ValueError for a view that is not dense)."""
    _checked(fn, t, "keep_layout")
    if not is_dense(t):
        raise ValueError(f"keep_layout: a view of shape {t.shape} with strides {t.strides} does "
                         "not fill a stretch of its storage exactly once (a slice or a "
                         "broadcast); only row_major applies to it")
    n = numel(t.shape)
    start = min(positions(t.as_view())) if n else t.offset
    buf, cast = t.storage.buffer, t.dtype.cast
    out = array.array(t.dtype.typecode, [cast(fn(buf[start + i])) for i in range(n)])
    result = Tensor.from_buffer(out, (n,), t.dtype, "python").view_of(t.shape, t.strides, t.offset - start)
    return Applied(result, list(range(start, start + n)), list(range(n)))


def row_major(fn, t):
    """fn applied to every element of ``t`` in row-major order, into a contiguous result."""
    _checked(fn, t, "row_major")
    reads = positions(t.as_view())
    buf, cast = t.storage.buffer, t.dtype.cast
    out = array.array(t.dtype.typecode, [cast(fn(buf[p])) for p in reads])
    return Applied(Tensor.from_buffer(out, t.shape, t.dtype, "python"), reads, list(range(len(reads))))


def read_positions(t):
    """The buffer positions a row-major reader of ``t`` (any later operation) visits."""
    if not isinstance(t, Tensor):
        raise TypeError(f"read_positions: expected a Tensor, got {type(t).__name__}")
    return positions(t.as_view())


def jumps(sequence):
    """How many accesses in ``sequence`` (buffer positions) are not to the position right
    after the previous one."""
    return sum(1 for a, b in zip(sequence, sequence[1:]) if b != a + 1)
