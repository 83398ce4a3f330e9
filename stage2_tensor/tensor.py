"""Tensor: a strided view of a storage (chapter 1) that records the operations on it
(chapter 4). PyTorch's names and habits throughout.

The class holds data layout (shape, strides, offset into a Storage), autograd state
(requires_grad, grad, grad_fn) and the methods that read them. It knows no operation:
kernels live in a backend (``backend.py``), differentiable operations as GradientFunctions
(``elementwise.py``, ``reduce.py``, ``matmul.py``, ``views.py``, ...), which import this
module, the backward pass in ``backward.py``; ``methods.py`` binds them onto the class as
its methods (``x + y``, ``x.sum()``, ``x.view(2, 3)``, ``x.backward()``).

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
from . import dtypes, printing
from .backend import View
from .broadcast import broadcast_strides
from .strides import MAX_NUMEL, ROW_MAJOR, Size, check_view, is_contiguous, make_strides, normalize_dim, numel


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
    # "_view": as_view()'s View, made on first use (None until then).
    __slots__ = ("storage", "shape", "strides", "offset", "dtype", "_grad", "grad_fn",
                 "requires_grad", "_view", "__weakref__")
    # methods.py gives tensors ``==`` (element-wise, as in PyTorch); they stay dict keys
    # by identity
    __hash__ = object.__hash__
    # numpy's operators leave a tensor operand to Tensor's own: np.float64(2) * t is 2 * t,
    # in the graph, not a numpy array of t's values (which np.array(t) gives, methods.py)
    __array_ufunc__ = None

    def __init__(self, *args, **kwargs):
        """``Tensor(storage, shape, strides=None, offset=0, dtype=float32,
        requires_grad=False)``: a view of ``storage`` (strides None: row-major). Checked,
        since the layout comes from the caller: it must lie inside the storage, with
        non-negative sizes, strides and offset (ValueError otherwise; see the module
        docstring).

        Without a Storage, PyTorch's legacy constructor: ``Tensor(2, 3)`` (zeros of that
        size), ``Tensor([1, 2])`` (from data), ``Tensor()`` (empty), float32: methods.py
        binds ``_legacy_init`` (legacy_types.py), since making a tensor from data takes the
        operations this module does not import."""
        if (args and isinstance(args[0], Storage)) or "storage" in kwargs:
            self._view_of(*args, **kwargs)
        else:
            self._legacy_init(*args, **kwargs)

    def _view_of(self, storage, shape, strides=None, offset=0, dtype=dtypes.float32, requires_grad=False):
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
        self._view = None
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
        if numel(shape) > size or (shape and not 0 <= min(shape) <= max(shape) <= MAX_NUMEL):
            check_view(shape, None, 0, size)                # raises, naming what is wrong
        return _new_tensor(Storage(buffer, device, be.max_dims), shape, None, 0, dtype)

    def view_of(self, shape, strides, offset):
        """Another view of this tensor's storage (no autograd link; see views.py); strides
        None: contiguous. Unchecked, for the operations that compute a valid layout from
        this tensor's (the module docstring); ``Tensor(t.storage, ...)`` checks one."""
        return _new_tensor(self.storage, shape, strides, offset, self.dtype)

    # A View is a namedtuple, whose View(...) runs a Python-level __new__; tuple.__new__
    # builds the same object in half the time. Still, it is made once per tensor and kept:
    # every kernel call reads two or three, and a parameter or a saved activation is read
    # by several operations. A tensor's layout is fixed when it is made; the two places that
    # point an existing tensor elsewhere (``p.data = t``, Module.to) go through set_layout,
    # which drops the kept View.
    def as_view(self):
        """What a kernel reads: which buffer elements, in which layout, as which dtype."""
        view = self._view
        if view is None:
            view = self._view = tuple.__new__(
                View, (self.storage.buffer, self.shape, self.strides, self.offset, self.dtype))
        return view

    def set_layout(self, storage, shape, strides, offset, dtype):
        """Make this tensor view ``storage`` with another layout and dtype, in place, unchecked
        (``p.data = t`` and Module.to give another valid tensor's)."""
        self.storage, self.shape, self.strides, self.offset, self.dtype = storage, shape, strides, offset, dtype
        self._view = None

    def broadcast_view(self, shape):
        """as_view() stretched to ``shape`` by broadcasting (stride 0 where stretched): what
        an element-wise kernel reads. No autograd link: the operation that launches the
        kernel records this tensor itself as its input."""
        if shape == self.shape:
            return self.as_view()
        strides = broadcast_strides(self.shape, self.strides, shape)
        return tuple.__new__(View, (self.storage.buffer, shape, strides, self.offset, self.dtype))

    def launch(self, kernel, *args, shape, dtype):
        """Run a kernel of this tensor's device; wrap the buffer it returns."""
        storage = self.storage
        device = storage.device
        # backends.launch, inlined: one Python call fewer on every operation; a backend
        # without the kernel still goes through launch's fallback, and so does a storage dtype
        # in or out, which launch computes in its compute dtype (backend.py, "Half precision").
        # Asking the launching tensor is enough: stage2 gives an operation's inputs one
        # dtype before it launches a kernel; other callers use backends.launch.
        if dtype.compute is not dtype or self.dtype.compute is not self.dtype:
            buffer = backends.launch(device, kernel, *args, out_dtype=dtype)
        else:
            # backends.get, less its call: the registered devices' table read at call time
            be = backends._BACKENDS.get(device) or backends.get(device)
            fn = getattr(be, kernel, None)
            buffer = fn(*args) if fn is not None else backends.launch(device, kernel, *args, out_dtype=dtype)
        # the output is on this tensor's device, whose limit this storage holds
        return _new_output(buffer, device, storage.max_dims, shape, dtype)

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
        if dim is None:                  # the shape's ints were checked: wrapped, not checked again
            return tuple.__new__(Size, self.shape)
        return self.shape[normalize_dim(dim, self.ndim)]

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
        # but the default (float32), no device but the default one; an empty tensor gives its
        # size instead of nested []s.
        empty = self.numel() == 0
        default = dtypes.DEFAULT_FOR_KIND[2]                 # set_default_dtype's
        implied = (default,) if empty else (default, dtypes.int64, dtypes.bool_)
        extras = "" if self.dtype in implied else f", dtype={self.dtype}"
        if self.device != backends.default_device():
            extras += f", device={self.device!r}"
        if self.grad_fn is not None:
            extras += f", grad_fn=<{self.grad_fn.name}>"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        if empty:
            size = "" if self.ndim == 1 else f", size={self.shape}"
            return f"tensor([]{size}{extras})"
        return f"tensor({printing.values_str(self)}{extras})"       # set_printoptions' layout

    # ---- autograd -------------------------------------------------------------------------
    def requires_grad_(self, flag=True):
        if flag and not self.dtype.is_floating_point:
            raise RuntimeError(f"only floating point tensors can require gradients, "
                               f"this one has dtype {self.dtype}")
        if not flag and self.grad_fn is not None:
            raise RuntimeError("requires_grad_(False) on a non-leaf tensor; use detach()")
        self.requires_grad = flag
        return self

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
    if strides is None:     # row-major: the shapes seen before are in make_strides' table
        strides = ROW_MAJOR.get(shape) or make_strides(shape)
    t.strides = strides if type(strides) is tuple else tuple(strides)
    t._view, t._grad, t.grad_fn, t.requires_grad = None, None, None, False
    return t


def _new_output(buffer, device, max_dims, shape, dtype):
    """A kernel's output: a new Storage of ``buffer`` and a contiguous tensor of ``shape``
    viewing all of it; _new_tensor(Storage(buffer, device, max_dims), shape, None, 0,
    dtype) in one Python call instead of three, as every operation makes one."""
    if type(shape) is not tuple:
        shape = tuple(shape)
    if max_dims is not None and len(shape) > max_dims:
        _check_dims(shape, device, max_dims)
    storage = object.__new__(Storage)
    storage.buffer, storage.device, storage.version, storage.max_dims = buffer, device, 0, max_dims
    t = object.__new__(Tensor)
    t.storage, t.shape, t.offset, t.dtype = storage, shape, 0, dtype
    t.strides = ROW_MAJOR.get(shape) or make_strides(shape)
    t._view, t._grad, t.grad_fn, t.requires_grad = None, None, None, False
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
