"""Shapes, strides and the flat index (chapter 1, "Tensors").

A tensor's elements live in one flat buffer. Its ``shape`` says how many elements each
dimension has; its ``strides`` say how many buffer positions one step along each dimension
moves; its ``offset`` is where element [0, 0, ...] is. Element [i0, i1, ...] is at

    offset + i0 * strides[0] + i1 * strides[1] + ...

A contiguous (row-major) tensor of shape (2, 3, 4) has strides (12, 4, 1). Transposing
swaps two strides, slicing moves the offset and multiplies a stride, broadcasting sets a
stride to 0: all are new views of the same buffer, no element is copied.

A view must stay inside its buffer: its last element, offset + sum((size - 1) * stride),
must exist. ``check_view`` says so for a layout that comes from outside (``Tensor(...)``);
the views operations make from a valid one (reshape, permute, slicing, broadcasting) stay
inside it by construction and are not checked again.

Sizes come from the caller in a few places only: the factories (zeros(2, 3)), ``reshape``
and ``view``, ``expand``, and ``Tensor(...)``'s layout. Each checks them with
``check_shape``, the one rule PyTorch applies to a new tensor's sizes: ints, none negative,
and each size and their product (the number of elements) within int64, the type every
kernel counts and indexes elements in. Every other shape is computed from a checked one.
"""
import math
import operator


# The number of elements of a shape: the product of its sizes, 1 for a 0-d shape. math's
# product runs in C: every operation's output asks for it.
numel = math.prod


class Size(tuple):
    """A shape as PyTorch's ``size()`` returns it, torch.Size: a tuple of ints (it compares,
    hashes and unpacks as one) that prints as ``torch.Size([2, 3])`` and counts its
    elements with ``numel()``. Tensors keep their shapes as plain tuples (every operation
    makes one); ``size()`` wraps it."""
    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, as_ints("Size", sizes, "sizes"))

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        return Size(super().__add__(tuple(other)))

    def numel(self):
        return numel(self)

    def __repr__(self):
        return f"torch.Size({list(self)})"


def make_strides(shape):
    """Row-major strides: the last dimension varies fastest."""
    strides = ROW_MAJOR.get(shape) if type(shape) is tuple else None
    if strides is None:
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * max(shape[d + 1], 1)
        strides = tuple(strides)
        if type(shape) is tuple and len(ROW_MAJOR) < 10_000:
            ROW_MAJOR[shape] = strides
    return strides


# shape -> its row-major strides: every new tensor needs them, and a program uses few
# distinct shapes (tensor.py reads it directly, before calling make_strides)
ROW_MAJOR = {}


# The largest number of elements a tensor may have, and the largest size of a dimension:
# the kernels count and index elements in int64 (C's int64_t), as PyTorch's do. A shape
# beyond it would wrap around in C: sum() of 2**64 elements once came back as 0.0.
MAX_NUMEL = 2 ** 63 - 1


def check_shape(op, shape, argument="size"):
    """``shape`` (a sequence of ints: Python's, numpy's, one-element integer tensors) as a
    tuple of Python ints, checked as PyTorch checks a new tensor's sizes: TypeError for an
    element that is not an int, ValueError for a negative size, RuntimeError (``too_large``)
    for a size or a number of elements beyond MAX_NUMEL. Errors name ``op`` and the
    ``argument`` the sizes came in."""
    shape = as_ints(op, shape, argument)
    for size in shape:
        if size < 0:
            raise ValueError(f"{op}(): trying to create a tensor with negative dimension "
                             f"{size}: {shape}")
    if numel(shape) > MAX_NUMEL or max(shape, default=0) > MAX_NUMEL:
        raise too_large(op, shape)
    return shape


def too_large(op, shape):
    """The error for a shape beyond what the kernels can count (RuntimeError, as PyTorch's)."""
    return RuntimeError(f"{op}(): a tensor of shape {shape} would have {numel(shape)} elements; "
                        f"its sizes and its number of elements must each be at most 2**63 - 1 "
                        f"({MAX_NUMEL}), what the kernels' int64 indices hold")


