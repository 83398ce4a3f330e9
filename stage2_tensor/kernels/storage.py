"""Moving data: buffers made from Python values and read back, copies, and writes. These take
float16 and bfloat16 views themselves; a device must have from_flat, to_flat and write, and
may leave the others to the python device (to_bytes ... from_numpy only make moves faster)."""
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

