"""Tensor: a strided view of a storage (chapter 1) that records the operations on it
(chapter 4). PyTorch's names and habits throughout.

The class holds data layout (shape, strides, offset into a Storage), autograd state
(requires_grad, grad, grad_fn) and thin methods. Computation lives elsewhere: kernels in a
backend (``backend.py``), differentiable operations as GradientFunctions
(``elementwise.py``, ``reduce.py``, ``matmul.py``, ``views.py``), the backward pass in
``backward.py``.

Two ways to make a tensor, one checked and one trusted. ``Tensor(storage, shape, strides,
offset)`` and ``Tensor.from_buffer`` take a layout from their caller, so they check that
it lies inside the storage (``strides.check_view``): every kernel relies on it (backend.py,
"What a kernel may assume"). Operations make their outputs and views through
``_new_tensor`` and ``view_of``, which check nothing: they run for every operation, and
their layouts are computed from a valid tensor's (a reshape, a slice, a kernel's output
of the shape it was asked for), so they are valid by construction.
"""
import weakref

from . import backend as backends
from . import dtypes, grad_mode
from .backend import View
from .broadcast import broadcast_strides, sum_dims
from .strides import check_view, is_contiguous, make_strides, normalize_dim, numel


class Storage:
    """A backend buffer shared by every view of it. ``version`` counts in-place writes:
    autograd compares it with the version a saved tensor had in the forward pass."""
    __slots__ = ("buffer", "device", "version", "max_dims")

    def __init__(self, buffer, device, max_dims=None):
        self.buffer, self.device, self.version = buffer, device, 0
        # the device's limit, read by every view of it: the caller passes it when it has
        # it at hand (an operation's output), else it is looked up
        self.max_dims = max_dims if max_dims is not None else backends.get(device).max_dims


