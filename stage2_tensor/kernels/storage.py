"""Moving data: buffers made from Python values and read back, copies (of one view, or of
many side by side: cat), and writes. These take float16 and bfloat16 views themselves; a
device must have from_flat, to_flat and write, and may leave the others to the python
device (to_bytes ... from_numpy only make moves faster)."""
from ..contracts import bad_dim
from . import kernel


@kernel(role="in", halves=True)
def from_flat(values: "numbers", dtype: "dtype"):
    """A buffer holding a flat list of Python numbers."""


@kernel(role="in", halves=True)
def full(n: "int", value: "float", dtype: "dtype"):
    """A buffer of n copies of value."""


@kernel(role="out", halves=True)
def to_flat(view: "view"):
    """The view's elements, row-major, as Python numbers."""


@kernel(halves=True)
def contiguous(view: "view", dtype: "dtype"):
    """A row-major copy of the view, converted to dtype (from and to any dtype)."""
    return [(tuple(view.shape), dtype)]


@kernel("", role="in_place", halves=True)
def write(dst: "view", src: "view"):
    """Copy src's elements into the dst view, in place (src as dst's shape)."""
    if src.shape != dst.shape and tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"write: src has shape {tuple(src.shape)}, expected {tuple(dst.shape)}")
    return []


@kernel(role="out", halves=True)
def to_bytes(view: "view"):
    """The view's elements, row-major, as one block of bytes (a move between devices)."""


@kernel(role="in", halves=True)
def from_bytes(data: "bytes", dtype: "dtype"):
    """A buffer holding the elements of dtype that `data` holds, as to_bytes made it."""


@kernel(role="out", halves=True, optional=True)
def as_numpy(view: "view"):
    """A numpy array sharing the view's memory (Tensor.numpy)."""


@kernel(role="in", halves=True, optional=True)
def from_numpy(array: "array", dtype: "dtype"):
    """A buffer sharing a contiguous numpy array's memory, or None where the device cannot."""


@kernel(halves=True)
def cat(views: "views", dim: "dim", dtype: "dtype"):
    """The views side by side along `dim` in one new row-major buffer: every view of dtype
    and of the first's shape but for its extent along dim, which in the result is the sum
    of theirs."""
    _, shape = joined(views, dim, dtype)
    return [(shape, dtype)]


def joined(views, dim, dtype):
    """cat's check (its declaration's), and each view's extent along dim with the output's
    shape: what a native device passes on. A view of another dtype is a TypeError."""
    if not views:
        raise ValueError("cat: views is empty, expected at least one view")
    first = tuple(views[0].shape)
    if not (type(dim) is int and 0 <= dim < len(first)):
        bad_dim("cat", dim, len(first))
    head, tail, n = first[:dim], first[dim + 1:], len(views)
    # compared a list at a time, as a cat may join thousands of views (a shorter view fails
    # to give its size, a longer one its tail); the loop naming the culprit only on a mismatch
    shapes = [v.shape for v in views]
    try:
        if shapes.count(shapes[0]) == n:    # one shape (a stack's, or pieces of one size)
            sizes, fits = [first[dim]] * n, True
        else:
            sizes = [s[dim] for s in shapes]
            fits = [s[dim + 1:] for s in shapes] == [tail] * n and (not dim or [s[:dim] for s in shapes] == [head] * n)
    except IndexError:
        fits = False
    if not fits or [v.dtype for v in views] != [dtype] * n:
        for i, v in enumerate(views):
            shape = tuple(v.shape)
            if (len(shape), shape[:dim], shape[dim + 1:]) != (len(first), head, tail):
                raise ValueError(f"cat: views[{i}] has shape {shape}, expected {first} but for dimension {dim}")
            if v.dtype is not dtype:
                raise TypeError(f"cat: views[{i}] is {v.dtype}, expected {dtype}: one dtype for every view")
        sizes = [v.shape[dim] for v in views]     # (hand-made views whose shapes are lists)
    return sizes, head + (sum(sizes),) + tail
