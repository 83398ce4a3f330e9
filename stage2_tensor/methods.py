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
import operator
from types import FunctionType

from . import backward as autograd
from . import (advanced_index, clamp, composites, concat, counting, cumulative, dtypes, factories, gathering,
               grad_mode, index_updates, interop, legacy_types, logical, masks, matmul, reduce, reorder, repeating,
               rounding, shared_memory, softmax, sorting, sparse, statistics, views)
from . import backend as backends
from .backend import launch
from .broadcast import sum_dims
from .elementwise import Convert, binary, compare, unary, where
from .strides import normalize_dim
from .tensor import Tensor
from . import covariance, linalg, products  # noqa: E402  (products and linear algebra)


class TensorMethods:
    """Tensor's operations, written as a class body so that they read as methods; ``bind``
    puts each onto Tensor. Not a class to use: its methods run on Tensors."""

    # ---- autograd, numpy -------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Gradients of this tensor accumulated into the leaves' ``.grad`` (backward.py);
        ``inputs``: into those tensors' only."""
        autograd.backward(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """``hook(grad)`` called with this tensor's gradient in each backward pass; a tensor
        it returns replaces the gradient. The handle's ``remove()`` takes it off."""
        return autograd.register_hook(self, hook)

    @property
    def retains_grad(self):
        """Whether retain_grad() was called on this non-leaf tensor."""
        return self.grad_fn is not None and self.grad_fn.retained is not None

    def numpy(self):
        return interop.to_numpy(self)

    def __array__(self, dtype=None, copy=None):
        """np.array(t), np.asarray(t): numpy()'s array, converted to ``dtype`` when given."""
        out = interop.to_numpy(self)
        if dtype is not None:
            out = out.astype(dtype, copy=False)
        return out.copy() if copy else out

    @property
    def data(self):
        """The same values, cut from the graph: ``detach()``, the older spelling. Writing to
        it (``p.data.add_(...)``) writes the tensor itself, unrecorded."""
        return self.detach()

    @data.setter
    def data(self, value):
        """``p.data = t``: p now views t's storage, with t's shape and dtype (as PyTorch)."""
        _check_tensor("data", value, "value")
        if value.device != self.device:
            raise RuntimeError(f"data: the new value is on device {value.device!r}, the tensor on {self.device!r}")
        self.set_layout(value.storage, value.shape, value.strides, value.offset, value.dtype)

    # ---- moving and converting --------------------------------------------------------------
    def to(self, device=None, dtype=None):
        """A copy on another device and/or with another dtype (self when nothing changes).
        Differentiable: the gradient flows back to this tensor."""
        if isinstance(device, dtypes.DType):        # t.to(tracegrad.float16), as PyTorch
            device, dtype = None, device
        device = device or self.device
        dtype = dtype or self.dtype
        if device == self.device and dtype is self.dtype:
            return self
        return Convert.apply(self, device, dtype)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def half(self):
        """float16: stored in 16 bits, computed in float32 (dtypes.py, "Half precision")."""
        return self.to(dtype=dtypes.float16)

    def bfloat16(self):
        return self.to(dtype=dtypes.bfloat16)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def short(self):
        return self.to(dtype=dtypes.int16)

    def char(self):
        return self.to(dtype=dtypes.int8)

    def byte(self):
        return self.to(dtype=dtypes.uint8)

    def bool(self):
        return self.to(dtype=dtypes.bool_)

    def clone(self):
        """A copy with its own storage; gradients flow back to self."""
        return views.Contiguous.apply(self)

    def __deepcopy__(self, memo):
        """copy.deepcopy(t): a tensor of its own storage with the same values, dtype, device
        and requires_grad, as PyTorch; only a leaf (a tensor inside a graph would lose its
        history). What copy.deepcopy(model) and nn.TransformerEncoder's layer copies use."""
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol; deepcopy t.detach() instead")
        out = views.copy(self)
        return out.requires_grad_(True) if self.requires_grad else out

    def __reduce_ex__(self, protocol):
        """pickle: the values (shared_memory.py); torch.multiprocessing sends a tensor in
        shared memory as that memory."""
        return shared_memory.reduce_by_value(self)

    def share_memory_(self):
        """Move the elements into memory other processes can share, in place (device "cpu";
        shared_memory.py); the tensor itself."""
        return shared_memory.share_memory_(self)

    def is_shared(self):
        return shared_memory.is_shared(self)

    def contiguous(self):
        return self if self.is_contiguous() else views.Contiguous.apply(self)

    def cpu(self):
        """This tensor in the host's memory: itself on "python" and "cpu" (as PyTorch returns
        a CPU tensor itself), else a copy on "cpu", or on "python" where "cpu" is not installed."""
        if self.device in ("python", "cpu"):
            return self
        try:
            backends.get("cpu")
        except ValueError:
            return self.to("python")
        return self.to("cpu")

    def _legacy_init(self, *args, device=None):
        """Tensor(2, 3), Tensor([1, 2]), Tensor(): Tensor.__init__ without a Storage."""
        made = legacy_types.legacy_new(dtypes.float32, args, "Tensor", device)
        self.set_layout(made.storage, made.shape, made.strides, made.offset, made.dtype)
        self._grad, self.grad_fn, self.requires_grad = None, None, False

    def type(self, dtype=None, non_blocking=False):
        """Without an argument, the type's name, 'torch.FloatTensor' (legacy_types.py); with a
        dtype, a tensor type or its name ('torch.LongTensor'), the tensor converted to it."""
        return legacy_types.type_name(self) if dtype is None else legacy_types.convert(self, dtype)

    def type_as(self, other):
        """This tensor converted to other's dtype and device (PyTorch's type names both)."""
        _check_tensor("type_as", other)
        return self.to(device=other.device, dtype=other.dtype)

    def ones_like(self):
        return factories.ones_like(self)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of the given size, with this tensor's dtype and device unless told."""
        return factories.zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of the given size, with this tensor's dtype and device unless told."""
        return factories.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def __index__(self):
        """An integer tensor of one element as a Python int, where Python wants an index
        (``data[i:i + n]``, ``range(t)``, ``[...][i]``), as PyTorch."""
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __format__(self, spec):
        """f"{loss:.4f}": a one-element tensor formats as its number, as PyTorch; other
        tensors as their repr."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def nelement(self):
        """numel(), the older name."""
        return self.numel()

    def element_size(self):
        """Bytes per element."""
        return self.dtype.itemsize

    def storage_offset(self):
        """Where this view's first element is in its storage, in elements."""
        return self.offset

    def data_ptr(self):
        """The address of this view's first element: its storage's (the device's ``address``
        of the buffer) plus the offset in bytes. Views of one storage differ by their
        offsets; what PyTorch code compares to see whether two tensors share memory."""
        return backends.get(self.device).address(self.storage.buffer) + self.offset * self.dtype.itemsize

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

    def div_(self, other):
        self._check_inplace("div_", other)
        return self._write("div_", self / other)

    # x += y, -=, *=, /=: in place, as PyTorch, so that ``param -= lr * param.grad`` (under
    # no_grad) updates the parameter itself. A tensor in the autograd graph is not written
    # (tracegrad's in-place writes stay outside the graph): x += y there makes a new tensor
    # and rebinds x, the same value and gradient. A leaf that requires grad is an error, as
    # in PyTorch.
    def __iadd__(self, other): return _augmented(self, "add", other, "+=")
    def __isub__(self, other): return _augmented(self, "sub", other, "-=")
    def __imul__(self, other): return _augmented(self, "mul", other, "*=")
    def __itruediv__(self, other): return _augmented(self, "div", other, "/=")

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with draws from N(mean, std^2), in place (PyTorch's Tensor.normal_)."""
        _check_random_fill("normal_", self)
        if std < 0:
            raise ValueError(f"normal_ expects std >= 0.0, but found std {std}")
        return self._write("normal_", factories.normal(self.shape, mean, std, dtype=self.dtype,
                                                       device=self.device, generator=generator))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with draws from the uniform distribution on [a, b), in place (PyTorch's
        Tensor.uniform_, whose arguments are named from and to)."""
        _check_random_fill("uniform_", self)
        if a > b:
            raise ValueError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
        return self._write("uniform_", factories.uniform(self.shape, a, b, dtype=self.dtype,
                                                         device=self.device, generator=generator))

    def masked_fill_(self, mask, value):
        """masked_fill, written into this tensor."""
        value = masks.check_mask("masked_fill_", self, mask, value)
        self._check_inplace("masked_fill_", value)
        return self._write("masked_fill_", where(mask, value, self))

    def clamp_(self, min=None, max=None):  # noqa: A002  (PyTorch's argument names)
        """clamp, written into this tensor."""
        clamp.check_bounds("clamp_", min, max)
        self._check_inplace("clamp_", min, max)
        return self._write("clamp_", clamp.clamp(self, min, max))

    def scatter_(self, dim, index, src):
        """scatter, written into this tensor."""
        self._check_inplace("scatter_", src)
        return self._write("scatter_", gathering.scatter(self, dim, index, src))

    def scatter_add_(self, dim, index, src):
        """scatter_add, written into this tensor: src's elements added at index along dim."""
        self._check_inplace("scatter_add_", src)
        return self._write("scatter_add_", gathering.scatter_add(self, dim, index, src))

    def index_put_(self, indices, values, accumulate=False):
        """values written at the advanced index ``indices`` (a tuple of tensors), in place;
        with ``accumulate``, added (repeats add up)."""
        self._check_inplace("index_put_", values)
        return advanced_index.index_put_(self, indices, values, accumulate)

    def index_copy_(self, dim, index, source):
        """index_copy, in place."""
        self._check_inplace("index_copy_", source)
        return index_updates.index_copy(self, dim, index, source, in_place=True)

    def index_fill_(self, dim, index, value):
        """index_fill, in place."""
        self._check_inplace("index_fill_", value)
        return index_updates.index_fill(self, dim, index, value, in_place=True)

    def index_add_(self, dim, index, source, *, alpha=1):
        """index_add, in place."""
        self._check_inplace("index_add_", source)
        return index_updates.index_add(self, dim, index, source, alpha, in_place=True)

    def masked_scatter_(self, mask, source):
        """masked_scatter, in place."""
        self._check_inplace("masked_scatter_", source)
        return masks.masked_scatter(self, mask, source, in_place=True)

    def __setitem__(self, index, value):
        self._check_inplace("__setitem__ (slice assignment)", value)
        if not advanced_index.is_basic(index):                     # tensors, lists, bool masks
            advanced_index.setitem(self, index, value)
            return
        shape, strides, offset = views.basic_index(self, index)
        self.view_of(shape, strides, offset)._write("__setitem__", value)

    # ---- shapes (views, see views.py) --------------------------------------------------------
    def view(self, *shape):
        return views.reshape(self, _shape_arg(shape), False)

    def reshape(self, *shape):
        return views.reshape(self, _shape_arg(shape), True)

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

    def t(self):
        """The transpose of a matrix; a 0-D or 1-D tensor is itself, as PyTorch."""
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor with <= 2 dimensions, but self has shape {self.shape}")
        return self.T if self.ndim == 2 else self

    @property
    def mT(self):
        """The last two dimensions swapped: a batch of matrices transposed."""
        if self.ndim < 2:
            raise ValueError(f"tensor.mT is only supported on matrices or batches of matrices, "
                             f"got shape {self.shape}")
        return self.transpose(-2, -1)

    def permute(self, *dims):
        return views.Permute.apply(self, tuple(normalize_dim(d, self.ndim) for d in _shape_arg(dims)))

    def expand(self, *shape):
        return views.Expand.apply(self, _shape_arg(shape))

    def broadcast_to(self, shape):
        return self if tuple(shape) == self.shape else self.expand(*shape)

    def narrow(self, dim, start, length):
        """The view of ``length`` elements from ``start`` (negative: from the end) along
        ``dim``, as PyTorch's narrow; x.narrow(1, 2, 3) is x[:, 2:5]."""
        dim = normalize_dim(dim, self.ndim)
        size, start, length = self.shape[dim], operator.index(start), operator.index(length)
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                             f"but got {start})")
        start = start + size if start < 0 else start
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def view_as(self, other):
        _check_tensor("view_as", other)
        return self.view(other.shape)

    def expand_as(self, other):
        _check_tensor("expand_as", other)
        return self.expand(other.shape)

    def repeat(self, *sizes):
        return concat.repeat(self, *sizes)

    def index_select(self, dim, index):
        """The entries of ``index`` (a 1-D or 0-D integer tensor) along ``dim``, copied."""
        _check_tensor("index_select", index, "index")
        if index.ndim > 1:
            raise ValueError(f"index_select(): index must be a vector (1-D), got shape {index.shape}")
        if index.device != self.device:
            raise RuntimeError(f"index_select(): index is on device {index.device!r}, the tensor "
                               f"on {self.device!r}")
        dim = normalize_dim(dim, self.ndim)
        return views.IndexSelect.apply(self, dim, views.flat_index(index, self.device))

    def __getitem__(self, index):
        return advanced_index.getitem(self, index)

    is_sparse = False           # sparse.py's SparseTensor: True

    def to_sparse(self):
        """The non-zero entries as a sparse COO tensor (sparse.py)."""
        return sparse.to_sparse(self)

    def to_dense(self):
        return self

    def nonzero(self, *, as_tuple=False):
        """The positions of the nonzero elements, one row of coordinates each (count, ndim);
        ``as_tuple``: one tensor of coordinates per dimension (a 0-d tensor as one of 1-d),
        what x[...] takes as an index."""
        if not as_tuple:
            return advanced_index.nonzero(self)
        found = advanced_index.nonzero(self.reshape(1) if self.ndim == 0 else self)
        return tuple(found[:, d] for d in range(found.shape[1]))

    def argwhere(self):
        """nonzero's (count, ndim) positions (PyTorch's torch.argwhere)."""
        return advanced_index.nonzero(self)

    def count_nonzero(self, dim=None):
        """How many elements are nonzero (along dim, an int or a tuple), as int64: a bool
        tensor's sum itself (compared with 0 it would be promoted to int64 first)."""
        return (self if self.dtype is dtypes.bool_ else self != 0).sum(dim=dim)

    def index_put(self, indices, values, accumulate=False):
        return advanced_index.index_put(self, indices, values, accumulate)

    # ---- slices along a dimension written by index (index_updates.py) ------------------------
    def index_copy(self, dim, index, source):
        return index_updates.index_copy(self, dim, index, source)

    def index_fill(self, dim, index, value):
        return index_updates.index_fill(self, dim, index, value)

    def index_add(self, dim, index, source, *, alpha=1):
        return index_updates.index_add(self, dim, index, source, alpha)

    # ---- gathers along a dimension (gathering.py), running scans (cumulative.py) ------------
    def gather(self, dim, index):
        return gathering.gather(self, dim, index)

    def scatter(self, dim, index, src):
        return gathering.scatter(self, dim, index, src)

    def scatter_add(self, dim, index, src):
        return gathering.scatter_add(self, dim, index, src)

    def take(self, index):
        return gathering.take(self, index)

    def take_along_dim(self, indices, dim=None):
        return gathering.take_along_dim(self, indices, dim)

    def cumsum(self, dim, *, dtype=None):
        return cumulative.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim, *, dtype=None):
        return cumulative.cumprod(self, dim, dtype=dtype)

    def cummax(self, dim):
        return cumulative.cummax(self, dim)

    def cummin(self, dim):
        return cumulative.cummin(self, dim)

    def logcumsumexp(self, dim):
        return cumulative.logcumsumexp(self, dim)

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
    def __floordiv__(self, other): return rounding.floor_divide(self, other)
    def __rfloordiv__(self, other): return rounding.floor_divide(other, self)
    def __mod__(self, other): return rounding.remainder(self, other)
    def __rmod__(self, other): return rounding.remainder(other, self)
    def __neg__(self): return unary("neg", self)
    def __abs__(self): return unary("abs", self)
    def __matmul__(self, other):
        if getattr(other, "is_sparse", False):
            return NotImplemented       # the sparse operand's __rmatmul__ (sparse.py)
        return matmul.matmul(self, other if isinstance(other, Tensor) else _as_tensor_like(other, self))
    def __rmatmul__(self, other): return _as_tensor_like(other, self).matmul(self)

    def __eq__(self, other): return compare("eq", self, other)
    def __ne__(self, other): return compare("ne", self, other)
    def __lt__(self, other): return compare("lt", self, other)
    def __le__(self, other): return compare("le", self, other)
    def __gt__(self, other): return compare("gt", self, other)
    def __ge__(self, other): return compare("ge", self, other)

    # the same comparisons by name; an operand of another type is an error, not NotImplemented
    def eq(self, other): return _compared("eq", self, other)
    def ne(self, other): return _compared("ne", self, other)
    def lt(self, other): return _compared("lt", self, other)
    def le(self, other): return _compared("le", self, other)
    def gt(self, other): return _compared("gt", self, other)
    def ge(self, other): return _compared("ge", self, other)

    def neg(self): return unary("neg", self)
    def exp(self): return unary("exp", self)
    def log(self): return unary("log", self)
    def sqrt(self): return unary("sqrt", self)
    def abs(self): return unary("abs", self)
    def relu(self): return unary("relu", self)
    def sigmoid(self): return unary("sigmoid", self)
    def tanh(self): return unary("tanh", self)
    def erf(self): return unary("erf", self)
    def sign(self): return unary("sign", self)     # gradient 0: the result is a constant
    def diag(self, diagonal=0): return masks.diag(self, diagonal)

    def lerp(self, end, weight):
        """self + weight * (end - self)."""
        return self + (end - self) * weight

    def addcmul(self, tensor1, tensor2, value=1):
        return self + tensor1 * tensor2 * value

    def addcdiv(self, tensor1, tensor2, value=1):
        return self + tensor1 / tensor2 * value

    def lerp_(self, end, weight):
        self._check_inplace("lerp_", end, weight)
        return self._write("lerp_", self.lerp(end, weight))

    def addcmul_(self, tensor1, tensor2, value=1):
        self._check_inplace("addcmul_", tensor1, tensor2)
        return self._write("addcmul_", self.addcmul(tensor1, tensor2, value))

    def addcdiv_(self, tensor1, tensor2, value=1):
        self._check_inplace("addcdiv_", tensor1, tensor2)
        return self._write("addcdiv_", self.addcdiv(tensor1, tensor2, value))

    def floor(self): return unary("floor", self)
    def ceil(self): return unary("ceil", self)
    def trunc(self): return unary("trunc", self)
    def round(self): return unary("round", self)
    def floor_divide(self, other): return rounding.floor_divide(self, other)
    def remainder(self, other): return rounding.remainder(self, other)
    def square(self): return binary("mul", self, self)
    def rsqrt(self): return 1 / unary("sqrt", self)
    def sin(self): return unary("sin", self)
    def cos(self): return unary("cos", self)
    def log1p(self): return unary("log1p", self)
    def expm1(self): return unary("expm1", self)
    def gelu(self, approximate="none"):         # a composite, fused where the device can
        op = composites.gelu_op(approximate)
        return unary(op, self) if op in backends.get(self.device).fused else composites.gelu(self, approximate)

    def maximum(self, other): return binary("maximum", self, other)
    def minimum(self, other): return binary("minimum", self, other)
    def pow(self, other): return binary("pow", self, other)

    def clamp(self, min=None, max=None):  # noqa: A002  (PyTorch's argument names)
        return clamp.clamp(self, min, max)

    # ---- reductions (reduce.py) ------------------------------------------------------------
    def sum(self, dim=None, keepdim=False):
        return reduce.reduce("sum", self, dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return reduce.reduce("mean", self, dim, keepdim)

    def max(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):              # x.max(y): PyTorch's element-wise maximum
            return self.maximum(dim)
        return reduce.reduce("max", self, dim, keepdim)

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        return reduce.reduce("min", self, dim, keepdim)

    def amax(self, dim=(), keepdim=False):
        """The largest element over ``dim`` (every dimension by default), values only."""
        return reduce.Extremum.apply(self, reduce.normalize_dims(self, dim if dim != () else None), keepdim, "max")

    def amin(self, dim=(), keepdim=False):
        return reduce.Extremum.apply(self, reduce.normalize_dims(self, dim if dim != () else None), keepdim, "min")

    def logsumexp(self, dim, keepdim=False):
        return statistics.logsumexp(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return reduce.arg_reduce("argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return reduce.arg_reduce("argmin", self, dim, keepdim)

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return statistics.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return statistics.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p="fro", dim=None, keepdim=False):
        return statistics.norm(self, p, dim, keepdim)

    def all(self, dim=None, keepdim=False):
        return logical.all(self, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return logical.any(self, dim, keepdim)

    def softmax(self, dim=-1):
        return softmax.softmax(self, dim)

    def log_softmax(self, dim=-1):
        return softmax.log_softmax(self, dim)

    # ---- order (sorting.py), sampling (factories.py) ----------------------------------------
    def sort(self, dim=-1, descending=False, stable=False):
        return sorting.sort(self, dim, descending, stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        return sorting.argsort(self, dim, descending, stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002  (PyTorch's argument name)
        return sorting.topk(self, k, dim, largest, sorted)

    def msort(self):
        return sorting.msort(self)

    def kthvalue(self, k, dim=-1, keepdim=False):
        return sorting.kthvalue(self, k, dim, keepdim)

    def median(self, dim=None, keepdim=False):
        return sorting.median(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim=False):
        return sorting.nanmedian(self, dim, keepdim)

    # ---- counting (counting.py), repeating (repeating.py) -----------------------------------
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
        return counting.unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return counting.unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights=None, minlength=0):
        return counting.bincount(self, weights, minlength)

    def histc(self, bins=100, min=0, max=0):  # noqa: A002
        return counting.histc(self, bins, min, max)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        return repeating.repeat_interleave(self, repeats, dim, output_size=output_size)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return factories.multinomial(self, num_samples, replacement, generator=generator)

    # ---- masks and pieces --------------------------------------------------------------------
    def masked_fill(self, mask, value):
        return masks.masked_fill(self, mask, value)

    def masked_select(self, mask):
        return masks.masked_select(self, mask)

    def masked_scatter(self, mask, source):
        return masks.masked_scatter(self, mask, source)

    def tril(self, diagonal=0):
        return masks.tril(self, diagonal)

    def triu(self, diagonal=0):
        return masks.triu(self, diagonal)

    def unbind(self, dim=0):
        return concat.unbind(self, dim)

    def flip(self, *dims):
        return reorder.flip(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def roll(self, shifts, dims=None):
        return reorder.roll(self, shifts, dims)

    def split(self, split_size_or_sections, dim=0):
        return concat.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        return concat.chunk(self, chunks, dim)

    # ---- matrix product (matmul.py) --------------------------------------------------------
    def mm(self, mat2):
        """The product of two matrices (2-D only; matmul broadcasts)."""
        return matmul.mm(self, mat2)

    def bmm(self, batch2):
        return matmul.bmm(self, batch2)

    def matmul(self, other, transpose_a=False, transpose_b=False):
        return matmul.matmul(self, _as_tensor_like(other, self), transpose_a, transpose_b)

    # ---- products and linear algebra (products.py, covariance.py, linalg/) -----------------
    def dot(self, other): return products.dot(self, other)
    def vdot(self, other): return products.vdot(self, other)
    def inner(self, other): return products.inner(self, other)
    def mv(self, vec): return products.mv(self, vec)
    def ger(self, vec2): return products.ger(self, vec2)
    def outer(self, vec2): return matmul.outer(self, vec2)
    def kron(self, other): return products.kron(self, other)
    def trace(self): return products.trace(self)
    def cross(self, other, dim=None): return products.cross(self, other, dim)
    def matrix_power(self, n): return linalg.matrix_power(self, n)
    def cov(self, *, correction=1, fweights=None, aweights=None):
        return covariance.cov(self, correction=correction, fweights=fweights, aweights=aweights)
    def corrcoef(self): return covariance.corrcoef(self)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1): return products.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmv(self, mat, vec, *, beta=1, alpha=1): return products.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1): return products.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return products.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return products.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        self._check_inplace("addmm_", mat1, mat2)
        return self._write("addmm_", self.addmm(mat1, mat2, beta=beta, alpha=alpha))

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        self._check_inplace("addmv_", mat, vec)
        return self._write("addmv_", self.addmv(mat, vec, beta=beta, alpha=alpha))

    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        self._check_inplace("addr_", vec1, vec2)
        return self._write("addr_", self.addr(vec1, vec2, beta=beta, alpha=alpha))

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        self._check_inplace("addbmm_", batch1, batch2)
        return self._write("addbmm_", self.addbmm(batch1, batch2, beta=beta, alpha=alpha))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        self._check_inplace("baddbmm_", batch1, batch2)
        return self._write("baddbmm_", self.baddbmm(batch1, batch2, beta=beta, alpha=alpha))

    def det(self): return linalg.det(self)
    def logdet(self): return linalg.lu.logdet(self)
    def slogdet(self): return linalg.slogdet(self)
    def inverse(self): return linalg.inv(self)
    def cholesky(self, upper=False): return linalg.deprecated.cholesky(self, upper)
    def qr(self, some=True): return linalg.deprecated.qr(self, some)
    def svd(self, some=True, compute_uv=True): return linalg.deprecated.svd(self, some, compute_uv)
    def pinverse(self, rcond=1e-15): return linalg.deprecated.pinverse(self, rcond)
    def matrix_exp(self): return linalg.matrix_exp(self)


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


def _augmented(x, op, other, symbol):
    out = binary(op, x, other)
    if grad_mode.is_grad_enabled() and (x.requires_grad or getattr(other, "requires_grad", False)):
        if x.is_leaf and x.requires_grad:
            x._check_inplace(symbol, other)                  # raises, naming the leaf
        return out                                            # in the graph: a new tensor
    if out.shape != x.shape:
        raise RuntimeError(f"{symbol}: output with shape {x.shape} doesn't match the broadcast shape {out.shape}")
    if out.dtype.is_floating_point and not x.dtype.is_floating_point:
        raise RuntimeError(f"{symbol}: result type {out.dtype} can't be cast to the desired output type {x.dtype}")
    return x._write(symbol, out)


def _check_random_fill(op, t):
    if not t.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a floating-point tensor, got dtype {t.dtype}")


def _check_tensor(op, other, name="other"):
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(other).__name__}")


def _compared(op, a, b):
    out = compare(op, a, b)
    if out is NotImplemented:
        raise TypeError(f"{op}(): argument 'other' must be a Tensor or a number, not {type(b).__name__}")
    return out


def _as_tensor_like(x, like):
    return x if isinstance(x, Tensor) else factories.as_tensor(x, device=like.device)


bind(Tensor, TensorMethods)


# ---- shapes and views, reductions by index, random fills (the surface sweep's area D:
# index_reduce.py, view_layouts.py, shaping.py, random_fills.py) -----------------------------
from . import index_reduce as _index_reduce, put as _put  # noqa: E402  (after bind: as the others)
from . import shaping as _shaping, view_layouts as _view_layouts  # noqa: E402


class ShapeMethods:
    """Tensor's methods of area D, bound as TensorMethods' are."""

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        return _index_reduce.index_reduce(self, dim, index, source, reduce, include_self)

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        """index_reduce, written into this tensor."""
        self._check_inplace("index_reduce_", source)
        return self._write("index_reduce_", _index_reduce.index_reduce(self, dim, index, source, reduce, include_self))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return _index_reduce.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        """scatter_reduce, written into this tensor."""
        self._check_inplace("scatter_reduce_", src)
        return self._write("scatter_reduce_", _index_reduce.scatter_reduce(self, dim, index, src, reduce,
                                                                           include_self=include_self))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        return _view_layouts.diagonal(self, offset, dim1, dim2)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return _view_layouts.diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset=0):
        return _view_layouts.diagflat(self, offset)

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        return _view_layouts.diagonal_scatter(self, src, offset, dim1, dim2)

    def select(self, dim, index):
        return _view_layouts.select(self, dim, index)

    def select_scatter(self, src, dim, index):
        return _view_layouts.select_scatter(self, src, dim, index)

    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        return _view_layouts.slice_scatter(self, src, dim, start, end, step)

    def unfold(self, dimension, size, step):
        return _view_layouts.unfold(self, dimension, size, step)

    def as_strided(self, size, stride, storage_offset=None):
        return _view_layouts.as_strided(self, size, stride, storage_offset)

    def movedim(self, source, destination):
        return _shaping.movedim(self, source, destination)

    moveaxis = movedim

    def swapaxes(self, axis0, axis1):
        return _shaping.swapaxes(self, axis0, axis1)

    swapdims = swapaxes

    def rot90(self, k=1, dims=(0, 1)):
        return _shaping.rot90(self, k, dims)

    def fliplr(self):
        return _shaping.fliplr(self)

    def flipud(self):
        return _shaping.flipud(self)

    def tile(self, *dims):
        return _shaping.tile(self, _shape_arg(dims))

    def unflatten(self, dim, sizes):
        return _shaping.unflatten(self, dim, sizes)

    def sum_to_size(self, *size):
        return _shaping.sum_to_size(self, *size)

    def tensor_split(self, indices_or_sections, dim=0):
        return _shaping.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections):
        return _shaping.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        return _shaping.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        return _shaping.dsplit(self, indices_or_sections)

    def split_with_sizes(self, split_sizes, dim=0):
        return _shaping.split_with_sizes(self, split_sizes, dim)

    def put(self, index, source, accumulate=False):
        return _put.put(self, index, source, accumulate)

    def put_(self, index, source, accumulate=False):
        """put, written into this tensor."""
        self._check_inplace("put_", source)
        return self._write("put_", _put.put(self, index, source, accumulate))


bind(Tensor, ShapeMethods)


# ---- random draws of other distributions (random_fills.py) -----------------------------------
from . import random_fills as _random_fills  # noqa: E402  (after bind: as the others)


class RandomFillMethods:
    """Tensor's random draws beyond normal_ and uniform_, bound as TensorMethods' are."""

    def bernoulli(self, p=None, *, generator=None):
        return _random_fills.bernoulli(self, p, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        return _random_fills.bernoulli_(self, p, generator=generator)

    def random_(self, *args, generator=None, **kwargs):
        return _random_fills.random_(self, *args, generator=generator, **kwargs)

    def exponential_(self, lambd=1.0, *, generator=None):
        return _random_fills.exponential_(self, lambd, generator=generator)

    def geometric_(self, p, *, generator=None):
        return _random_fills.geometric_(self, p, generator=generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return _random_fills.log_normal_(self, mean, std, generator=generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return _random_fills.cauchy_(self, median, sigma, generator=generator)


bind(Tensor, RandomFillMethods)
from . import math_methods  # noqa: E402, F401  (binds the math functions' and reductions' methods, x.tan())
