"""Joining and splitting tensors: ``cat`` copies its inputs side by side along a dimension,
in one kernel call however many there are; ``split`` returns views of consecutive slices.
Their gradients are each other: the gradient of cat is the upstream gradient split back
into pieces. ``stack`` is cat of its inputs each seen with a new dimension of size 1;
``repeat`` and ``chunk`` are written with views and split, so autograd differentiates them
with no code of their own."""
from .backend import View
from .factories import check_size
from .gradient_function import GradientFunction, two_devices
from .strides import as_ints, normalize_dim
from .tensor import Tensor


def _slice_along(dim, start, stop):
    return (slice(None),) * dim + (slice(start, stop),)


class Cat(GradientFunction):
    """cat, and stack (``new``): one kernel call for all the inputs, which loops over them in
    C. The gradient is the upstream gradient's slices (views), one per input."""

    def forward(self, dim, new, tensors):
        name = "stack" if new else "cat"
        first = tensors[0]
        shape, dtype, device = first.shape, first.dtype, first.storage.device
        try:                                # checked a list at a time: a cat may join thousands
            views = [t.as_view() for t in tensors]
        except AttributeError:
            bad = next(t for t in tensors if not isinstance(t, Tensor))
            raise TypeError(f"{name}: expected a list of tensors, got an element of type "
                            f"{type(bad).__name__}") from None
        n = len(views)
        if [t.storage.device for t in tensors] != [device] * n:
            raise two_devices(type(self).__name__, first, next(t for t in tensors if t.storage.device != device))
        shapes = [v.shape for v in views]
        same = shapes.count(shape) == n
        if new:
            if not same:
                bad = next(s for s in shapes if s != shape)
                raise ValueError(f"stack: expects each tensor to be of equal shape, got {shape} and {bad}")
            # n views of one shape stacked at dim lie in memory as their cat along dim: row o
            # (the elements from dim on) holds each view's row o; at the end there is no such
            # dimension, so each view is given a trailing one of size 1 (any stride)
            if dim == len(shape):
                views = [View(v.buffer, shape + (1,), v.strides + (0,), v.offset, v.dtype) for v in views]
            self.sizes, joined = None, shape[:dim] + (n,) + shape[dim:]
        else:
            try:                            # (the kernel's declaration checks dtypes and the other dimensions)
                self.sizes = [shape[dim]] * n if same else [s[dim] for s in shapes]
            except IndexError:
                bad = next(s for s in shapes if len(s) <= dim)
                raise ValueError(f"cat: shapes {shape} and {bad} differ outside dimension {dim}") from None
            joined = shape[:dim] + (sum(self.sizes),) + shape[dim + 1:]
        self.dim, self.new = dim, new
        return first.launch("cat", views, dim, dtype, shape=joined, dtype=dtype)

    def backward(self, grad):
        return tuple(unbind(grad, self.dim) if self.new else split(grad, self.sizes, self.dim))


def _joined(name, tensors, dim, new):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{name}: expected a non-empty list of tensors")
    if not isinstance(tensors[0], Tensor):
        raise TypeError(f"{name}: expected a list of tensors, got an element of type {type(tensors[0]).__name__}")
    fn = Cat()                      # Cat.apply less its walk over the arguments: forward checks them
    return fn.link(fn.forward(normalize_dim(dim, tensors[0].ndim + new), new, tensors), tuple(tensors))


def cat(tensors, dim=0):
    """Concatenate along an existing dimension (negative dims count from the end)."""
    return _joined("cat", tensors, dim, False)


def stack(tensors, dim=0):
    """Join tensors of one shape along a new dimension ``dim``: each as if unsqueezed there,
    then cat. ``dim`` may be 0 to ndim (negative from the end, counting the new dimension)."""
    return _joined("stack", tensors, dim, True)


def repeat(x, *sizes):
    """x tiled ``sizes[d]`` times along each dimension d (PyTorch's Tensor.repeat, numpy's
    tile). More sizes than dimensions add leading ones. Written as a view and a copy: each
    dimension of size n gets a new dimension of size r before it (expand, stride 0), and
    reshape merges the pairs, r copies of the n elements one after another."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if any(not isinstance(r, int) or isinstance(r, bool) or r < 0 for r in sizes):
        raise ValueError(f"repeat: the repeats must be non-negative ints, got {sizes}")
    if len(sizes) < x.ndim:
        raise ValueError(f"repeat: number of repeat dimensions ({len(sizes)}) can not be smaller "
                         f"than number of dimensions of the tensor ({x.ndim}, shape {x.shape})")
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    out = check_size("repeat", [r * n for r, n in zip(sizes, shape)], x.dtype)    # before copying
    paired = [size for n in shape for size in (1, n)]
    wide = [size for r, n in zip(sizes, shape) for size in (r, n)]
    return x.reshape(*paired).expand(*wide).reshape(*out)


def chunk(x, chunks, dim=0):
    """At most ``chunks`` views along ``dim``, each of ceil(n / chunks) elements but the last,
    as PyTorch (so fewer pieces may come back: 6 in 4 chunks gives 3 of 2)."""
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
    n = x.shape[normalize_dim(dim, x.ndim)]
    return split(x, max(1, -(-n // chunks)), dim)


def unbind(x, dim=0):
    """The slices along ``dim``, each without that dimension: views, as PyTorch's unbind."""
    dim = normalize_dim(dim, x.ndim)
    return tuple(x[(slice(None),) * dim + (i,)] for i in range(x.shape[dim]))


def split(x, split_size_or_sections, dim=0):
    """Views of consecutive slices along `dim`: pieces of one size (the last may be
    smaller; an empty dimension gives one empty piece), or of the listed sizes, as PyTorch's
    split: sizes are non-negative ints, and 0 splits only an empty dimension."""
    dim = normalize_dim(dim, x.ndim)
    n = x.shape[dim]
    if not isinstance(split_size_or_sections, (tuple, list)):          # one size for every piece
        size = split_size_or_sections
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"split(): split_size must be an int or a list of ints, got {size!r}")
        if size < 0 or (size == 0 and n > 0):
            raise ValueError(f"split: split_size must be a positive int (0 only for a dimension of "
                             f"size 0), got {size} for dimension {dim} of size {n}")
        sizes = [min(size, n - s) for s in range(0, n, size)] if n else [0]
    else:
        sizes = list(as_ints("split", split_size_or_sections, "split_size_or_sections"))
        if min(sizes, default=0) < 0:
            raise ValueError(f"split: the sections must be non-negative, got {sizes}")
        if sum(sizes) != n:
            raise ValueError(f"split: sections {sizes} add up to {sum(sizes)}, but dimension "
                             f"{dim} has size {n}")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(x[_slice_along(dim, start, start + size)])
        start += size
    return tuple(pieces)
