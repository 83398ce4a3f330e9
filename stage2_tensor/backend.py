"""The backend boundary: the few kernels a device must provide (chapter on native kernels).

A tensor is a view (shape, strides, offset) of a buffer that belongs to a backend. Every
computation the Tensor class does goes through one of the methods below, so a new device
(native kernels in C or CUDA, registered by a plugin: ``load_plugins``) only has to implement
them for its own buffer type; autograd, broadcasting and views stay in stage2, written once.

    Backend method                     what it does (outputs are new contiguous buffers)
    from_flat(values, dtype)           a buffer holding a flat list of Python numbers
    full(n, value, dtype)              a buffer of n copies of value
    to_flat(view)                      the view's elements, row-major, as Python numbers
    contiguous(view, dtype)            copy (and cast to dtype) the view, row-major
    unary(op, view, dtype)             op in UNARY_OPS, element by element
    binary(op, a, b, dtype)            op in BINARY_OPS (COMPARISON_OPS among them: dtype is
                                       bool); a and b are views already broadcast
                                       to one shape (stride 0 where stretched). pow_grad is
                                       d(a^b)/da = b * a^(b-1), 0 where b == 0 (Pow's
                                       backward); relu_backward(g, x) is g where x > 0,
                                       else 0 (ReLU's upstream x local, in one pass)
    where(cond, a, b, dtype)           cond ? a : b, all three broadcast to one shape
    reduce(op, view, dims, dtype)      op in REDUCE_OPS over `dims`; the result's shape is
                                       the view's with those dims removed
    cumsum(view, dim, dtype)           running sums along `dim`, the view's shape: element
                                       j the sum of elements 0..j of its row, added in
                                       order (floats in double, ints in int64) and each
                                       rounded to dtype, so a nan or inf reaches the sums
                                       from its position on and no earlier one
    matmul(a, b, dtype)                batched a (..., m, k) @ b (..., k, n), batch dims
                                       already broadcast; a transpose is just strides
    index_select(view, dim, index)     the rows of `dim` listed in `index`, a 1-D int64 view
                                       on the same device (-size..size-1, negative ones
                                       counting from the end; one out of range raises
                                       bad_index(...))
    index_add(shape, dim, index, src)  zeros of `shape` with row r of src added at row
                                       index[r] (repeats add up): index_select's gradient,
                                       `index` as for index_select
    write(dst, src)                    copy src's elements into the dst view, in place

The ops of unary, binary and reduce are declared once, in ops.py (their kind, dtypes,
formula on Python numbers and gradient); the tuples UNARY_OPS, BINARY_OPS, COMPARISON_OPS
and REDUCE_OPS below are views of it.

Primitives and composites. The primitives are kept few, as tinygrad keeps its own: an op is
a primitive only if it needs a per-element formula of its own (exp, erf, softplus...).
Everything that can be written with other ops is a composite in stage2 (GELU and the
losses in composites.py, SiLU and attention in nn.functional): every device runs it with no
kernel of its own. A device may still run a composite as one kernel, for speed: an
element-wise one by declaring that it has the fused kernels of ops.FUSED (``fused``, the
names of those its ``unary`` computes; gelu and gelu_tanh forward, gelu_grad and
gelu_tanh_grad for their backward), a loss through the optional kernels below
(cross_entropy, mse_loss, linear_cross_entropy), attention through ``attention``
(nn.functional's scaled_dot_product_attention runs the composite where a device has none).
A new activation or loss is a composite first; a fused kernel follows only where it is
measured to pay. (softmax, dropout and layer_norm are kernels of
their own, which a device lacking them borrows from the python device, as below.)

A View is (buffer, shape, strides, offset, dtype): which elements of a buffer to read, and
as what. ``size(buffer, dtype)`` says how many elements of dtype a buffer holds.

Optional, for speed: to_bytes(view) / from_bytes(data, dtype) move a tensor between devices
as one block of bytes; as_numpy(view) / from_numpy(array, dtype) share memory with numpy. Fused
kernels, each doing in one pass what would otherwise be several tensor operations:

    softmax(view, dim, log, dtype)     softmax along `dim` (log-softmax when `log`), the
                                       row max subtracted first so no exponent overflows
    softmax_backward(grad, out, dim, log, dtype)
                                       its gradient from the upstream grad and the forward
                                       output y (both of one shape), per row along `dim`:
                                       softmax dx = y * (g - sum(g * y)), log-softmax
                                       dx = g - e^y * sum(g)
    cross_entropy(logits, targets, reduction, ignore_index, dtype)
                                       logits (N, C), targets a view of N int64 class
                                       indices: (losses, probabilities as N * C values,
                                       kept), loss_i = -log softmax(logits_i)[targets[i]],
                                       0 for a row whose target is ignore_index (an int, or
                                       None: none ignored), the N losses or ("sum", "mean")
                                       their reduction to one value, the mean over the kept
                                       rows (none kept: nan); kept, for "mean" only (else
                                       None), is their count as one value of dtype (what the
                                       backward divides by: PyTorch's total_weight); a
                                       target neither a class nor ignore_index raises
                                       bad_target(...)
    cross_entropy_backward(probs, targets, scale, kept, ignore_index, dtype)
                                       its gradient: (probs - onehot(targets)) * scale[i]
                                       / kept for row i (scale: a view of N values; kept:
                                       the forward's, a view of shape (), or None: no
                                       division), 0 for a row whose target is ignore_index
    linear_cross_entropy(x, weight, bias, targets, reduction, ignore_index, dtype)
                                       cross_entropy's losses and kept (and its bad_target)
                                       for the logits x @ weight^T + bias (x (N, C), weight
                                       (V, C), bias V values or None) without forming them:
                                       (losses, lse, kept), lse each row's logsumexp (N
                                       values, for the backward). A device without it runs
                                       the composite, linear then cross_entropy
                                       (linear_cross_entropy.py), not the python backend's
    linear_cross_entropy_backward(x, weight, bias, targets, lse, scale, kept, ignore_index,
                                  needs, dtype)
                                       its gradients (dx, dweight, dbias), each None unless
                                       `needs` (three bools) asks for it: with the logits z
                                       computed again, dz = (e^(z - lse) - onehot(targets))
                                       * scale[i] / kept (0 for an ignored row), dx = dz @
                                       weight, dweight = dz^T @ x, dbias = sum of dz's rows
    mse_loss(a, b, reduction, dtype)   a and b views of one shape: (losses, diff), diff =
                                       a - b (n values), the losses (a - b)^2 per element
                                       or ("sum", "mean") their reduction to one value
    mse_loss_backward(diff, grad, factor, dtype)
                                       its gradient with respect to a: 2 * diff * grad *
                                       factor, grad a view of diff's shape (stride 0 when
                                       the upstream gradient is one value)
    dropout(view, seed, p, dtype)     inverted dropout: element i (row-major) times
                                       1 / (1 - p) where kept, times 0 where dropped; kept
                                       iff output i of SplitMix64 seeded with `seed` (a
                                       64-bit int), as a uniform (z >> 11) * 2^-53 in [0, 1),
                                       is >= p (python_backend.splitmix64). Also its own
                                       backward: the upstream gradient, same seed and p
    layer_norm(x, weight, bias, eps, dtype)
                                       each row of x (its last dimension, n values) to
                                       (x - mean) * rstd * weight + bias, rstd = 1 /
                                       sqrt(var + eps), var biased; weight, bias: views of
                                       n values or None. Returns (out, mean, rstd): mean and
                                       rstd one per row, for the backward pass
    layer_norm_backward(grad, x, mean, rstd, weight, dtype)
                                       its gradient (dx, dweight, dbias): per row, with
                                       xhat = (x - mean) * rstd and gw = grad * weight,
                                       dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat));
                                       dweight, dbias = sums over rows of grad * xhat and
                                       of grad (both None when weight is None)
    batch_norm(x, weight, bias, eps, dtype)
                                       batch normalization in training mode: x (N, C, ...)
                                       normalized per channel with its mean and biased var
                                       over every dimension but 1, then times weight[c] plus
                                       bias[c] (views of C values or None). Returns (out,
                                       mean, var), mean and var C values (normalization.py)
    batch_norm_backward(grad, x, mean, var, weight, eps, dtype)
                                       its gradient (dx, dweight, dbias): per channel, with
                                       rstd = 1 / sqrt(var + eps), xhat = (x - mean) * rstd,
                                       dbias = sum grad, dweight = sum grad * xhat, dx =
                                       weight * rstd * (grad - mean(grad) - xhat *
                                       mean(grad * xhat)), means over the channel's elements
    attention(q, k, v, causal, scale, dtype)
                                       scaled dot-product attention (attention.py), q
                                       (..., T, d), k (..., S, d), v (..., S, e) of one
                                       batch shape, S >= 1: (out, lse), out (..., T, e)
                                       row i = sum_j p_ij v_j, p_ij = e^(x_ij - lse_i),
                                       x_ij = scale q_i . k_j, lse (..., T) = log sum_j
                                       e^(x_ij), over the keys query i sees: all (causal
                                       None), or 0 .. i + causal (an int offset >= 0; 0 is
                                       PyTorch's is_causal). No (T, S) matrix is kept. For
                                       4-D (B, H, T, d) queries out's buffer holds (B, T,
                                       H, e), heads interleaved (attention_heads), as
                                       PyTorch's CPU kernel: their concatenation is a view
    attention_backward(grad, q, k, v, out, lse, causal, scale, dtype)
                                       its gradient (dq, dk, dv), each laid out as out, from
                                       the forward's out and lse, p_ij recomputed: ds_ij =
                                       p_ij (grad_i . v_j - grad_i . out_i), dq_i = scale
                                       sum_j ds_ij k_j, dk_j = scale sum_i ds_ij q_i, dv_j =
                                       sum_i p_ij grad_i
    sgd_update(params, grads, velocities, lr, momentum, dampening, weight_decay,
               first_steps, nesterov)  one SGD step for a whole parameter group: lists of
                                       views, one per parameter, updated in place (and each
                                       velocity, its momentum buffer; None without momentum)
    adam_update(params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps)
                                       one Adam step (AdamW when `decoupled`) per parameter,
                                       in place on it and its m and v; steps count from 1

The two update kernels return None: they write into the buffers of the views they get.

Window kernels, for convolution and pooling (window_kernels.py; without them convolution.py
gathers through index tables). A view x (N, C, *spatial) is N * C planes; kernel, stride,
before (the padding before each dimension), dilation and out (the output's extents) are
tuples of n ints, one per spatial dimension; output position o reads the input at
o * stride - before + k * dilation for kernel position k (each row-major; K = numel(kernel)
positions, L = numel(out) outputs), in the padding where that is outside the input:

    im2col(view, kernel, stride, before, dilation, out, fill, dtype)
                                       each plane's windows as columns (N, C, K, L): what
                                       window l reads at position k, `fill` (0, or -inf for
                                       a maximum) in the padding
    col2im(cols, spatial, kernel, stride, before, dilation, out, dtype)
                                       im2col's adjoint: zeros (N, C, *spatial) with each
                                       element of cols (N, C, K, L) added at the position it
                                       was read from (those in the padding dropped)
    conv_direct(x, weight, bias, stride, before, dilation, groups, out, dtype)
                                       the convolution by its definition (N, C_out, *out):
                                       weight (C_out, C / groups, *kernel), bias C_out
                                       values or None; no gradient (a test oracle)
    conv_bands(x, weight, bias, stride, before, dilation, groups, out, relu, band_rows,
               dst, dtype)             conv_direct's result (float32, float64; no gradient),
                                       ReLU'd when `relu`, computed as im2col and a matrix
                                       product band_rows output rows (all dims but the
                                       last) at a time inside one kernel: the columns never
                                       exist whole. Into `dst` (a view of the result's
                                       shape, each plane row-major, planes apart, sharing
                                       no byte with the inputs; returns None) or a new
                                       buffer (returned)
    max_pool(view, kernel, stride, before, dilation, out, dtype)
                                       (maxima (N, C, *out), their flat positions in the
                                       plane as int64): the first of equal values, a NaN
                                       over any number, never the padding
    max_pool_into(view, kernel, stride, before, dilation, out, dst, dtype)
                                       max_pool's maxima alone (inference: no positions)
                                       written into `dst` (float32, float64; a view of the
                                       result's shape, as conv_bands' dst); returns None
    max_pool_backward(grad, where, spatial, dtype)
                                       zeros (N, C, *spatial) with grad (N, C, *out) added
                                       at the positions `where` (-1: none; one outside the
                                       plane raises bad_position(...))

contracts.windows checks a geometry before it reaches a kernel: n from 1 to 16, extents,
strides and dilations positive, padding non-negative, every position and size below 2^62.

Resampling kernels, for padding and interpolation (resampling.py; without them it gathers
through an index table per dimension). Each output position's source is worked out by
the formulas of sampling_grid.py:

    pad(view, before, after, mode, value, dtype)
                                       the view's last n = len(before) dimensions grown by
                                       before[d] and after[d] (non-negative ints): output
                                       position o reads pad_source(o - before, size, mode)
                                       in each, `value` where that is the fill (mode
                                       "constant"; also "reflect", "replicate", "circular")
    pad_backward(grad, spatial, before, after, mode, dtype)
                                       pad's adjoint: zeros (..., *spatial) with each
                                       element of grad added where it was read from
    interpolate(view, out, steps, mode, align_corners, dtype)
                                       each (H, W) plane of view (N, C, H, W) resampled to
                                       out = (H_out, W_out): mode "nearest" reads one
                                       position, "linear" mixes the four around it, by
                                       interpolation_source(j, size, step, ...) with
                                       steps (two floats, interpolation_step's) per dimension
    interpolate_into(view, out, steps, mode, align_corners, dst, dtype)
                                       interpolate written into `dst` (float32, float64; a
                                       view of the result's shape, each plane row-major,
                                       planes apart, sharing no byte with view: a slice of
                                       a Concat's buffer); returns None
    interpolate_backward(grad, spatial, steps, mode, align_corners, dtype)
                                       its adjoint: zeros (N, C, *spatial) with each
                                       output's gradient added at the positions it mixed,
                                       times their weights

contracts.pad and contracts.interpolate check them: sizes and paddings ints below 2^62,
reflect padding smaller than its dimension, circular at most as large, steps finite.

What a kernel may assume, and where each promise is checked (a C kernel that is handed
less than it assumes reads or writes outside its buffers; nothing downstream checks again):

1. Every view lies inside its buffer: sizes, strides and offset >= 0, its last element
   offset + sum((size - 1) * stride) below size(buffer, dtype), at most ``max_dims``
   dimensions. Checked where a layout comes from outside, ``Tensor(storage, shape,
   strides, offset)`` and ``Tensor.from_buffer`` (strides.check_view); the views and
   outputs operations make (tensor.py's view_of, _new_tensor) derive from valid ones and
   are not checked again. A backend method called directly is trusted with its Views.
2. Views that go together have the shapes the tables above say: b as a in binary, src as
   dst in write, src as index_add's shape with index's length at ``dim``, matmul's inner
   and batch dimensions, a target and a scale per row of cross_entropy's logits, layer_norm's
   weight, bias (n values) and mean, rstd (one per row), an optimizer's gradients and state
   as their parameters, one per parameter. Dimensions (dim, dims) are normalized, 0 to
   ndim - 1. Stage2's operations pass them so by construction; contracts.py checks them
   again where a backend hands views to native code (a native backend's methods and
   optimizer updates; a lazy backend when it records a call; python's write, index_add
   and the updates).
3. Index values (index_select, index_add) and targets (cross_entropy: a class, or
   ignore_index) are in range: data, so the kernel checks them as it reads them and the
   backend raises ``bad_index`` or ``bad_target``.
4. A parameter's ``.grad`` has its shape, dtype and device (the grad setter in tensor.py,
   as PyTorch's); an optimizer's state tensors have their parameter's shape, dtype and
   device (Optimizer.load_state_dict checks a loaded one; the optimizers make the others).

Half precision (chapter 1, "Half precision"): float16 and bfloat16 are storage dtypes
(dtypes.py), whose compute dtype is float32. A device holds and moves them itself: the
STORAGE_KERNELS below (from_flat, full, to_flat, contiguous casting to and from any dtype,
index_select, write, to_bytes, from_bytes, as_numpy, from_numpy) take half views and
dtypes. Every other kernel never sees one: ``launch`` (and Tensor.launch, which inlines
it) runs it through ``in_float32``, which converts each half view to a float32 copy
(the device's ``contiguous``), asks for float32 where the call names a half dtype, runs
the float32 kernel, and rounds each result back to the half dtype on store (an in-place
kernel's float32 copies are written back into the half views). That is PyTorch's CPU rule
for one op: compute in float32, round on store. One place, for every device and kernel.

A backend may leave any kernel out: the Tensor then runs it on the "python" backend,
moving data there and back, and logs once per op and backend
"op X not found in backend Y, falling back to python".
"""
import importlib.metadata
import logging
import threading
from typing import Any, NamedTuple

