"""What the native devices share (chapter on native kernels): "cpu" (cpu/backend.py, the C
kernels in csrc/) and "cuda", "cuda-emu" (cuda/backend.py, the kernels in cuda/) run the same
views through the same op codes; only the library underneath differs.

NativeBackend holds the tables both libraries number things by, the rule that the kernels
declared float_only (stage2_tensor/kernels/) leave other dtypes to the python device, the
split of a reduction's dimensions, and every kernel both libraries take with the same
arguments. A kernel declared with ``native`` (its C parameters) needs no method at all: one
is written from the declaration (``method_source``): it checks the arguments, sizes the
outputs and fills the C call by name. The others are written out below, where their calls differ
(a target or position the kernel reports, a scale with its own stride). The C function of
kernel NAME is ``tg_NAME_f32`` / ``tg_NAME_f64`` on "cpu" and ``tg_cuda_NAME`` (the dtype's
code first, a status returned) on CUDA, both declared from the same declaration
(ops_header.py); a subclass brings its library through a few hooks:

    allocate(n, dtype)                 a new buffer of n elements (uninitialized)
    _call(name, dtype, *args)          run kernel name for dtype on args (the C signature's,
                                       after CUDA's dtype code), raising on CUDA's error
                                       status; returns what the C function returns on
                                       "cpu" (a kernel's "no memory" flag), None on CUDA
    _call_reporting(name, dtype, *args)
                                       the same for a kernel that finds a bad entry in its
                                       data (a target, a position): that entry's index, or -1
    _int64_at(pointer, i)              element i of an int64 buffer, read on the host
    _cat(ndim, shape, dim, count, buffers, offsets, sizes, strides, shared_strides, itemsize, out)
                                       the cat kernel (csrc/tracegrad.h's tg_cat)
    adds_into_output                   the kernels that add into their output, which must
                                       then start zeroed (CUDA's atomic additions)

plus its buffers (``contiguous``, ``full``, ``write``...) and ``_matmul``, the product of
two float views. The element-wise methods (``unary``, ``binary``) and the reductions stay in
each subclass, written out in full: they run on every small operation, so they take no
extra call through a shared layer.

Where a native device runs the python device's kernel instead of its own, it says so in
one table, ``python_fallbacks`` (kernel -> the dtypes it leaves to python); ``lacks`` names
the optional kernels of the interface it has none of (stage2 runs their composites).
``kernel_table(be)`` reports both, and ``_on_python`` refuses a fallback the table does not
list.
"""
import functools

from stage2_tensor import backend, contracts, dtypes, ops
from stage2_tensor.backend import Backend, View
from stage2_tensor.kernels import KERNELS, check, names
from stage2_tensor.kernels.storage import joined
from stage2_tensor.kernels.indexing import REDUCTIONS as REDUCE_CODES
from stage2_tensor.kernels.random import DISTRIBUTIONS, mt_state
from stage2_tensor.strides import is_contiguous, make_strides, numel

from .updates import GroupUpdates

# The kernels' dtype numbers (csrc/tracegrad.h, cuda/ and their C types)
# float16 and bfloat16 are held as their bits, the small ints as they are; only copies and
# fills take them (stage2's backend.py, "Half precision", runs every other kernel on copies
# in float32 or int64)
CODE = {dtypes.bool_: 0, dtypes.int32: 1, dtypes.int64: 2, dtypes.float32: 3, dtypes.float64: 4,
        dtypes.float16: 5, dtypes.bfloat16: 6, dtypes.uint8: 7, dtypes.int8: 8, dtypes.int16: 9}
CTYPE = {dtypes.bool_: "uint8_t", dtypes.int32: "int32_t", dtypes.int64: "int64_t",
         dtypes.float32: "float", dtypes.float64: "double", dtypes.float16: "uint16_t",
         dtypes.bfloat16: "uint16_t", dtypes.uint8: "uint8_t", dtypes.int8: "int8_t", dtypes.int16: "int16_t"}
