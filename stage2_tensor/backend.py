"""The backend boundary: the kernels a device must provide (chapter on native kernels).

A tensor is a view (shape, strides, offset) of a buffer that belongs to a backend. Every
computation the Tensor class does goes through a kernel of its device's backend, so a new
device (native kernels in C or CUDA, registered by a plugin: ``load_plugins``) only has to
implement them for its own buffer type; autograd, broadcasting and views stay in stage2,
written once.

The kernels are declared in kernels/, one function each: its parameters and their kinds,
what it computes, what it may assume about its arguments (the declaration checks it), and
the shapes and dtypes of the buffers it returns. ``python -m stage2_tensor.kernels`` prints
them all. The element-wise ops that ``unary``, ``binary`` and ``reduce``
take by name are declared in ops.py (their kind, dtypes, formula on Python numbers and
gradient); the tuples UNARY_OPS, BINARY_OPS, COMPARISON_OPS and REDUCE_OPS below are views
of it.

A View is (buffer, shape, strides, offset, dtype): which elements of a buffer to read, and
as what. ``size(buffer, dtype)`` says how many elements of dtype a buffer holds. Outputs are
new contiguous buffers; ``write``, ``sgd_update`` and ``adam_update`` work in place.

Primitives and composites. The primitives are kept few, as tinygrad keeps its own: an op is
a primitive only if it needs a per-element formula of its own (exp, erf, softplus...).
Everything that can be written with other ops is a composite in stage2 (GELU and the
losses in composites.py, SiLU and attention in nn.functional): every device runs it with no
kernel of its own. A device may still run a composite as one kernel, for speed: an
element-wise one by declaring that it has the fused kernels of ops.FUSED (``fused``, the
names of those its ``unary`` computes), a loss or attention through the kernels declared
optional (cross_entropy's and mse_loss's are the python device's too). A new activation or
loss is a composite first; a fused kernel follows only where it is measured to pay.

A backend may leave any kernel out but from_flat, to_flat and write: the Tensor then runs it
on the "python" backend, moving data there and back, and logs once per op and backend "op X
not found in backend Y, falling back to python". An optional kernel left out runs stage2's
composite instead.

What a kernel may assume, and where each promise is checked (a C kernel that is handed
less than it assumes reads or writes outside its buffers; nothing downstream checks again):

1. Every view lies inside its buffer: sizes, strides and offset >= 0, its last element
   offset + sum((size - 1) * stride) below size(buffer, dtype), at most ``max_dims``
   dimensions. Checked where a layout comes from outside, ``Tensor(storage, shape,
   strides, offset)`` and ``Tensor.from_buffer`` (strides.check_view); the views and
   outputs operations make (tensor.py's view_of, _new_tensor) derive from valid ones and
   are not checked again. A backend method called directly is trusted with its Views.
2. Views that go together have the shapes their kernel's declaration says (b as a in
   binary, src as dst in write, matmul's inner and batch dimensions, a target per row of
   cross_entropy's logits, an optimizer's state as its parameters...), and dimensions are
   normalized, 0 to ndim - 1. Stage2's operations pass them so by construction; the
   declaration checks them again where a backend hands views to native code (a native
   backend's methods; a lazy backend when it records a call; python's write, index_add and
   the updates).
3. Index values (index_select, index_add) and targets (cross_entropy: a class, or
   ignore_index) are in range: data, so the kernel checks them as it reads them and the
   backend raises ``bad_index`` or ``bad_target``. Likewise multinomial's weights, a
   distribution per row: its kernel reports the first row that is none, and stage2 raises
   ``bad_distribution``.
4. A parameter's ``.grad`` has its shape, dtype and device (the grad setter in tensor.py,
   as PyTorch's); an optimizer's state tensors have their parameter's shape, dtype and
   device (Optimizer.load_state_dict checks a loaded one; the optimizers make the others).

Half precision (chapter 1, "Half precision"): float16 and bfloat16 are storage dtypes
(dtypes.py), whose compute dtype is float32; so are the small ints (uint8, int8, int16),
computed in int64. A device holds and moves them itself: the kernels declared ``halves``
(the storage kernels: from_flat, full, to_flat, contiguous casting to and from any dtype,
index_select, write, to_bytes, from_bytes, as_numpy, from_numpy) take their views and
dtypes. Every other kernel never sees one: ``launch`` (and Tensor.launch, which inlines it)
runs it through ``in_compute``, which converts each such view to a copy in its compute
dtype (the device's ``contiguous``), asks for the compute dtype where the call names a
storage one, runs that kernel, and rounds (or wraps) each result back on store (an in-place
kernel's copies are written back into the views). That is PyTorch's CPU rule for one op on
halves: compute in float32, round on store; for the small ints, int64's results wrapped are
their own arithmetic's. One place, for every device and kernel.
"""
import importlib.metadata
import logging
import math
import threading
from typing import Any, NamedTuple

