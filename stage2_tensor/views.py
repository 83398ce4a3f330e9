"""Views and indexing (chapter 1, "Strides"): new shapes and strides over the same storage.

``reshape``/``view``, ``permute``, ``expand`` and basic indexing (ints, slices, None, ...)
only compute new strides and an offset. Indexing with integer tensors gathers elements into
a new tensor (``index_select``); its gradient scatter-adds back, so an index that appears
twice receives both gradients.
"""
from . import dtypes
from .backend import bad_index
from .factories import tensor, zeros
from .grad_mode import no_grad
from .gradient_function import GradientFunction
from .strides import as_ints, check_shape, is_contiguous, numel, view_strides


def resolve_shape(shape, n, op="reshape"):
    """A shape with at most one -1, which becomes whatever makes n elements. Its sizes are
    checked at once (``check_shape``): reshape(2.5, 4.8) is a TypeError, not a tensor whose
    float sizes fail later."""
    shape = tuple(shape)
    count = numel(shape)                      # a float among the sizes makes it a float
    # the usual case: int sizes, none negative, n elements; as n > 0, no size exceeds n
    if type(count) is int and count == n and count and min(shape, default=0) >= 0:
        return shape
    shape = as_ints(op, shape, "shape")
    if shape.count(-1) > 1:
        raise ValueError(f"shape {shape} has more than one -1")
    if min(shape, default=0) < -1:
        raise ValueError(f"shape {shape} has a negative size other than -1")
    known = numel([s for s in shape if s != -1])
    if -1 in shape:
        if known == 0 or n % known:
            raise ValueError(f"shape {shape} cannot hold {n} elements")
        shape = tuple(n // known if s == -1 else s for s in shape)
    if numel(shape) != n:
        raise ValueError(f"shape {shape} holds {numel(shape)} elements, but the tensor has {n}")
    return check_shape(op, shape)             # (0, 2**64) holds 0 elements, but no kernel can count it


class Reshape(GradientFunction):
    def forward(self, x, shape, copy_if_needed):
        self.input_shape = x.shape
        shape = resolve_shape(shape, numel(x.shape), "reshape" if copy_if_needed else "view")
        if is_contiguous(x.shape, x.strides):     # any shape views it, row-major
            return x.view_of(shape, None, x.offset)
        strides = view_strides(x.shape, x.strides, shape)
        if strides is None:
            if not copy_if_needed:
                raise RuntimeError(
                    f"view: a tensor of shape {x.shape} with strides {x.strides} cannot be "
                    f"viewed as {shape} without copying; use .reshape(...) (or .contiguous() first)")
            return copy(x).view_of(shape, None, 0)
        return x.view_of(shape, strides, x.offset)

    def backward(self, grad):
        return (grad.reshape(*self.input_shape),)


def reshape(x, shape, copy_if_needed):
    """Reshape.apply(x, shape, copy_if_needed), less apply's walk over the arguments: x is
    the one tensor (reshapes are among the most frequent operations)."""
    fn = Reshape()
    return fn.link(fn.forward(x, shape, copy_if_needed), (x,))


class Permute(GradientFunction):
    def forward(self, x, dims):
        if sorted(dims) != list(range(x.ndim)):
            raise ValueError(f"permute: {dims} is not an ordering of the {x.ndim} dimensions of {x.shape}")
        self.dims = dims
        return x.view_of(tuple(x.shape[d] for d in dims), tuple(x.strides[d] for d in dims), x.offset)

    def backward(self, grad):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return (grad.permute(*inverse),)


class Expand(GradientFunction):
    """Broadcast to a larger shape: stretched dimensions get stride 0. Its gradient is the
    upstream gradient itself; the backward pass sums it back to the input's shape.

    As PyTorch's: -1 keeps an existing dimension's size, and means nothing for a new
    leading one; the sizes are checked (``check_shape``), since a view of stride 0 reads
    one element however large its shape (ones(1).expand(2**64) would have wrapped int64)."""

    def forward(self, x, shape):
        shape = as_ints("expand", shape, "size")
        lead = len(shape) - x.ndim
        if lead < 0:
            raise ValueError(f"expand: cannot expand shape {x.shape} to fewer dimensions {tuple(shape)}")
        if -1 in shape[:lead]:
            raise ValueError(f"expand: the expanded size of the tensor (-1) isn't allowed in a "
                             f"leading, non-existing dimension {shape.index(-1)} (expanding "
                             f"{x.shape} to {shape})")
        new_shape, strides = list(shape[:lead]), [0] * lead
        for size, stride, want in zip(x.shape, x.strides, shape[lead:]):
            if want == -1 or want == size:
                new_shape.append(size)
                strides.append(stride)
            elif size == 1:
                new_shape.append(want)
                strides.append(0)
            else:
                raise ValueError(f"expand: shape {x.shape} cannot be expanded to {tuple(shape)}: "
                                 f"size {size} is neither 1 nor {want}")
        new_shape = check_shape("expand", new_shape)
        return x.view_of(new_shape, tuple(strides), x.offset)

    def backward(self, grad):
        return (grad,)


def copy(x):
    """A contiguous copy of x (no autograd link)."""
    return x.launch("contiguous", x.as_view(), x.dtype, shape=x.shape, dtype=x.dtype)


class Contiguous(GradientFunction):
    def forward(self, x):
        return copy(x)

    def backward(self, grad):
        return (grad,)


def basic_index(x, index):
    """(shape, strides, offset) of x[index] for ints, slices, None and Ellipsis."""
    index = index if isinstance(index, tuple) else (index,)
    specified = sum(1 for i in index if i is not None and i is not Ellipsis)
    if specified > x.ndim:
        raise IndexError(f"too many indices for a tensor of shape {x.shape}: {len(index)}")
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis (...)")
    if Ellipsis in index:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (x.ndim - specified) + index[at + 1:]
    else:
        index = index + (slice(None),) * (x.ndim - specified)
    shape, strides, offset, d = [], [], x.offset, 0
    for i in index:
        if i is None:                                   # a new dimension of size 1
            shape.append(1)
            strides.append(0)
            continue
        size, stride = x.shape[d], x.strides[d]
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            if step <= 0:
                raise ValueError(f"slices need a positive step, got {step}")
            shape.append(max(0, (stop - start + step - 1) // step))
            strides.append(stride * step)
            offset += start * stride
        elif isinstance(i, int) and not isinstance(i, bool):
            if not -size <= i < size:
                raise bad_index(i, d, size)
            offset += (i % size) * stride
        else:
            raise TypeError(f"unsupported index {i!r} ({type(i).__name__}); expected int, slice, "
                            "None, ..., or an integer tensor")
        d += 1
    return tuple(shape), tuple(strides), offset


class Slice(GradientFunction):
    def forward(self, x, index):
        self.shape, self.index = x.shape, index
        shape, strides, offset = basic_index(x, index)
        return x.view_of(shape, strides, offset)

    def backward(self, grad):
        return (SliceBackward.apply(grad, self.shape, self.index),)


class SliceBackward(GradientFunction):
    """Slice's gradient: zeros of the input's shape, the gradient where x was read. Its own
    gradient is the slice again, so a second derivative through x[...] is recorded."""

    def forward(self, grad, shape, index):
        self.index = index
        out = zeros(*shape, dtype=grad.dtype, device=grad.device)
        with no_grad():                                   # the write is this function's forward: apply records it
            out.view_of(*basic_index(out, index))._write("Slice backward", grad)
        return out

    def backward(self, grad):
        return (Slice.apply(grad, self.index),)


class IndexSelect(GradientFunction):
    """x's rows along `dim` picked by `index`, a 1-D int64 tensor on x's device (negative
    entries count from the end); gradient: scatter-add (``index_add``), so a row picked
    twice gets both gradients. The index stays a tensor all the way down: one kernel call
    each way, which checks the bounds itself (an embedding lookup of a (32, 128) batch no
    longer makes 4096 Python ints)."""

    def forward(self, x, dim, index):
        self.shape, self.dim = x.shape, dim
        self.save_for_backward(index)
        shape = x.shape[:dim] + index.shape + x.shape[dim + 1:]
        return x.launch("index_select", x.as_view(), dim, index.as_view(), shape=shape, dtype=x.dtype)

    def backward(self, grad):
        (index,) = self.saved_tensors
        g = grad.contiguous()
        return (g.launch("index_add", self.shape, self.dim, index.as_view(), g.as_view(),
                         shape=self.shape, dtype=grad.dtype), None)


_CONSTANT_TENSORS = {}


def constant_tensor(key, device, values, dtype=dtypes.int64):
    """A constant tensor of ``dtype`` (an index, by default) on ``device``, made from
    ``values`` (a list of numbers) the first time ``key`` (what determines the values: a
    shape, a stride...) is asked for with that dtype and device, and reused after: the
    index tables of convolution and padding, and their divisors and weights, are built
    once, not every training step. Only operations read them; none writes to an input."""
    t = _CONSTANT_TENSORS.get((key, dtype, device))
    if t is None:
        if len(_CONSTANT_TENSORS) >= 256:              # a loop over ever new shapes: start over
            _CONSTANT_TENSORS.clear()
        t = _CONSTANT_TENSORS[key, dtype, device] = tensor(values, dtype=dtype, device=device)
    return t


def out_of_range(index, size):
    """(position, value) of an entry of the integer tensor ``index`` outside 0..size - 1
    (the first in row-major order of its smallest or its largest value), else None: what
    an error about a bad index or class names."""
    if not index.numel():
        return None
    low, high = int(index.min().item()), int(index.max().item())
    if 0 <= low and high < size:
        return None
    bad = low if low < 0 else high
    return index.reshape(-1).tolist().index(bad), bad


class IndexAdd(GradientFunction):
    """Zeros of ``shape`` (or ``base``, a tensor of that shape and src's dtype) with row r
    of src added at row index[r] along `dim` (repeats add up): index_select's transpose,
    so its gradient is index_select of the upstream gradient (and the upstream gradient
    itself for base). col2im (convolution.py's fold and transposed convolution) is one,
    scatter_add another."""

    def forward(self, src, shape, dim, index, base=None):
        self.dim, self.based = dim, base is not None
        self.save_for_backward(index)
        src = src.contiguous()
        return src.launch("index_add", shape, dim, index.as_view(), src.as_view(),
                          None if base is None else base.as_view(), shape=shape, dtype=src.dtype)

    def backward(self, grad):
        (index,) = self.saved_tensors
        return (IndexSelect.apply(grad, self.dim, index), None) + ((grad,) if self.based else ())


def _check_index_dtype(t):
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise IndexError(f"tensors used as indices must be int32 or int64, got {t.dtype}")


def flat_index(t, device):
    """An integer tensor as the kernels read an index: 1-D, int64, on `device`."""
    _check_index_dtype(t)
    return t.reshape(-1).to(device=device, dtype=dtypes.int64)