FLOATS = (dtypes.float32, dtypes.float64)            # the fused kernels' dtypes
REDUCTIONS = ("none", "sum", "mean")                  # the loss kernels' reduction codes
# Op codes by name, from the declaration (stage2_tensor/ops.py), as the kernels' enums
# (csrc/ops_generated.h, cuda/ops_generated.h); a comparison is an op of that kind, with
# kernels of its own
UNARY_CODE = ops.codes("unary")
BINARY_CODE = ops.codes("binary")
COMPARISON_CODE = ops.codes("comparison")
REDUCE_CODE = ops.codes("reduce")


def float_only(method):
    """A fused kernel's method written out: its arguments checked (its declaration), and a dtype other than float32 or float64 (its last argument) run on the python
    backend instead, as the kernels cover only those two."""
    name = method.__name__
    declared = KERNELS[name]            # a kernel without its declaration fails at import

    @functools.wraps(method)
    def run(self, *args):
        declared.check(*args)
        dtype = args[-1]
        if dtype not in FLOATS:
            return self._on_python(name, args, dtype)
        return method(self, *args)
    return run


_SPLITS = {}


def split_dims(shape, strides, dims):
    """A reduction's two index spaces, (kept shape, kept strides, reduced shape, reduced
    strides), for a view of ``shape`` and ``strides`` reduced over ``dims``. Cached: a
    training loop reduces the same few layouts every step."""
    key = (shape, strides, tuple(dims))
    split = _SPLITS.get(key)
    if split is None:                   # checked once per layout, as the cache only holds valid ones
        contracts.reduced_dims("reduce", dims, len(shape))
        kept = [d for d in range(len(shape)) if d not in dims]
        split = (tuple([shape[d] for d in kept]), tuple([strides[d] for d in kept]),
                 tuple([shape[d] for d in dims]), tuple([strides[d] for d in dims]))
        if len(_SPLITS) < 10_000:
            _SPLITS[key] = split
    return split


def stored_dtype(op, view_dtype, dtype):
    """The dtype a reduction kernel writes: it computes in int64 or double and stores any
    dtype of that kind (an index for argmax/argmin); another kind (a float sum asked as int)
    is converted afterwards."""
    if op.startswith("arg"):
        return dtypes.int64
    if dtype.is_floating_point == view_dtype.is_floating_point:
        return dtype
    return dtypes.float64 if view_dtype.is_floating_point else dtypes.int64


def no_memory(name, failed):
    """The kernels that allocate tables of positions or tiles return 1 on "cpu" when they
    could not (on CUDA the call's status says so, and ``_call`` returns None)."""
    if failed:
        raise MemoryError(f"{name}: no memory for the kernel's tables of positions or tiles")


# The kernels declared float_only: for any other dtype both devices run the python device's
FLOAT_KERNELS = names(float_only=True)
NOT_FLOATS = frozenset(d for d in dtypes.ALL if d not in FLOATS)
# The kernels declared optional: a device without one runs stage2's composite, never the
# python device (which has none of them)
OPTIONAL_KERNELS = names(optional=True)