class Tensor:
    # Fixed attributes (no per-instance dict): a tensor is made by every operation, and
    # slots make that, and reading its fields, measurably cheaper (the performance chapter).
    # "_grad" behind the ``grad`` property, which checks what is assigned; the backward
    # pass, whose gradients have the right shape by construction, writes "_grad" itself.
    __slots__ = ("storage", "shape", "strides", "offset", "dtype", "_grad", "grad_fn",
                 "requires_grad", "__weakref__")

    def __init__(self, storage, shape, strides=None, offset=0, dtype=dtypes.float32,
                 requires_grad=False):
        """A view of ``storage`` (strides None: row-major). Checked, since the layout comes
        from the caller: it must lie inside the storage, with non-negative sizes, strides
        and offset (ValueError otherwise; see the module docstring)."""
        if not isinstance(storage, Storage):
            raise TypeError(f"Tensor(): expected a Storage, got {type(storage).__name__}")
        if not isinstance(dtype, dtypes.DType):
            raise TypeError(f"Tensor(): expected a dtype such as tracegrad.float32, got {dtype!r}")
        be = backends.get(storage.device)
        shape, strides, offset = check_view(shape, strides, offset, be.size(storage.buffer, dtype))
        _check_dims(shape, storage.device, be.max_dims)
        if storage.max_dims != be.max_dims:
            raise ValueError(f"Tensor(): this storage says device {storage.device!r} allows "
                             f"{storage.max_dims} dimensions, the device {be.max_dims}")
        self.storage, self.shape, self.strides, self.offset = storage, shape, strides, offset
        self.dtype = dtype
        self._grad = None
        self.grad_fn = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    # ---- making tensors from buffers ------------------------------------------------------
    @classmethod
    def from_buffer(cls, buffer, shape, dtype, device):
        """A new contiguous tensor owning ``buffer``, which must hold numel(shape) elements
        of dtype at least (ValueError otherwise, naming both)."""
        be = backends.get(device)
        if type(shape) is not tuple:
            shape = tuple(shape)
        size = be.size(buffer, dtype)
        if numel(shape) > size or (shape and min(shape) < 0):
            check_view(shape, None, 0, size)                # raises, naming what is wrong
        return _new_tensor(Storage(buffer, device, be.max_dims), shape, None, 0, dtype)

    def view_of(self, shape, strides, offset):
        """Another view of this tensor's storage (no autograd link; see views.py); strides
        None: contiguous. Unchecked, for the operations that compute a valid layout from
        this tensor's (the module docstring); ``Tensor(t.storage, ...)`` checks one."""
        return _new_tensor(self.storage, shape, strides, offset, self.dtype)

    # A View is a namedtuple, whose View(...) runs a Python-level __new__; tuple.__new__
    # builds the same object in half the time, and every kernel call reads two or three.
    def as_view(self):
        """What a kernel reads: which buffer elements, in which layout, as which dtype."""
        return tuple.__new__(View, (self.storage.buffer, self.shape, self.strides, self.offset, self.dtype))

    def broadcast_view(self, shape):
        """as_view() stretched to ``shape`` by broadcasting (stride 0 where stretched): what
        an element-wise kernel reads. No autograd link: the operation that launches the
        kernel records this tensor itself as its input."""
        if shape == self.shape:
            strides = self.strides
        else:
            strides = broadcast_strides(self.shape, self.strides, shape)
        return tuple.__new__(View, (self.storage.buffer, shape, strides, self.offset, self.dtype))

    def launch(self, kernel, *args, shape, dtype):
        """Run a kernel of this tensor's device; wrap the buffer it returns."""
        storage = self.storage
        device = storage.device
        # backends.launch, inlined: one Python call fewer on every operation (~0.5 us of
        # ~6); a backend without the kernel still goes through launch's fallback
        fn = getattr(backends.get(device), kernel, None)
        buffer = fn(*args) if fn is not None else backends.launch(device, kernel, *args, out_dtype=dtype)
        # the output is on this tensor's device, whose limit this storage holds
        return _new_tensor(Storage(buffer, device, storage.max_dims), shape, None, 0, dtype)

    # ---- layout -----------------------------------------------------------------------------
    @property
    def device(self):
        return self.storage.device

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    def numel(self):
        return numel(self.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[normalize_dim(dim, self.ndim)]

    def stride(self, dim=None):
        return self.strides if dim is None else self.strides[normalize_dim(dim, self.ndim)]

    def is_contiguous(self):
        return is_contiguous(self.shape, self.strides)

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # ---- reading values out --------------------------------------------------------------
    def tolist(self):
        flat = backends.get(self.device).to_flat(self.as_view())
        if not self.shape:
            return flat[0]
        for d in range(self.ndim - 1, 0, -1):      # rows of the last dimension first
            size = self.shape[d]                    # counted, not found by stepping: size may be 0
            flat = [flat[i * size:(i + 1) * size] for i in range(numel(self.shape[:d]))]
        return flat

    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape "
                             f"{self.shape} ({self.numel()} elements)")
        return backends.get(self.device).to_flat(self.as_view())[0]

    def numpy(self):
        return interop.to_numpy(self)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(f"the truth value of a tensor with {self.numel()} elements is "
                               "ambiguous; use .any() or .all()")
        return bool(self.item())

    def __repr__(self):
        # As PyTorch: the dtype is named unless the values show it, and no values show one
        # but the default (float32); an empty tensor gives its size instead of nested []s.
        empty = self.numel() == 0
        implied = (dtypes.float32,) if empty else (dtypes.float32, dtypes.int64, dtypes.bool_)
        extras = "" if self.dtype in implied else f", dtype={self.dtype}"
        if self.device != "python":
            extras += f", device={self.device!r}"
        if self.grad_fn is not None:
            extras += f", grad_fn=<{self.grad_fn.name}>"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        if empty:
            size = "" if self.ndim == 1 else f", size={self.shape}"
            return f"tensor([]{size}{extras})"
        return f"tensor({self.tolist()}{extras})"

    # ---- autograd -------------------------------------------------------------------------
    def requires_grad_(self, flag=True):
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError(f"only floating point tensors can require gradients, "
                               f"this one has dtype {self.dtype}")
        if not flag and self.grad_fn is not None:
            raise RuntimeError("requires_grad_(False) on a non-leaf tensor; use detach()")
        self.requires_grad = flag
        return self

    def backward(self, gradient=None, retain_graph=False):
        autograd.backward(self, gradient, retain_graph)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if self.grad_fn is not None:
            self.grad_fn.retained = weakref.proxy(self)

    def detach(self):
        """The same data, cut from the graph."""
        return _new_tensor(self.storage, self.shape, self.strides, self.offset, self.dtype)

    @property
    def grad(self):
        """The gradient backward() accumulated here (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, value):
        # checked as in PyTorch: the optimizers' kernels read a gradient as the
        # parameter's shape, dtype and device
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    def zero_grad(self):
        self._grad = None

    # ---- moving and converting --------------------------------------------------------------
    def to(self, device=None, dtype=None):
        """A copy on another device and/or with another dtype (self when nothing changes).
        Differentiable: the gradient flows back to this tensor."""
        device = device or self.device
        dtype = dtype or self.dtype
        if device == self.device and dtype is self.dtype:
            return self
        return elementwise.Convert.apply(self, device, dtype)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def clone(self):
        """A copy with its own storage; gradients flow back to self."""
        return views.Contiguous.apply(self)

    def contiguous(self):
        return self if self.is_contiguous() else views.Contiguous.apply(self)

    def ones_like(self):
        return factories.ones_like(self)

    # ---- in-place operations ----------------------------------------------------------------
    def _check_inplace(self, op, *others):
        if grad_mode.is_grad_enabled() and (self.requires_grad or any(
                getattr(o, "requires_grad", False) for o in others)):
            what = "a leaf tensor that requires grad" if self.is_leaf and self.requires_grad \
                else "a tensor that is part of the autograd graph"
            raise RuntimeError(f"{op}: in-place operation on {what}; wrap it in "
                               "`with no_grad():` (as optimizers do) or use the out-of-place op")

    def _write(self, op, source):
        """Copy `source` (broadcast to this view) into this view and bump the version."""
        self._check_inplace(op, source)
        if any(stride == 0 and size > 1 for size, stride in zip(self.shape, self.strides)):
            raise RuntimeError(f"{op}: this view of shape {self.shape} has stride 0 (it was "
                               "expanded), so several of its elements are one memory location; "
                               "write to a clone() instead")
        source = factories.as_tensor(source, dtype=self.dtype, device=self.device).broadcast_to(self.shape)
        if source.storage is self.storage:     # overlapping views: read everything before writing
            source = views.copy(source)
        backends.launch(self.device, "write", self.as_view(), source.as_view())
        self.storage.version += 1
        return self

    def copy_(self, source):
        return self._write("copy_", source)

    def fill_(self, value):
        return self._write("fill_", value)

    def zero_(self):
        return self._write("zero_", 0)

    def add_(self, other, alpha=1):
        self._check_inplace("add_", other)
        return self._write("add_", self + other * alpha if alpha != 1 else self + other)

    def sub_(self, other, alpha=1):
        self._check_inplace("sub_", other)
        return self._write("sub_", self - other * alpha if alpha != 1 else self - other)

    def mul_(self, other):
        self._check_inplace("mul_", other)
        return self._write("mul_", self * other)

    def __setitem__(self, index, value):
        self._check_inplace("__setitem__ (slice assignment)", value)
        shape, strides, offset = views.basic_index(self, index)
        self.view_of(shape, strides, offset)._write("__setitem__", value)

    # ---- shapes (views, see views.py) --------------------------------------------------------
    def view(self, *shape):
        return views.Reshape.apply(self, _shape_arg(shape), False)

    def reshape(self, *shape):
        return views.Reshape.apply(self, _shape_arg(shape), True)

    def flatten(self, start_dim=0, end_dim=-1):
        s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
        if not self.shape:
            return self.reshape(1)
        return self.reshape(*self.shape[:s], -1, *self.shape[e + 1:])

    def unsqueeze(self, dim):
        dim = normalize_dim(dim, self.ndim + 1)
        return self.reshape(*self.shape[:dim], 1, *self.shape[dim:])

    def squeeze(self, dim=None):
        if dim is None:
            return self.reshape(*[s for s in self.shape if s != 1])
        dim = normalize_dim(dim, self.ndim)
        if self.shape[dim] != 1:
            return self
        return self.reshape(*self.shape[:dim], *self.shape[dim + 1:])

    def transpose(self, dim0, dim1):
        order = list(range(self.ndim))
        d0, d1 = normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)
        order[d0], order[d1] = order[d1], order[d0]
        return self.permute(*order)

    @property
    def T(self):
        return self.permute(*reversed(range(self.ndim)))

    def permute(self, *dims):
        return views.Permute.apply(self, tuple(normalize_dim(d, self.ndim) for d in _shape_arg(dims)))

    def expand(self, *shape):
        return views.Expand.apply(self, _shape_arg(shape))

    def broadcast_to(self, shape):
        return self if tuple(shape) == self.shape else self.expand(*shape)

    def __getitem__(self, index):
        return views.getitem(self, index)

    def sum_to(self, shape):
        """Sum over the dimensions that broadcasting stretched to reach self.shape from
        ``shape``: the gradient of a broadcast, as chapter 4 derives."""
        dims = sum_dims(shape, self.shape)
        out = self.sum(dim=dims, keepdim=True) if dims else self
        return out.reshape(*shape)

    # ---- arithmetic (elementwise.py) ---------------------------------------------------------
    def __add__(self, other): return _binary("add", self, other)
    def __radd__(self, other): return _binary("add", other, self)
    def __sub__(self, other): return _binary("sub", self, other)
    def __rsub__(self, other): return _binary("sub", other, self)
    def __mul__(self, other): return _binary("mul", self, other)
    def __rmul__(self, other): return _binary("mul", other, self)
    def __truediv__(self, other): return _binary("div", self, other)
    def __rtruediv__(self, other): return _binary("div", other, self)
    def __pow__(self, other): return _binary("pow", self, other)
    def __rpow__(self, other): return _binary("pow", other, self)
    def __neg__(self): return _unary("neg", self)
    def __abs__(self): return _unary("abs", self)
    def __matmul__(self, other): return self.matmul(other)
    def __rmatmul__(self, other): return _as_tensor_like(other, self).matmul(self)

    def __eq__(self, other): return _compare("eq", self, other)
    def __ne__(self, other): return _compare("ne", self, other)
    def __lt__(self, other): return _compare("lt", self, other)
    def __le__(self, other): return _compare("le", self, other)
    def __gt__(self, other): return _compare("gt", self, other)
    def __ge__(self, other): return _compare("ge", self, other)
    __hash__ = object.__hash__          # tensors are dict keys by identity, as in PyTorch

    def neg(self): return _unary("neg", self)
    def exp(self): return _unary("exp", self)
    def log(self): return _unary("log", self)
    def sqrt(self): return _unary("sqrt", self)
    def abs(self): return _unary("abs", self)
    def relu(self): return _unary("relu", self)
    def sigmoid(self): return _unary("sigmoid", self)
    def tanh(self): return _unary("tanh", self)
    def gelu(self, approximate="none"): return _unary(elementwise.gelu_op(approximate), self)

    def maximum(self, other): return _binary("maximum", self, other)
    def minimum(self, other): return _binary("minimum", self, other)
    def pow(self, other): return _binary("pow", self, other)

    # ---- reductions (reduce.py) ------------------------------------------------------------
    def sum(self, dim=None, keepdim=False):
        return reduce.reduce("sum", self, dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return reduce.reduce("mean", self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        return reduce.reduce("max", self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        return reduce.reduce("min", self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return reduce.arg_reduce("argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return reduce.arg_reduce("argmin", self, dim, keepdim)

    def softmax(self, dim=-1):
        return softmax.softmax(self, dim)

    def log_softmax(self, dim=-1):
        return softmax.log_softmax(self, dim)

    # ---- masks and pieces --------------------------------------------------------------------
    def masked_fill(self, mask, value):
        """value where mask is true, self elsewhere (mask broadcasts)."""
        return elementwise.where(mask, value, self)

    def tril(self, diagonal=0):
        """Zeros above the given diagonal of the last two dimensions (a causal mask)."""
        rows, cols = self.shape[-2:]
        keep = factories.arange(rows, device=self.device).unsqueeze(-1) + diagonal >= \
            factories.arange(cols, device=self.device)
        return elementwise.where(keep, self, 0)

    def split(self, split_size_or_sections, dim=0):
        return concat.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        n = self.shape[dim]
        return concat.split(self, -(-n // chunks), dim)

    # ---- matrix product (matmul.py) --------------------------------------------------------
    def matmul(self, other, transpose_a=False, transpose_b=False):
        return matmul.matmul(self, _as_tensor_like(other, self), transpose_a, transpose_b)


def _new_tensor(storage, shape, strides, offset, dtype):
    """Tensor(storage, shape, strides, offset, dtype), made without calling __init__:
    object.__new__ and the fields set directly, about half the cost. Every operation's
    output and every view is made here, so it saves on every operation."""
    if type(shape) is not tuple:
        shape = tuple(shape)
    limit = storage.max_dims
    if limit is not None and len(shape) > limit:
        _check_dims(shape, storage.device, limit)
    t = object.__new__(Tensor)
    t.storage, t.shape, t.offset, t.dtype = storage, shape, offset, dtype
    t.strides = make_strides(shape) if strides is None else tuple(strides)
    t._grad, t.grad_fn, t.requires_grad = None, None, False
    return t


def _check_dims(shape, device, limit):
    if limit is not None and len(shape) > limit:
        raise ValueError(f"device {device!r} supports tensors of at most {limit} "
                         f"dimensions; this one would have shape {shape}")


def _check_grad(t, grad):
    """What PyTorch checks when ``t.grad = grad`` is assigned."""
    if not isinstance(grad, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(grad).__name__}")
    if grad is t:
        raise RuntimeError("can't assign a tensor as its own grad")
    if grad.dtype is not t.dtype:
        raise RuntimeError(f"assigned grad has data of a different type: {grad.dtype}, the "
                           f"tensor is {t.dtype}")
    if grad.device != t.device:
        raise RuntimeError(f"assigned grad has data located on a different device: "
                           f"{grad.device!r}, the tensor is on {t.device!r}")
    if grad.shape != t.shape:
        raise RuntimeError(f"assigned grad has data of a different size: shape {grad.shape}, "
                           f"the tensor has shape {t.shape}")


def _shape_arg(shape):
    """view(2, 3) and view((2, 3)) both mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _as_tensor_like(x, like):
    return x if isinstance(x, Tensor) else factories.as_tensor(x, device=like.device)


def _unary(op, x):
    return elementwise.unary(op, x)


def _binary(op, a, b):
    return elementwise.binary(op, a, b)


def _compare(op, a, b):
    return elementwise.compare(op, a, b)


# The operation modules use Tensor, so they are imported once it exists.
from . import backward as autograd  # noqa: E402
from . import concat, elementwise, factories, interop, matmul, reduce, softmax, views  # noqa: E402