from . import ops

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


def bad_index(index, dim, size):
    """The error for an index out of range in index_select/index_add (every backend's, and
    the same as basic indexing's)."""
    return IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")


def bad_position(kernel, at, position, size):
    """The error for a position outside a plane of ``size`` elements (max_pool_backward's
    ``where``, entry ``at``; -1 stands for none)."""
    return IndexError(f"{kernel}: position {position} at entry {at} is outside a plane of {size} "
                      f"elements (expected -1 to {size - 1})")


def log_fallback(op, backend_name):
    """One log line per op and backend: "op X not found in backend Y, falling back to python"."""
    if (op, backend_name) not in _fallbacks_logged:
        _fallbacks_logged.add((op, backend_name))
        log.warning("op %s not found in backend %s, falling back to python", op, backend_name)


# The kernels that take half views and dtypes themselves (the rest: ``in_float32``)
STORAGE_KERNELS = frozenset(("from_flat", "full", "to_flat", "contiguous", "index_select", "write",
                             "to_bytes", "from_bytes", "as_numpy", "from_numpy"))


def _is_half(a):
    """Whether an argument is a half view or a list with one (an optimizer's group)."""
    if isinstance(a, View):
        return a.dtype.compute is not a.dtype
    return isinstance(a, list) and any(_is_half(x) for x in a)