class NativeBackend(GroupUpdates, Backend):
    """A device on a native library; ``ffi`` is its cffi handle (for NULL)."""
    fused = frozenset(p.name for p in ops.FUSED)       # the C and CUDA kernels have them all
    max_dims = 16                       # TG_MAX_DIMS: the kernels' index arrays hold 16
    python_fallbacks = {name: NOT_FLOATS for name in FLOAT_KERNELS}    # kernel -> dtypes left to python
    lacks = frozenset()                 # the OPTIONAL_KERNELS the device has none of
    adds_into_output = frozenset()      # kernels whose output must start zeroed

    def address(self, buffer):
        """The buffer's pointer as an int (Tensor.data_ptr): host memory on "cpu", device
        memory on "cuda"."""
        return int(self.ffi.cast("uintptr_t", buffer))

    def matmul(self, a, b, dtype, bias=None):
        """a @ b over the batch dimensions (the same on both; stride 0 where broadcast), plus
        bias (None, or a 1-D view of length n) on every row: Linear's fused epilogue. The
        kernels cover float32 and float64 (``_matmul``); other dtypes run on the python
        backend, the bias added after."""
        sa, sb = a.shape, b.shape          # two matrices that fit pass inline (every Linear)
        if not (len(sa) == 2 == len(sb) and sa[1] == sb[0] and (bias is None or bias.shape == sb[1:])):
            check("matmul", a, b, dtype, bias)
        if dtype in FLOATS:
            return self._matmul(a, b, dtype, bias)
        out = self._on_python("matmul", (a, b, dtype), dtype)
        if bias is None:
            return out
        shape = tuple(a.shape[:-1]) + (b.shape[-1],)    # bias broadcast over the rows
        rows = View(bias.buffer, shape, (0,) * (len(shape) - 1) + tuple(bias.strides), bias.offset, bias.dtype)
        return self.binary("add", View(out, shape, make_strides(shape), 0, dtype), rows, dtype)

    def cumsum(self, view, dim, dtype):
        """Running sums along dim (its declaration's call). A bool result is the running count
        of true elements, made as int64 and converted (true from the first true one)."""
        if dtype is dtypes.bool_:
            counts = self.cumsum(view, dim, dtypes.int64)
            return self.contiguous(View(counts, view.shape, make_strides(view.shape), 0, dtypes.int64), dtype)
        return _CUMSUM(self, view, dim, dtype)

    def cat(self, views, dim, dtype):
        """One call for all the views, each read in place through its strides (its
        declaration's check first, which gives each one's extent along dim)."""
        sizes, shape = joined(views, dim, dtype)
        out, n = self.allocate(numel(shape), dtype), len(views)
        offsets, strides = [v.offset for v in views], [v.strides for v in views]
        # what every view shares (views of new tensors: offset 0, row-major strides) passes once
        shared = strides.count(strides[0]) == n
        self._cat(len(shape), shape, dim, n, [v.buffer for v in views],
                  self.ffi.NULL if offsets.count(0) == n else offsets, sizes,
                  strides[0] if shared else [s for st in strides for s in st], int(shared), dtype.itemsize, out)
        return out

    def where(self, cond, a, b, dtype):
        if not cond.shape == a.shape == b.shape:
            check("where", cond, a, b, dtype)
        a, b = self._as(a, dtype), self._as(b, dtype)
        out = self.allocate(numel(a.shape), dtype)
        self._call("where", dtype, len(a.shape), a.shape, cond.buffer, cond.strides, cond.offset,
                   a.buffer, a.strides, a.offset, b.buffer, b.strides, b.offset, out)
        return out

    # ---- fused kernels: contiguous float or double, one call each ---------------------------
    # (float_only checks the arguments and runs other dtypes on the python backend)
    @float_only
    def cross_entropy(self, logits, targets, reduction, ignore_index, dtype):
        n, c = logits.shape
        losses, probs = self.allocate(n if reduction == "none" else 1, dtype), self.allocate(n * c, dtype)
        kept = self.allocate(1, dtype) if reduction == "mean" else None
        target_ids = self._dense(targets, dtypes.int64)
        bad = self._call_reporting("cross_entropy", dtype, n, c, self._dense(logits, dtype), target_ids,
                                   REDUCTIONS.index(reduction), *backend.ignoring(ignore_index), losses, probs,
                                   self.ffi.NULL if kept is None else kept)
        if bad >= 0:
            raise backend.bad_target(bad, self._int64_at(target_ids, bad), c)
        return losses, probs, kept

    @float_only
    def cross_entropy_backward(self, probs, targets, scale, kept, ignore_index, dtype):
        n, c = probs.shape
        out = self.allocate(n * c, dtype)
        scale = self._as(scale, dtype)
        scale_step = scale.strides[0] if n > 1 else 0     # 0: one upstream value for every row
        self._call("cross_entropy_backward", dtype, n, c, self._dense(probs, dtype),
                   self._dense(targets, dtypes.int64), scale.buffer + scale.offset, scale_step,
                   self._dense_or_null(kept, dtype), *backend.ignoring(ignore_index), out)
        return out

    @float_only
    def mse_loss_backward(self, diff, grad, factor, dtype):
        n = numel(diff.shape)
        out = self.allocate(n, dtype)
        one_value = n > 1 and not any(grad.strides) and grad.dtype is dtype   # a reduction's
        values = grad.buffer + grad.offset if one_value else self._dense(grad, dtype)
        self._call("mse_loss_backward", dtype, n, self._dense(diff, dtype), values, 0 if one_value else 1, factor,
                   out)
        return out

    # ---- the random factories' numbers: Python's generator's state in, drawn in C ----------
    def mt19937_floats(self, state, spare, n, distribution, a, b, dtype):
        """The state as the C kernel takes it (625 words, and gauss's spare as two doubles:
        whether one is held, its value), updated in place, and read back."""
        check("mt19937_floats", state, spare, n, distribution, a, b, dtype)
        words = mt_state("mt19937_floats", state)      # an array.array: cffi passes its memory
        held = self.ffi.new("double[]", (0.0, 0.0) if spare is None else (1.0, spare))
        out = self.allocate(n, dtype)
        self._call("mt19937_floats", dtype, self.ffi.from_buffer("uint32_t[]", words), held, n,
                   DISTRIBUTIONS.index(distribution), a, b, out)
        return out, tuple(words), held[1] if held[0] else None

    def mt19937_integers(self, state, n, low, width, dtype):
        check("mt19937_integers", state, n, low, width, dtype)
        words = mt_state("mt19937_integers", state)
        out = self.allocate(n, dtype)
        self._call("mt19937_integers", dtype, self.ffi.from_buffer("uint32_t[]", words), n, low, width, out)
        return out, tuple(words)

    # ---- windows of convolution and pooling: contiguous planes, the geometry checked first ---
    @float_only
    def max_pool_backward(self, grad, where, spatial, dtype):
        planes, P, L = numel(grad.shape[:2]), numel(spatial), numel(grad.shape[2:])
        dx = self._output("max_pool_backward", planes * P, dtype)
        at = self._dense(where, dtypes.int64)
        bad = self._call_reporting("max_pool_backward", dtype, planes, P, L, self._dense(grad, dtype), at, dx)
        if bad >= 0:
            raise backend.bad_position("max_pool_backward", bad, self._int64_at(at, bad), P)
        return dx

    # ---- advanced indexing's write (csrc/index_t.h, cuda/index.cu) ----------------------------
    def index_put(self, dst, indices, values, accumulate):
        check("index_put", dst, indices, values, accumulate)
        k, n = indices.shape[0], numel(indices.shape[1:])
        ids = self._dense(indices, dtypes.int64)
        bad = self._call_reporting("index_put", dst.dtype, len(dst.shape), dst.shape, dst.strides, dst.offset,
                                   dst.buffer, k, ids, n, len(values.shape), values.shape, values.strides,
                                   values.offset, values.buffer, int(accumulate))
        if bad >= 0:
            raise backend.bad_index(self._int64_at(ids, bad), bad // n, dst.shape[bad // n])

    def index_reduce(self, base, dim, index, src, reduce, include_self):
        check("index_reduce", base, dim, index, src, reduce, include_self)
        if base.dtype in self.python_fallbacks.get("index_reduce", ()):
            return self._on_python("index_reduce", (base, dim, index, src, reduce, include_self), base.dtype)
        size, ids = base.shape[dim], self._dense(index, dtypes.int64)
        out = self.contiguous(base, base.dtype)             # the kernel reduces into it
        # the kernel's tables: a count and a first src row per row of dim, sized by the output
        tables = [self.allocate(size, dtypes.int64) if numel(base.shape) else self.ffi.NULL for _ in range(2)]
        bad = self._call_reporting("index_reduce", base.dtype, numel(base.shape[:dim]), size,
                                   numel(base.shape[dim + 1:]), ids, numel(index.shape),
                                   self._dense(src, base.dtype), REDUCE_CODES.index(reduce), int(include_self),
                                   *tables, out)
        if bad >= 0:
            raise backend.bad_index(self._int64_at(ids, bad), dim, size)
        return out

    def _run_update(self, name, dtype, sizes, arrays, settings):
        """The kernel call of sgd_update and adam_update (updates.py's GroupUpdates)."""
        self._call(name, dtype, len(sizes), sizes, *arrays, *settings)

    # ---- helpers -----------------------------------------------------------------------------
    def _output(self, kernel, n, dtype):
        """A new buffer for a kernel's n outputs: zeroed for one that adds into it."""
        return self.full(n, 0, dtype) if kernel in self.adds_into_output else self.allocate(n, dtype)

    def _dense(self, view, dtype):
        """A pointer to the view's elements, row-major and of dtype: its own memory when it
        already is (the buffer itself at offset 0, which a capture can read in place as a
        constant where it did not see it made: an index table made at an earlier step),
        else a contiguous copy."""
        if view.dtype is dtype and is_contiguous(view.shape, view.strides):
            return view.buffer + view.offset if view.offset else view.buffer
        return self.contiguous(view, dtype)

    def _dense_or_null(self, view, dtype):
        return self.ffi.NULL if view is None else self._dense(view, dtype)

    def _on_python(self, kernel_name, args, dtype):
        self._declared_fallback(kernel_name, dtype)
        return super()._on_python(kernel_name, args, dtype)

    def _pair_on_python(self, name, args, out_dtypes):
        """The python backend's kernel for a dtype the device's does not cover, when its
        outputs differ in dtype (max_pool's values and int64 positions): each brought back
        as its own (``_on_python`` would give them all the last argument's)."""
        self._declared_fallback(name, args[-1])
        backend.log_fallback(f"{name} for {args[-1].name}", self.name)
        py = backend.get("python")
        moved = [View(py.from_flat(self.to_flat(a), a.dtype), a.shape, make_strides(a.shape), 0, a.dtype)
                 if isinstance(a, View) else a for a in args]
        return tuple(self.from_flat(list(r), d) for r, d in zip(getattr(py, name)(*moved), out_dtypes))

    def _declared_fallback(self, kernel_name, dtype):
        """Refuse to run a kernel on the python device where ``python_fallbacks`` does not
        say so: a fallback nobody declared is a native kernel missing, not a slow path."""
        if dtype not in self.python_fallbacks.get(kernel_name, ()):
            raise NotImplementedError(f"{kernel_name} for {dtype.name} on device {self.name!r}: the device "
                                      "declares no fallback to the python device for it (python_fallbacks)")


def own_methods(be, private=()):
    """The names of the methods a native backend object has from stage3's classes (what a
    stand-in that wraps them, the profiler's or a capture's, shadows): the public ones and
    those of ``private`` it has."""
    return sorted({name for cls in type(be).__mro__ if cls.__module__.startswith("stage3_native")
                   for name, f in vars(cls).items()
                   if callable(f) and (not name.startswith("_") or name in private)})


def method_source(declared):
    """The Python source of the method a kernel declared with ``native`` gets: check the
    arguments and size the outputs (the declaration), run the python device's kernel for a
    dtype the C one lacks (``float_only``), then one call with each C parameter filled by
    name: an argument (a view as a pointer to its elements row-major, of the call's dtype,
    int64 for ``const i64 *``, float64 for ``const double *``; a tuple of ints as an int64
    array; a number as the C type says), an output (a new buffer, NULL for None) or an
    entry of ``sizes(*args)``. Written out once as source, so a call costs what the method
    written by hand would."""
    params = [name for name, _, _ in declared.params]
    kinds = {name: kind for name, kind, _ in declared.params}
    clash = set(params) & set(declared.returns)
    if clash or params[-1] != "dtype":
        raise ValueError(f"kernel {declared.name}: outputs {sorted(clash)} named as parameters, or a last "
                         "parameter other than dtype")
    call = ", ".join(params)

    def argument(ctype, name):
        if name in declared.returns:
            return f"self.ffi.NULL if {name} is None else {name}" if name in declared.maybe_none else name
        if name not in kinds:
            return f"sizes[{name!r}]"
        if ctype.endswith("*") and kinds[name].rstrip("?") in ("dense", "index", "view"):
            of = {"const i64 *": "dtypes.int64", "const double *": "dtypes.float64"}.get(ctype, "dtype")
            return f"self._dense{'_or_null' if kinds[name].endswith('?') else ''}({name}, {of})"
        if ctype.endswith("*"):
            return f"tuple({name})"
        return f"{'float' if ctype == 'double' else 'int'}({name})"

    lines = [f"def {declared.name}(self, {call}):",
             f"    shapes = declared.infer({call})"]
    if declared.float_only:
        lines += ["    if dtype not in FLOATS:",
                  f"        return self._on_python({declared.name!r}, ({call}), dtype)"]
    for i, name in enumerate(declared.returns):
        new = f"self._output({declared.name!r}, numel(shapes[{i}][0]), shapes[{i}][1])"
        lines += [f"    {name} = None if shapes[{i}] is None else {new}" if name in declared.maybe_none
                  else f"    {name} = {new}"]
    if declared.sizes is not None:
        lines += [f"    sizes = declared.sizes({call})"]
    arguments = ", ".join(argument(ctype, name) for ctype, name in declared.native_args)
    lines += [f"    {'failed = ' if declared.fails else ''}self._call({declared.name!r}, dtype, {arguments})"]
    if declared.fails:
        lines += [f"    no_memory({declared.name!r}, failed)"]
    lines += [f"    return {', '.join(declared.returns)}"]
    return "\n".join(lines) + "\n"


def _declared_method(declared):
    namespace = {"declared": declared, "FLOATS": FLOATS, "dtypes": dtypes, "numel": numel, "no_memory": no_memory}
    exec(method_source(declared), namespace)
    method = namespace[declared.name]
    method.__doc__ = f"{declared.name} as its declaration says (stage2_tensor/kernels/{declared.family}.py)."
    return method


_CUMSUM = _declared_method(KERNELS["cumsum"])      # NativeBackend.cumsum's call, for non-bool dtypes
# A method per kernel declared with ``native`` that NativeBackend does not write out itself
for _declared in KERNELS.values():
    if _declared.native and _declared.name not in NativeBackend.__dict__:
        setattr(NativeBackend, _declared.name, _declared_method(_declared))


def kernel_table(be):
    """Where device ``be`` (a NativeBackend) does not run its own kernel, one line each: the
    optional kernels it lacks, then the kernels it leaves to the python device, those that
    leave the same dtypes together. The tests print it and check it against the device."""
    lines = [f"{be.name}: lacks {', '.join(sorted(be.lacks))} (stage2 runs their composites)"] if be.lacks else []
    by_dtypes = {}
    for name, leaves in sorted(be.python_fallbacks.items()):
        by_dtypes.setdefault(tuple(d.name for d in dtypes.ALL if d in leaves), []).append(name)
    lines += [f"{be.name}: on the python device for {', '.join(names)}: {', '.join(kernels)}"
              for names, kernels in by_dtypes.items()]
    return lines
