"""Checks of a tensor's values (an index in range, a probability in [0, 1]) made by a
kernel, not by reading the values into Python.

PyTorch's kernels check the data they read: a gather its indices, nll_loss its targets,
binary_cross_entropy its probabilities. A check written ``if t.max().item() >= n:`` would
read the values into Python instead, which a compiled step cannot capture (a graph break,
stage2_tensor/compiled/): so the check is handed to a kernel, the index kernel, which
rejects an index outside -size..size - 1 as it reads it, and the precise message (which
value, at which position) is built only in the error path, where a read is fine.

A device that runs kernels later (a lazy graph: ``Backend.deferred``) raises the index
kernel's error when the result is read: ``raise_if_any`` reads its (empty) result there, so
that its error comes at once, with its message.
"""
from . import backend, dtypes


def outside(index, size):
    """Whether each entry of the integer tensor ``index`` lies outside 0..size - 1."""
    if size <= 0:
        return index.new_full(index.shape, True, dtype=dtypes.bool_)
    return index.clamp(0, size - 1) != index


def no_negatives(index, size):
    """``index`` with its negative entries made ``size``: the index kernel, which would
    count a negative index from the end, then rejects every entry outside 0..size - 1."""
    return index.masked_fill(index < 0, size)


def raise_if_any(bad, error):
    """Raise ``error()`` if any element of the bool tensor ``bad`` is true. Each element
    picks element 0 (false) or 1 (true, which does not exist) of a one-element table: the
    index kernel's range check is the test."""
    index = bad.to(dtype=dtypes.int64).reshape(-1)
    table = bad.new_zeros(1, dtype=dtypes.bool_)
    try:                                # the kernel itself: nothing to differentiate
        picked = table.launch("index_select", table.as_view(), 0, index.as_view(), shape=index.shape,
                              dtype=table.dtype)
        if backend.get(bad.device).deferred:
            picked.tolist()
    except IndexError:
        raise error() from None