def in_float32(be, name, args, out_dtype):
    """Kernel ``name`` of backend ``be`` on half arguments, computed in float32 and rounded
    on store (the module docstring, "Half precision"): a half View becomes a float32 copy, a
    half dtype float32; each buffer the kernel returns is rounded back to ``out_dtype``
    (when that is half), an in-place kernel's copies written back into their views."""
    from . import dtypes
    from .strides import make_strides
    f32 = dtypes.float32
    if out_dtype is None:               # a call that does not say: the half dtype it names
        out_dtype = next((a for a in args if isinstance(a, dtypes.DType) and a.is_half), None)

    def up(a):
        if isinstance(a, list):
            return [up(x) for x in a]
        if isinstance(a, View) and a.dtype.compute is not a.dtype:
            return View(be.contiguous(a, f32), a.shape, make_strides(a.shape), 0, f32)
        if isinstance(a, dtypes.DType) and a.compute is not a:
            return f32
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
        n = be.size(buffer, f32)
        return be.contiguous(View(buffer, (n,), (1,), 0, f32), out_dtype)

    moved = [up(a) for a in args]
    fn = getattr(be, name, None)
    if fn is not None:
        result = fn(*moved)
    else:
        log_fallback(name, be.name)
        result = on_python(be, name, moved, f32 if out_dtype is not None and out_dtype.is_half else out_dtype)
    if result is None:                  # in place: the float32 copies go back, rounded
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
    half views runs in float32 (``in_float32``)."""
    be = get(device)
    if name not in STORAGE_KERNELS and any(_is_half(a) for a in args):
        return in_float32(be, name, args, out_dtype)
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