def as_ints(op, values, argument):
    """``values`` as a tuple of Python ints (operator.index: numpy's ints and one-element
    integer tensors too); TypeError naming ``op``, the argument and the first element that
    is not an int, as PyTorch's argument parser does."""
    ints = []
    for pos, v in enumerate(values):
        try:
            ints.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{op}(): argument '{argument}' must be a tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {pos}") from None
    return tuple(ints)


def check_view(shape, strides, offset, size):
    """(shape, strides, offset) as tuples of ints and an int (strides None: row-major),
    after checking that the view reads only elements 0 to size - 1 of a buffer of ``size``
    elements: non-negative sizes, strides and offset, as PyTorch's as_strided requires.
    ValueError naming the layout and the buffer's size; RuntimeError for a shape beyond
    MAX_NUMEL elements (``check_shape``), which stride 0 would otherwise let through."""
    shape = as_ints("Tensor", shape, "size")
    strides = make_strides(shape) if strides is None else as_ints("Tensor", strides, "stride")
    offset = operator.index(offset)
    problem = None
    if len(strides) != len(shape):
        problem = "needs one stride per dimension"
    elif min(shape, default=0) < 0:
        problem = "has a negative size"
    elif min(strides, default=0) < 0:
        problem = "has a negative stride, which is not supported (as in PyTorch)"
    elif offset < 0:
        problem = "has a negative offset"
    elif 0 not in shape:                # an empty view reads nothing, wherever it starts
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
        if last >= size:
            problem = f"reaches element {last}, beyond its storage of {size} elements"
    if problem is not None:
        raise ValueError(f"a view of shape {shape} with strides {strides} and offset {offset} "
                         f"{problem}")
    check_shape("Tensor", shape)                # within int64, however few elements it reads
    return shape, strides, offset


def flat_index(index, strides, offset=0):
    """Buffer position of the element at the multi-index ``index``."""
    return offset + sum(i * s for i, s in zip(index, strides))


def is_contiguous(shape, strides):
    """True when the view walks its buffer in row-major order with no gaps."""
    if type(shape) is tuple and ROW_MAJOR.get(shape) == strides:
        return True             # the usual case, a tensor made contiguous: one dict look-up
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def normalize_dim(dim, ndim):
    """A dimension index in range(ndim); negative ones count from the end, as in PyTorch."""
    if not -ndim <= dim < max(ndim, 1):
        raise IndexError(f"dimension {dim} is out of range for a tensor with {ndim} "
                         f"dimensions (expected {-ndim} to {max(ndim, 1) - 1})")
    return dim % ndim if ndim else 0


def view_strides(shape, strides, new_shape):
    """Strides that show the same elements in ``new_shape`` without copying, or None when
    none exist (then ``reshape`` copies and ``view`` raises).

    Walking from the last dimension, old dimensions are grouped into chunks that are
    contiguous with each other in memory; each chunk's elements may be re-split into any
    run of new dimensions with the same element count (the algorithm PyTorch uses).
    """
    if not shape or numel(shape) == 0:
        return make_strides(new_shape)
    new_strides = [0] * len(new_shape)
    new_d = len(new_shape) - 1
    chunk_stride = strides[-1]             # stride of the chunk's innermost dimension
    chunk_numel = new_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        chunk_ends = d == 0 or (shape[d - 1] != 1 and strides[d - 1] != chunk_numel * chunk_stride)
        if not chunk_ends:
            continue
        while new_d >= 0 and (new_numel < chunk_numel or new_shape[new_d] == 1):
            new_strides[new_d] = new_numel * chunk_stride
            new_numel *= new_shape[new_d]
            new_d -= 1
        if new_numel != chunk_numel:
            return None
        if d > 0:
            chunk_stride, chunk_numel, new_numel = strides[d - 1], 1, 1
    return tuple(new_strides) if new_d == -1 else None
