"""Tensor's operations as methods: ``x + y``, ``x.sum()``, ``x.view(2, 3)``, ``x.backward()``
(chapter 4). Each is a thin call into the module that implements it, and this file is the one
list of them: what a tensor can do, and where each operation lives.

Why a module of its own: ``tensor.py`` defines what a tensor *is* (a layout in a storage,
autograd state); the operation modules (``elementwise.py``, ``reduce.py``, ``views.py``, ...)
make and read Tensors, so they import it. Were the methods in the class body, tensor.py would
import the operation modules too: a cycle. Here the imports run one way, tensor.py, then the
operation modules, then this file, which binds the methods below onto the class. The package's
``__init__`` imports it, so the methods are there before any tensor is made.

Binding copies the functions themselves onto the class, as if they were written in its body:
``x + y`` calls ``TensorMethods.__add__`` directly, no wrapper in between.
"""
from types import FunctionType

from . import backward as autograd
from . import composites, concat, dtypes, factories, grad_mode, interop, matmul, reduce, softmax, views
from . import backend as backends
from .backend import launch
from .broadcast import sum_dims
from .elementwise import Convert, binary, compare, unary, where
from .strides import normalize_dim
from .tensor import Tensor


class TensorMethods:
    """Tensor's operations, written as a class body so that they read as methods; ``bind``
    puts each onto Tensor. Not a class to use: its methods run on Tensors."""

    # ---- autograd, numpy -------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=False):
        autograd.backward(self, gradient, retain_graph)

    def numpy(self):
        return interop.to_numpy(self)

    # ---- moving and converting --------------------------------------------------------------
    def to(self, device=None, dtype=None):
        """A copy on another device and/or with another dtype (self when nothing changes).
        Differentiable: the gradient flows back to this tensor."""
        device = device or self.device
        dtype = dtype or self.dtype
        if device == self.device and dtype is self.dtype:
            return self
        return Convert.apply(self, device, dtype)

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
        launch(self.device, "write", self.as_view(), source.as_view())
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
    def __add__(self, other): return binary("add", self, other)
    def __radd__(self, other): return binary("add", other, self)
    def __sub__(self, other): return binary("sub", self, other)
    def __rsub__(self, other): return binary("sub", other, self)
    def __mul__(self, other): return binary("mul", self, other)
    def __rmul__(self, other): return binary("mul", other, self)
    def __truediv__(self, other): return binary("div", self, other)
    def __rtruediv__(self, other): return binary("div", other, self)
    def __pow__(self, other): return binary("pow", self, other)
    def __rpow__(self, other): return binary("pow", other, self)
    def __neg__(self): return unary("neg", self)
    def __abs__(self): return unary("abs", self)
    def __matmul__(self, other): return self.matmul(other)
    def __rmatmul__(self, other): return _as_tensor_like(other, self).matmul(self)

    def __eq__(self, other): return compare("eq", self, other)
    def __ne__(self, other): return compare("ne", self, other)
    def __lt__(self, other): return compare("lt", self, other)
    def __le__(self, other): return compare("le", self, other)
    def __gt__(self, other): return compare("gt", self, other)
    def __ge__(self, other): return compare("ge", self, other)

    def neg(self): return unary("neg", self)
    def exp(self): return unary("exp", self)
    def log(self): return unary("log", self)
    def sqrt(self): return unary("sqrt", self)
    def abs(self): return unary("abs", self)
    def relu(self): return unary("relu", self)
    def sigmoid(self): return unary("sigmoid", self)
    def tanh(self): return unary("tanh", self)
    def erf(self): return unary("erf", self)
    def gelu(self, approximate="none"):         # a composite, fused where the device can
        op = composites.gelu_op(approximate)
        return unary(op, self) if op in backends.get(self.device).fused else composites.gelu(self, approximate)

    def maximum(self, other): return binary("maximum", self, other)
    def minimum(self, other): return binary("minimum", self, other)
    def pow(self, other): return binary("pow", self, other)

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
        return where(mask, value, self)

    def tril(self, diagonal=0):
        """Zeros above the given diagonal of the last two dimensions (a causal mask)."""
        rows, cols = self.shape[-2:]
        keep = factories.arange(rows, device=self.device).unsqueeze(-1) + diagonal >= \
            factories.arange(cols, device=self.device)
        return where(keep, self, 0)

    def split(self, split_size_or_sections, dim=0):
        return concat.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        n = self.shape[dim]
        return concat.split(self, -(-n // chunks), dim)

    # ---- matrix product (matmul.py) --------------------------------------------------------
    def matmul(self, other, transpose_a=False, transpose_b=False):
        return matmul.matmul(self, _as_tensor_like(other, self), transpose_a, transpose_b)


def bind(cls, methods):
    """Put every function and property defined in ``methods``'s body onto ``cls``."""
    for name, attr in vars(methods).items():
        if isinstance(attr, (FunctionType, property)):
            setattr(cls, name, attr)


def _shape_arg(shape):
    """view(2, 3) and view((2, 3)) both mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _as_tensor_like(x, like):
    return x if isinstance(x, Tensor) else factories.as_tensor(x, device=like.device)


bind(Tensor, TensorMethods)