from . import kernels, ops

log = logging.getLogger("tracegrad")

# Views of the declaration (ops.py): comparisons are binary ops with a bool result
UNARY_OPS = ops.names("unary")
BINARY_OPS = ops.names("binary", "comparison")
COMPARISON_OPS = ops.names("comparison")
REDUCE_OPS = ops.names("reduce")


class View(NamedTuple):
    buffer: Any
    shape: tuple
    strides: tuple
    offset: int
    dtype: Any


class Backend:
    name = "abstract"
    max_dims = None                     # the most dimensions a view may have (None: any)
    fused = frozenset()                 # the fused kernels of ops.FUSED that unary computes
    deferred = False                    # whether kernels run later, when a value is read (lazy)

    def has(self, kernel):
        return callable(getattr(self, kernel, None))

    def size(self, buffer, dtype):
        """How many elements of dtype ``buffer`` holds: the bound Tensor(...) checks a view
        against. Here a sequence's length (python's array.array); a native backend counts
        the bytes of its own buffers and raises TypeError for anything else."""
        try:
            return len(buffer)
        except TypeError:
            raise TypeError(f"device {self.name!r} cannot use a {type(buffer).__name__} "
                            "as a buffer") from None

    def address(self, buffer):
        """Where ``buffer`` starts in memory, an int (Tensor.data_ptr): array.array's own
        address here; a native backend gives its pointer's value, and a backend with no
        memory to point at (a lazy graph) an int unique to the buffer while it lives."""
        info = getattr(buffer, "buffer_info", None)
        return info()[0] if info is not None else id(buffer)

    # Helpers for native backends (the devices plugins register), written once here:
    def _on_python(self, kernel_name, args, dtype):
        """The python backend's kernel for a dtype the device's kernel does not cover (logged
        once)."""
        log_fallback(f"{kernel_name} for {dtype.name}", self.name)
        return on_python(self, kernel_name, args, dtype)

    def _as(self, view, dtype):
        """The view itself, or a contiguous copy converted to dtype (the backend's
        ``contiguous``)."""
        if view.dtype is dtype:
            return view
        from .strides import make_strides
        return View(self.contiguous(view, dtype), view.shape, make_strides(view.shape), 0, dtype)


_BACKENDS = {}
_LOADERS = {}
_UNAVAILABLE = {}                       # device -> its quick "why it cannot run here" check
_fallbacks_logged = set()
PLUGIN_GROUP = "tracegrad.devices"      # entry points whose register() adds devices
_plugin_errors = None                   # None until the plugins are loaded, then {plugin: error}
_plugin_lock = threading.RLock()


def register(name, backend):
    """Make `backend` the implementation of device `name` (a plugin registers its devices)."""
    _BACKENDS[name] = backend


def register_loader(name, loader, unavailable=None):
    """Make ``loader()`` create device `name`'s backend when the device is first used (for a
    device whose library is costly to build or open). A loader raises RuntimeError saying
    why when its device cannot run on this machine. ``unavailable()``, when given, tells
    that reason (or None) quickly, without loading anything: the list of devices in an
    unknown device's error shows it."""
    _LOADERS[name] = loader
    if unavailable is not None:
        _UNAVAILABLE[name] = unavailable


def get(name):
    """The backend of device `name`. A name not registered yet first loads the plugins, once
    (``load_plugins``); an unknown name is a ValueError listing every device, why one cannot
    run here, and each plugin that failed to load."""
    be = _BACKENDS.get(name)             # the usual case (every operation asks): one look-up
    if be is not None:
        return be
    if name not in _BACKENDS and name not in _LOADERS:
        load_plugins()
    if name not in _BACKENDS and name in _LOADERS:
        register(name, _LOADERS[name]())
    try:
        return _BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown device {name!r}; devices: {_devices()}") from None


def available(name):
    """Whether device `name` can run on this machine: registered, or its loader's quick
    check finds no reason it cannot and the loader succeeds (``torch.cuda.is_available``)."""
    if name not in _BACKENDS and name not in _LOADERS:
        load_plugins()
    if name in _BACKENDS:
        return True
    if name not in _LOADERS or (name in _UNAVAILABLE and _UNAVAILABLE[name]()):
        return False
    try:
        get(name)
    except (RuntimeError, ValueError, OSError):
        return False
    return True


_default_device = None                  # set_default_device's choice; None: the installed one


def default_device():
    """The device of a tensor made without one (PyTorch's ``get_default_device``): the one
    ``set_default_device`` chose, else "cpu" where a plugin provides it (PyTorch's default
    is its CPU), else "python", stage2's own. Settled on first use, so that stage2 alone
    never loads a native library it does not have."""
    global _default_device
    if _default_device is None:
        _default_device = "cpu" if available("cpu") else "python"
    return _default_device


def set_default_device(name):
    """Make device ``name`` the default (None: back to the installed one). An unknown
    device, or one that cannot run here, is refused now rather than at the next tensor."""
    global _default_device
    if name is not None:
        get(name)
    _default_device = name


def load_plugins():
    """Call the ``register`` of every installed plugin, once per process: the entry points
    of group PLUGIN_GROUP (``[project.entry-points."tracegrad.devices"]`` in a package's
    pyproject.toml names a function that calls ``register``/``register_loader``). Stage2
    thus finds the native devices without knowing the packages that provide them. A plugin
    that fails (its module does not import, its library does not build) is remembered with
    its error, which the unknown-device message shows, and the other plugins still load."""
    global _plugin_errors
    with _plugin_lock:                  # reentrant: a plugin's register() may call get()
        if _plugin_errors is None:
            _plugin_errors = {}         # set first, so that such a call loads nothing again
            for entry in importlib.metadata.entry_points(group=PLUGIN_GROUP):
                try:
                    entry.load()()
                except Exception as err:    # reported in get()'s error, never raised here
                    _plugin_errors[entry.value] = err
    return _plugin_errors


def _devices():
    """Every device, for an error message: each that cannot run here with the reason, and
    the plugins that failed to load with their errors."""
    def describe(name):
        reason = None if name in _BACKENDS or name not in _UNAVAILABLE else _UNAVAILABLE[name]()
        return repr(name) + (f" (cannot run here: {reason})" if reason else "")

    described = [describe(name) for name in sorted(set(_BACKENDS) | set(_LOADERS))]
    described += [f"more from {plugin}, which failed to load: {type(err).__name__}: {err}"
                  for plugin, err in (_plugin_errors or {}).items()]
    return ", ".join(described)


def bad_target(position, target, classes):
    """The error for a cross_entropy target that is not a class index (every backend's)."""
    return IndexError(f"cross_entropy: target {target} at position {position} is not a class "
                      f"index: the logits have {classes} classes (0 to {classes - 1})")


def ignoring(ignore_index):
    """cross_entropy's ignore_index as a native kernel takes it, (flag, int64 value): an
    index no int64 target can equal (None, or beyond int64) ignores nothing."""
    if ignore_index is None or not -2 ** 63 <= ignore_index < 2 ** 63:
        return 0, 0
    return 1, ignore_index


class BadIndex(IndexError):
    """An index out of range: which value, along which dimension, of what size (what an
    operation that knows the dimension by another number re-raises)."""

    def __init__(self, index, dim, size):
        super().__init__(f"index {index} is out of bounds for dimension {dim} with size {size}")
        self.index, self.dim, self.size = index, dim, size


def bad_index(index, dim, size):
    """The error for an index out of range in index_select, index_add, index and index_put
    (every backend's, and the same as basic indexing's)."""
    return BadIndex(index, dim, size)


def bad_position(kernel, at, position, size):
    """The error for a position outside a plane of ``size`` elements (max_pool_backward's
    ``where``, entry ``at``; -1 stands for none)."""
    return IndexError(f"{kernel}: position {position} at entry {at} is outside a plane of {size} "
                      f"elements (expected -1 to {size - 1})")


def bad_distribution(row, weights, samples, replacement):
    """The error for row ``row`` of multinomial's weights (``weights``, that row's numbers)
    when it is no distribution to draw ``samples`` categories from (the kernel's
    declaration, kernels/random.py, says when), else None."""
    for w in weights:
        if not math.isfinite(w) or w < 0:
            return RuntimeError(f"multinomial(): probability tensor contains either inf, nan or "
                                f"element < 0 (row {row}: {w})")
    nonzero = sum(1 for w in weights if w > 0)
    if not nonzero:
        return RuntimeError(f"multinomial(): invalid multinomial distribution (sum of probabilities "
                            f"<= 0) in row {row}")
    if not replacement and nonzero < samples:
        return RuntimeError(f"multinomial(): row {row} has {nonzero} categories of non-zero probability, "
                            f"fewer than num_samples ({samples}) to draw without replacement")
    return None


def log_fallback(op, backend_name):
    """One log line per op and backend: "op X not found in backend Y, falling back to python"."""
    if (op, backend_name) not in _fallbacks_logged:
        _fallbacks_logged.add((op, backend_name))
        log.warning("op %s not found in backend %s, falling back to python", op, backend_name)


# The kernels that take storage views and dtypes themselves (the rest: ``in_compute``)
STORAGE_KERNELS = frozenset(kernels.names(halves=True))


def _is_stored(a):
    """Whether an argument is a view of a storage dtype or a list with one (an optimizer's
    group)."""
    if isinstance(a, View):
        return a.dtype.compute is not a.dtype
    return isinstance(a, list) and any(_is_stored(x) for x in a)


def in_compute(be, name, args, out_dtype):
    """Kernel ``name`` of backend ``be`` on storage-dtype arguments, computed in their
    compute dtype and rounded on store (the module docstring, "Half precision"): such a View
    becomes a copy in its compute dtype, such a dtype its compute dtype; each buffer the
    kernel returns is rounded back to ``out_dtype`` (when that is a storage dtype), an
    in-place kernel's copies written back into their views."""
    from . import dtypes
    from .strides import make_strides
    if out_dtype is None:               # a call that does not say: the storage dtype it names
        out_dtype = next((a for a in args if isinstance(a, dtypes.DType) and a.is_stored), None)

    def up(a):
        if isinstance(a, list):
            return [up(x) for x in a]
        if isinstance(a, View) and a.dtype.compute is not a.dtype:
            wide = a.dtype.compute
            return View(be.contiguous(a, wide), a.shape, make_strides(a.shape), 0, wide)
        if isinstance(a, dtypes.DType) and a.compute is not a:
            return a.compute
        return a

    def write_back(a, m):
        if isinstance(a, list):
            for x, y in zip(a, m):
                write_back(x, y)
        elif isinstance(a, View) and a.dtype.compute is not a.dtype:
            be.write(a, View(be.contiguous(m, a.dtype), m.shape, m.strides, 0, a.dtype))

    def down(buffer):
        if buffer is None or out_dtype is None or out_dtype.compute is out_dtype:
            return buffer
        n = be.size(buffer, out_dtype.compute)
        return be.contiguous(View(buffer, (n,), (1,), 0, out_dtype.compute), out_dtype)

    moved = [up(a) for a in args]
    fn = getattr(be, name, None)
    if fn is not None:
        result = fn(*moved)
    else:
        log_fallback(name, be.name)
        result = on_python(be, name, moved, out_dtype.compute if out_dtype is not None else None)
    if result is None:                  # in place: the copies go back, rounded
        for a, m in zip(args, moved):
            write_back(a, m)
        return None
    if isinstance(result, tuple):
        return tuple(down(r) for r in result)
    return down(result)


def attention_heads(shape):
    """How many heads the attention kernels interleave in their outputs' rows, for queries
    of ``shape``: H of (B, H, T, d) (the buffers hold (B, T, H, ...)), else 1 (row-major)."""
    return shape[-3] if len(shape) == 4 else 1


def launch(device, name, *args, out_dtype=None):
    """Run kernel `name` of `device`'s backend on `args` (Views and plain values); a backend
    without it runs the python backend's instead (see ``on_python``); a compute kernel on
    storage-dtype views runs in their compute dtype (``in_compute``)."""
    be = get(device)
    if name not in STORAGE_KERNELS and any(_is_stored(a) for a in args):
        return in_compute(be, name, args, out_dtype)
    fn = getattr(be, name, None)
    if fn is not None:
        return fn(*args)
    log_fallback(name, be.name)
    return on_python(be, name, args, out_dtype)


def on_python(be, name, args, out_dtype):
    """The python backend's kernel `name` on copies of the views; the result comes back as
    a buffer of backend `be` (``out_dtype`` says its dtype), or a tuple of them; a kernel
    that works in place (returns None) has its copies written back into the views."""
    from .strides import make_strides
    py = get("python")

    def move(a):                        # a View, a list of them (optimizer groups), or other
        if isinstance(a, list):
            return [move(x) for x in a]
        if isinstance(a, View):
            return View(py.from_flat(be.to_flat(a), a.dtype), a.shape, make_strides(a.shape), 0, a.dtype)
        return a

    def write_back(a, m):
        if isinstance(a, list):
            for x, y in zip(a, m):
                write_back(x, y)
        elif isinstance(a, View):
            be.write(a, m._replace(buffer=be.from_flat(list(m.buffer), a.dtype)))

    moved = [move(a) for a in args]
    result = getattr(py, name)(*moved)
    if result is None:                  # an in-place kernel: copy every view back
        for a, m in zip(args, moved):
            write_back(a, m)
        return None
    if isinstance(result, tuple):       # several buffers (cross_entropy), some maybe None
        return tuple(None if r is None else be.from_flat(list(r), out_dtype) for r in result)
    return be.from_flat(list(result), out_dtype)
