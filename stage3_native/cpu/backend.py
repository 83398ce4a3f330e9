"""Device "cpu": stage2's backend interface on the C kernels in ../csrc/ (chapter on native
kernels). Compare each method with the same one in stage2_tensor/python_backend.py: the
Python loop over positions becomes one call into C with the view's shape and strides. What
it shares with device "cuda" (the tables, the float-only rule of the fused kernels, the
python fallback of integer matmul, and every kernel whose C function takes the same
arguments as CUDA's, marshalled once through ``_call``) is in native_backend.py; here are
the C library's buffers, the calls that differ, and the kernels only C has.

A buffer is a cffi array (``ffi.new``), owned by Python: when the last tensor viewing it is
dropped, reference counting frees the native memory at once.

Matmul runs one of MATMUL_VARIANTS, the performance chapter's ladder (csrc/matmul.c), picked
by the backend's ``matmul_variant``: the system CBLAS ("blas") when the library was built
with one, else TinyBLAS ("tinyblas", csrc/gemm.c); "naive", "reordered" and "blocked" stay
for the chapter. ``matmul(a, b, dtype, bias)`` adds a bias row inside the product (Linear).
"""
import os
import warnings

from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage2_tensor.elementwise import FLOAT_ONLY
from stage2_tensor.kernels import check
from stage2_tensor.python_backend import positions
from stage2_tensor.strides import is_contiguous, make_strides, numel

from .._native import ffi, lib
from ..native_backend import (BINARY_CODE, CODE, COMPARISON_CODE, CTYPE, FLOATS, REDUCE_CODE, REDUCTIONS,
                             UNARY_CODE, NativeBackend, float_only, no_memory, split_dims, stored_dtype)

CTYPE_ARRAY = {dtype: ffi.typeof(f"{ctype}[]") for dtype, ctype in CTYPE.items()}   # parsed once
SUFFIX = {dtypes.bool_: "u8", dtypes.int32: "i32", dtypes.int64: "i64",
          dtypes.float32: "f32", dtypes.float64: "f64"}
# The performance chapter's ladder (csrc/matmul.c): three loop orders, the system CBLAS
# (when built with one) and TinyBLAS, the project's own packed SIMD BLAS (csrc/gemm.c).
MATMUL_VARIANTS = {"naive": 0, "reordered": 1, "blocked": 2, "blas": 3, "tinyblas": 4}
# Fused attention (csrc/attention.c): the per-row formulas in double, kept as the tests'
# reference, and the flash-attention blocks with their online softmax.
ATTENTION_VARIANTS = {"naive": 0, "blocked": 1}


def default_matmul():
    """TinyBLAS, the project's own GEMM, unless TRACEGRAD_BLAS=blas asks for the system CBLAS
    the library was built with (the thesis's dispatch to MKL or Accelerate). TinyBLAS is the
    default because it measured as fast as OpenBLAS on large products and faster on a
    training step's small ones (benchmarks/RESULTS.md), and because its threads are the
    package's own (set_num_threads), where OpenBLAS runs its own pool."""
    if lib.tg_has_cblas() and os.environ.get("TRACEGRAD_BLAS", "").lower() == "blas":
        return "blas"
    return "tinyblas"


# The SIMD code a CPU runs, chosen at run time (stage3_native/README.md, "SIMD levels"): TinyBLAS's
# micro-kernel (csrc/gemm_kernels.c) and the level of the element-wise kernels (csrc/simd.h),
# each the widest this CPU has unless an environment variable or a call picks another.

def _names(listed):
    """The names C lists one by one (listed(i), NULL after the last)."""
    names, i = [], 0
    while (name := listed(i)) != ffi.NULL:
        names.append(ffi.string(name).decode())
        i += 1
    return tuple(names)


def _use(switch, name, what, available, function):
    if not isinstance(name, str):
        raise TypeError(f"{function}: expected the name of a {what} as a str, got {type(name).__name__}")
    if not switch(name.encode()):
        raise ValueError(f"{function}: this CPU cannot run the {name!r} {what} "
                         f"(it runs {', '.join(available())}; or auto, the widest)")


def gemm_kernels():
    """The micro-kernels this CPU runs, narrowest first: "generic", then "avx2", "avx512"
    where it has them."""
    return _names(lib.tg_gemm_kernels)


def gemm_kernel():
    """The micro-kernel TinyBLAS runs: "avx512", "avx2" (the widest this CPU has) or
    "generic"; TRACEGRAD_GEMM_KERNEL, read at the first matmul, can pick a narrower one."""
    return ffi.string(lib.tg_gemm_kernel()).decode()


def use_gemm_kernel(name):
    """Switch TinyBLAS's micro-kernel (one of gemm_kernels(); "auto": the widest the CPU
    has). Raises ValueError when this CPU cannot run it."""
    _use(lib.tg_gemm_use_kernel, name, "micro-kernel", gemm_kernels, "use_gemm_kernel")


def gemm_blocking(dtype):
    """The blocks of the micro-kernel in use for dtype (float32 or float64), in elements:
    {"mr", "nr"} its register block, {"mc", "kc", "nc"} the cache blocks (csrc/gemm.c)."""
    if dtype not in FLOATS:
        raise TypeError(f"gemm_blocking: expected float32 or float64, got {dtype}")
    blocks = lib.tg_gemm_blocking(CODE[dtype])
    return {name: getattr(blocks, name) for name in ("mr", "nr", "mc", "kc", "nc")}


def simd_levels():
    """The SIMD levels of the element-wise kernels this CPU runs, narrowest first:
    "generic", then "avx2", "avx512" where it has them (csrc/simd.h)."""
    return _names(lib.tg_simd_levels)


def simd_level():
    """The level the element-wise kernels run at: the widest this CPU has, unless
    TRACEGRAD_SIMD, read when the library is loaded, picked a narrower one."""
    return ffi.string(lib.tg_simd_level()).decode()


def use_simd_level(name):
    """Switch the element-wise kernels' level (one of simd_levels(); "auto": the widest).
    Raises ValueError when this CPU cannot run it."""
    _use(lib.tg_simd_use, name, "SIMD level", simd_levels, "use_simd_level")


# float16 / bfloat16 conversion (csrc/half.c): the CPU's instructions (F16C, AVX-512 BF16)
# where it has them, else the portable bit code; both give the same bits.
HALF_INSTRUCTIONS = {dtypes.float16: "f16c", dtypes.bfloat16: "avx512_bf16"}


def half_paths(dtype):
    """The conversion paths this CPU runs for float16 or bfloat16: ("portable",), and its
    instruction set's (HALF_INSTRUCTIONS) where it has it."""
    if dtype not in HALF_INSTRUCTIONS:
        raise TypeError(f"half_paths: expected tracegrad.float16 or tracegrad.bfloat16, got {dtype!r}")
    return ("portable",) + ((HALF_INSTRUCTIONS[dtype],) if lib.tg_half_has_simd(CODE[dtype]) else ())


def half_path(dtype):
    """The path conversions of dtype take now."""
    return half_paths(dtype)[-1] if lib.tg_half_simd(CODE[dtype]) else "portable"


def use_half_instructions(flag):
    """Convert halves with the CPU's instructions where it has them (True, the default) or
    with the portable bit code (False): the tests run both."""
    lib.tg_half_use(1 if flag else 0)


def _check_environment():
    """A variable naming code this CPU cannot run falls back to the widest: say so once."""
    for variable, available in (("TRACEGRAD_GEMM_KERNEL", gemm_kernels), ("TRACEGRAD_SIMD", simd_levels)):
        asked = os.environ.get(variable)
        if asked and asked != "auto" and asked not in available():
            warnings.warn(f"{variable}={asked!r}: this CPU cannot run it (it runs "
                          f"{', '.join(available())}); using the widest, {available()[-1]}",
                          RuntimeWarning, stacklevel=2)


_check_environment()


# Buffers of 16 KiB or more come from the caching allocator (csrc/alloc.c): a reused block
# costs no page faults, and its memory is handed out uninitialized, since most kernels
# write every output element (``zeros`` is for the few that accumulate into theirs).
# Smaller ones come from cffi's own allocation: cheaper to call, and zeroing them is free.
SMALL_BYTES = 16 << 10
_new = ffi.new_allocator(lib.tg_alloc, lib.tg_free, should_clear_after_alloc=False)
_new_zeroed = ffi.new_allocator(lib.tg_alloc, lib.tg_free, should_clear_after_alloc=True)


def allocate(n, dtype):
    """n elements of dtype in native memory (uninitialized unless small)."""
    if n * dtype.itemsize < SMALL_BYTES:
        return ffi.new(CTYPE_ARRAY[dtype], n)
    return _new(CTYPE_ARRAY[dtype], n)


# allocate's test, as a number of elements per dtype: the element-wise and reduction
# wrappers, which run for every small operation, make a small output with ffi.new
# themselves (``ffi.new(CTYPE_ARRAY[dtype], n) if n < SMALL[dtype] else allocate(n, dtype)``),
# one Python call fewer
SMALL = {dtype: SMALL_BYTES // dtype.itemsize for dtype in CTYPE_ARRAY}


def zeros(n, dtype):
    """n zeroed elements of dtype in native memory."""
    if n * dtype.itemsize < SMALL_BYTES:
        return ffi.new(CTYPE_ARRAY[dtype], n)
    return _new_zeroed(CTYPE_ARRAY[dtype], n)


def empty_cache():
    """Give the memory the caching allocator keeps for reuse back to the operating system
    (tensors still alive keep theirs), as torch.cuda.empty_cache() does on a GPU."""
    lib.tg_alloc_trim()


def set_num_threads(n):
    """How many threads the kernels may use (at import: TRACEGRAD_NUM_THREADS, else every core)."""
    if int(n) < 1:
        raise ValueError(f"set_num_threads: expected a thread count of at least 1, got {n}")
    lib.tg_set_num_threads(int(n))


def get_num_threads():
    return lib.tg_num_threads()


def ints(values):
    """Shapes and strides for a kernel's int64_t * arguments: cffi turns a tuple into a
    temporary C array during the call, faster than building one with ffi.new."""
    return tuple(values)


class MadeOnce(dict):
    """A table of values made from their key on first use, ``make(key)``: a key found costs
    a dictionary look-up (``table[key]``, no Python call), a missing one calls __missing__.
    A loop over ever new keys cannot grow it without bound: at ``limit`` entries it starts
    over."""

    def __init__(self, make, limit=10_000):
        super().__init__()
        self.make, self.limit = make, limit

    def __missing__(self, key):
        if len(self) >= self.limit:
            self.clear()
        value = self[key] = self.make(key)
        return value


# The kernels every small operation calls (unary, binary, reduce, matmul) take their shapes
# and strides as C arrays made once per distinct tuple: cffi's conversion of a tuple, on
# every call, costs more than a dictionary look-up, and a program uses few layouts. The
# kernels only read them (const int64_t *), so one array serves every call.
C_INTS = MadeOnce(lambda values: ffi.new("int64_t[]", values))


# The levels of the element-wise hierarchy and the paths of reductions, by their numbers in
# csrc/tracegrad.h (TG_PATH_*, TG_REDUCE_*); csrc/elementwise.c and reduce.c explain them.
PATHS = ("contiguous", "scalar", "lastdim", "strided")
REDUCE_PATHS = ("rows", "columns", "strided")


def elementwise_path(*tensors):
    """Which level an element-wise op on these tensors (broadcast together) runs on:
    "contiguous" (a), "scalar" (b), "lastdim" (c) or "strided" (d)."""
    from stage2_tensor.broadcast import broadcast_shapes
    shape = broadcast_shapes(*(t.shape for t in tensors))
    strides = [s for t in tensors for s in t.broadcast_to(shape).strides]
    return PATHS[lib.tg_elementwise_path(len(shape), ints(shape), len(tensors), ints(strides))]


def reduce_path(tensor, dim=None):
    """Which path a reduction of the tensor over dim (None: all) takes: "rows", "columns"
    or "strided"."""
    from stage2_tensor.reduce import normalize_dims
    outer_shape, outer_strides, inner_shape, inner_strides = split_dims(
        tensor.shape, tensor.strides, normalize_dims(tensor, dim))
    return REDUCE_PATHS[lib.tg_reduce_path(len(outer_shape), outer_shape, outer_strides,
                                           len(inner_shape), inner_shape, inner_strides)]


_KERNELS = {}   # name -> {dtype: the C function tg_<name>_<suffix>}, one table per name


def _fill(name, table):
    table.update({dtype: getattr(lib, f"tg_{name}_{suffix}") for dtype, suffix in SUFFIX.items()
                  if hasattr(lib, f"tg_{name}_{suffix}")})


def kernels(name):
    """The C functions tg_<name>_<suffix> the library has, by dtype: a table made once."""
    table = _KERNELS.get(name)
    if table is None:
        table = _KERNELS[name] = {}
        _fill(name, table)
    return table


def kernel(name, dtype):
    """The C function tg_<name>_<dtype suffix>, looked up once."""
    fn = kernels(name).get(dtype)
    return fn if fn is not None else getattr(lib, f"tg_{name}_{SUFFIX[dtype]}")   # raises: none


def look_up_kernels():
    """Look every table up again in ``lib``, in place (the profiler swaps lib for its timed
    stand-in, profile.py, and back)."""
    for name, table in _KERNELS.items():
        table.clear()
        _fill(name, table)


# The kernels every small operation calls, by dtype: found with one dictionary look-up,
# not a call of kernel().
UNARY_KERNELS, BINARY_KERNELS, REDUCE_KERNELS, MATMUL_KERNELS = map(kernels, ("unary", "binary", "reduce",
                                                                              "matmul"))

def _reduce_layout(key):
    outer_shape, outer_strides, inner_shape, inner_strides = split_dims(*key)
    return ((len(outer_shape), C_INTS[outer_shape], C_INTS[outer_strides],
             len(inner_shape), C_INTS[inner_shape], C_INTS[inner_strides]),
            numel(outer_shape), numel(inner_shape))


# A reduction's layout as its kernel takes it, by (shape, strides, dims): split_dims's kept
# and reduced shapes and strides as (count, C array) pairs, with the number of outputs and
# of elements per output. Made once per layout: a training loop reduces the same few.
REDUCE_LAYOUTS = MadeOnce(_reduce_layout)
ARG_OPS = frozenset(("argmax", "argmin"))


class CpuBackend(NativeBackend):
    name = "cpu"
    ffi = ffi
    allocate = staticmethod(allocate)

    def __init__(self):
        self.matmul_variant = default_matmul()   # "naive", "reordered": kept for the chapter
        self.attention_variant = "blocked"       # "naive": the tests' reference

    def capture(self, inputs):
        """A recording of the C calls a compiled function makes (stage3_native/capture)."""
        from ..capture import LaunchTrace
        from ..capture.cpu import CpuCapture
        return LaunchTrace(CpuCapture(self), inputs)

    # ---- the C calls NativeBackend marshals (native_backend.py) -------------------------------
    def _call(self, name, dtype, *args):
        """tg_<name>_<dtype suffix>(*args); what it returns (a "no memory" flag, or nothing)."""
        return kernel(name, dtype)(*args)

    # a C kernel that checks its data returns the first bad entry's index (-1: none) itself
    _call_reporting = _call

    @staticmethod
    def _int64_at(pointer, i):
        return pointer[i]

    def from_flat(self, values, dtype):
        return ffi.new(CTYPE_ARRAY[dtype], [dtype.encode(v) for v in values])

    def size(self, buffer, dtype):
        """A buffer is a cffi array, which knows its size in bytes. A bare pointer does not
        (it has no len()), and anything not made by cffi has no sizeof: both are refused."""
        try:
            len(buffer)
            return ffi.sizeof(buffer) // dtype.itemsize
        except TypeError:
            raise TypeError(f"device 'cpu' cannot use a {type(buffer).__name__} as a buffer; "
                            "expected a cffi array (ffi.new, ffi.from_buffer)") from None

    def full(self, n, value, dtype):
        if value == 0:
            return zeros(n, dtype)
        out = allocate(n, dtype)
        lib.tg_fill(out, CODE[dtype], n, float(value), 0 if dtype.is_floating_point else int(value))
        return out

    def to_bytes(self, view):
        return ffi.buffer(self.contiguous(view, view.dtype))[:]

    def from_bytes(self, data, dtype):
        out = allocate(len(data) // dtype.itemsize, dtype)
        ffi.memmove(out, data, len(data))
        return out

    def as_numpy(self, view):
        """A numpy array over this buffer (no copy): same memory, same strides."""
        import numpy as np
        flat = np.frombuffer(ffi.buffer(view.buffer), dtype=view.dtype.name)
        return np.lib.stride_tricks.as_strided(
            flat[view.offset:], view.shape, tuple(s * view.dtype.itemsize for s in view.strides))

    def from_numpy(self, array, dtype):
        """The array's own memory (elements of ``dtype``) as a buffer when it is contiguous
        and writable, else None."""
        if not (array.flags.c_contiguous and array.flags.writeable):
            return None
        return ffi.from_buffer(CTYPE_ARRAY[dtype], array)

    def to_flat(self, view):
        n = numel(view.shape)
        if is_contiguous(view.shape, view.strides):      # read in place (item() each step)
            flat = ffi.unpack(view.buffer + view.offset, n) if n else []
        else:
            flat = ffi.unpack(self.contiguous(view, view.dtype), n)
        return [view.dtype.decode(v) for v in flat]

    def contiguous(self, view, dtype):
        out = allocate(numel(view.shape), dtype)
        lib.tg_copy(len(view.shape), ints(view.shape), view.buffer, CODE[view.dtype],
                    ints(view.strides), view.offset, out, CODE[dtype], ints(make_strides(view.shape)), 0)
        return out

    # The element-wise kernels run for every small operation, so their wrappers stay lean:
    # a view's shape and strides are tuples already (cffi passes a tuple as a C array), and
    # the views' shapes are compared inline (the declaration only builds the error).
    def unary(self, op, view, dtype):
        if op in FLOAT_ONLY and not dtype.is_floating_point:     # no integer kernel loops for it
            raise TypeError(f"unary {op!r} computes in a floating-point dtype, not {dtype.name}")
        x = view if view.dtype is dtype else self._as(view, dtype)
        n = numel(x.shape)
        out = ffi.new(CTYPE_ARRAY[dtype], n) if n < SMALL[dtype] else allocate(n, dtype)
        UNARY_KERNELS[dtype](UNARY_CODE[op], len(x.shape), C_INTS[x.shape], x.buffer, C_INTS[x.strides],
                             x.offset, out)
        return out

    def binary(self, op, a, b, dtype):
        if b.shape != a.shape:
            check("binary", op, a, b, dtype)
        if op in COMPARISON_CODE:             # in the operands' dtype, the result bool
            out = allocate(numel(a.shape), dtypes.bool_)
            kernel("compare", a.dtype)(COMPARISON_CODE[op], len(a.shape), a.shape, a.buffer, a.strides,
                                       a.offset, b.buffer, b.strides, b.offset, out)
            return out if dtype is dtypes.bool_ else self.contiguous(
                View(out, a.shape, make_strides(a.shape), 0, dtypes.bool_), dtype)
        if a.dtype is not dtype or b.dtype is not dtype:
            a, b = self._as(a, dtype), self._as(b, dtype)
        n = numel(a.shape)
        out = ffi.new(CTYPE_ARRAY[dtype], n) if n < SMALL[dtype] else allocate(n, dtype)
        BINARY_KERNELS[dtype](BINARY_CODE[op], len(a.shape), C_INTS[a.shape], a.buffer, C_INTS[a.strides],
                              a.offset, b.buffer, C_INTS[b.strides], b.offset, out)
        return out

    def reduce(self, op, view, dims, dtype):
        layout, n_out, n_inner = REDUCE_LAYOUTS[view.shape, view.strides,
                                                dims if type(dims) is tuple else tuple(dims)]
        if op != "sum" and n_inner == 0:
            raise RuntimeError(f"{op}: cannot reduce over an empty dimension (shape {view.shape})")
        if op in ARG_OPS:
            out = allocate(n_out, dtypes.int64)
            kernel("argreduce", view.dtype)(REDUCE_CODE[op], *layout, view.buffer, view.offset, out)
            return out if dtype is dtypes.int64 else self.contiguous(
                View(out, (n_out,), (1,), 0, dtypes.int64), dtype)
        stored = dtype if dtype is view.dtype else stored_dtype(op, view.dtype, dtype)
        out = ffi.new(CTYPE_ARRAY[stored], n_out) if n_out < SMALL[stored] else allocate(n_out, stored)
        REDUCE_KERNELS[view.dtype](REDUCE_CODE[op], *layout, view.buffer, view.offset, out, CODE[stored])
        return out if stored is dtype else self.contiguous(View(out, (n_out,), (1,), 0, stored), dtype)

    def _matmul(self, a, b, dtype, bias):
        """The product of float views (NativeBackend.matmul checked them)."""
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        if len(a.shape) == 2:                           # one product: no batch to walk
            a_base, b_base = C_INTS[a.offset,], C_INTS[b.offset,]
        else:                                           # each batch element's offsets (lists:
            a_base = positions(View(None, a.shape[:-2], a.strides[:-2], a.offset, None))  # cffi
            b_base = positions(View(None, b.shape[:-2], b.strides[:-2], b.offset, None))  # converts)
        size = len(a_base) * m * n
        out = ffi.new(CTYPE_ARRAY[dtype], size) if size < SMALL[dtype] else allocate(size, dtype)
        MATMUL_KERNELS[dtype](MATMUL_VARIANTS[self.matmul_variant], len(a_base), a_base, b_base,
                              m, n, k, a.buffer, a.strides[-2], a.strides[-1],
                              b.buffer, b.strides[-2], b.strides[-1],
                              ffi.NULL if bias is None else self._dense(bias, dtype), out)
        return out

    def index_select(self, view, dim, index):
        check("index_select", view, dim, index)
        size, n_index = view.shape[dim], numel(index.shape)
        ids = self._dense(index, dtypes.int64)
        shape = view.shape[:dim] + (n_index,) + view.shape[dim + 1:]
        out = allocate(numel(shape), view.dtype)
        if is_contiguous(view.shape, view.strides):      # whole rows of the trailing dims
            bad = lib.tg_index_select_dense(numel(view.shape[:dim]), size, numel(view.shape[dim + 1:]),
                                            ffi.cast("char *", view.buffer + view.offset),
                                            view.dtype.itemsize, ids, n_index, ffi.cast("char *", out))
        else:                                            # element by element, through strides
            wrapped = allocate(n_index, dtypes.int64)
            bad = lib.tg_index_check(ids, n_index, size, wrapped)
            if bad < 0:
                lib.tg_index_select(len(view.shape), ints(view.shape), ints(view.strides), view.offset,
                                    dim, wrapped, n_index, ffi.cast("char *", view.buffer),
                                    view.dtype.itemsize, ffi.cast("char *", out))
        if bad >= 0:
            raise backend.bad_index(ids[bad], dim, size)
        return out

    def index(self, view, indices):
        check("index", view, indices)
        k, n = indices.shape[0], numel(indices.shape[1:])
        ids = self._dense(indices, dtypes.int64)
        out = allocate(n * numel(view.shape[k:]), view.dtype)
        bad = lib.tg_index(len(view.shape), ints(view.shape), ints(view.strides), view.offset,
                           ffi.cast("char *", view.buffer), view.dtype.itemsize, k, ids, n, ffi.cast("char *", out))
        if bad >= 0:
            raise backend.bad_index(ids[bad], bad // n, view.shape[bad // n])
        return out

    def index_add(self, shape, dim, index, src, base=None):
        check("index_add", shape, dim, index, src, base)
        ids = self._dense(index, dtypes.int64)
        # the kernel adds into it
        out = zeros(numel(shape), src.dtype) if base is None else self.contiguous(base, src.dtype)
        bad = kernel("index_add_dense", src.dtype)(numel(shape[:dim]), shape[dim], numel(shape[dim + 1:]),
                                                   ids, numel(index.shape), self._dense(src, src.dtype), out)
        if bad >= 0:
            raise backend.bad_index(ids[bad], dim, shape[dim])
        return out

    @staticmethod
    def _cat(*args):
        lib.tg_cat(*args)

    def write(self, dst, src):
        if src.shape != dst.shape:
            check("write", dst, src)
        lib.tg_copy(len(dst.shape), ints(dst.shape), src.buffer, CODE[src.dtype], ints(src.strides),
                    src.offset, dst.buffer, CODE[dst.dtype], ints(dst.strides), dst.offset)

    # ---- linear + cross-entropy over vocabulary chunks (linear_cross_entropy.c) -------------
    # (columns per chunk, rows per tile) the kernels use; 0: their own. The tests set small
    # ones, so that a small vocabulary is cut into several chunks.
    linear_cross_entropy_blocks = (0, 0)

    @float_only
    def linear_cross_entropy(self, x, weight, bias, targets, reduction, ignore_index, dtype):
        (n, c), v = x.shape, weight.shape[0]
        losses, lse = allocate(n if reduction == "none" else 1, dtype), allocate(n, dtype)
        kept = allocate(1, dtype) if reduction == "mean" else None
        target_ids = self._dense(targets, dtypes.int64)
        bad = kernel("linear_cross_entropy", dtype)(
            n, c, v, self._dense(x, dtype), self._dense(weight, dtype), self._dense_or_null(bias, dtype),
            target_ids, REDUCTIONS.index(reduction), *backend.ignoring(ignore_index),
            *self.linear_cross_entropy_blocks, losses, lse, ffi.NULL if kept is None else kept)
        if bad == -2:
            raise MemoryError(f"linear_cross_entropy: no memory for the tiles of {n} rows of logits")
        if bad >= 0:
            raise backend.bad_target(bad, target_ids[bad], v)
        return losses, lse, kept

    @float_only
    def linear_cross_entropy_backward(self, x, weight, bias, targets, lse, scale, kept, ignore_index,
                                      needs, dtype):
        (n, c), v = x.shape, weight.shape[0]
        dx, dw, db = (allocate(size, dtype) if need else None
                      for size, need in zip((n * c, v * c, v), needs))
        failed = kernel("linear_cross_entropy_backward", dtype)(
            n, c, v, self._dense(x, dtype), self._dense(weight, dtype), self._dense_or_null(bias, dtype),
            self._dense(targets, dtypes.int64), self._dense(lse, dtype),
            self._dense(scale, dtype), 1, self._dense_or_null(kept, dtype),   # scale: n values
            *backend.ignoring(ignore_index), *self.linear_cross_entropy_blocks,
            *(ffi.NULL if b is None else b for b in (dx, dw, db)))
        if failed:
            raise MemoryError(f"linear_cross_entropy_backward: no memory for the tiles of {n} rows of logits")
        return dx, dw, db

    # ---- attention (attention.c): q, k, v and the gradient read in place, row by row --------
    def _heads(self, view, dtype):
        """(buffer, each head's offset, row stride) of a (..., n, c) view for the attention
        kernels, which read rows whose last dimension is contiguous: the view itself when
        it is (one head per position of its leading dimensions), else a contiguous copy."""
        if view.dtype is not dtype or (view.strides[-1] != 1 and view.shape[-1] > 1):
            view = View(self.contiguous(view, dtype), view.shape, make_strides(view.shape), 0, dtype)
        heads = View(None, view.shape[:-2], view.strides[:-2], view.offset, None)
        return view.buffer, positions(heads), view.strides[-2]

    @float_only
    def attention(self, q, k, v, causal, scale, dtype):
        (t, d), s, e = q.shape[-2:], k.shape[-2], v.shape[-1]
        bh = numel(q.shape[:-2])
        out, lse = allocate(bh * t * e, dtype), allocate(bh * t, dtype)
        no_memory("attention", kernel("attention", dtype)(
            ATTENTION_VARIANTS[self.attention_variant], bh, t, s, d, e, *self._heads(q, dtype),
            *self._heads(k, dtype), *self._heads(v, dtype), causal is not None, causal or 0,
            float(scale), backend.attention_heads(q.shape), out, lse))
        return out, lse

    @float_only
    def attention_backward(self, grad, q, k, v, out, lse, causal, scale, dtype):
        (t, d), s, e = q.shape[-2:], k.shape[-2], v.shape[-1]
        bh = numel(q.shape[:-2])
        dq, dk, dv = allocate(bh * t * d, dtype), allocate(bh * s * d, dtype), allocate(bh * s * e, dtype)
        no_memory("attention_backward", kernel("attention_backward", dtype)(
            ATTENTION_VARIANTS[self.attention_variant], bh, t, s, d, e, *self._heads(q, dtype),
            *self._heads(k, dtype), *self._heads(v, dtype), *self._heads(out, dtype),
            self._dense(lse, dtype), *self._heads(grad, dtype), causal is not None, causal or 0,
            float(scale), backend.attention_heads(q.shape), dq, dk, dv))
        return dq, dk, dv

    # ---- resampling (resample.c) and windows (convolution.c, pooling.c) into a slice: each --
    # C kernel takes the output's image and channel strides, where CUDA's write new planes
    @float_only
    def interpolate(self, view, out, steps, mode, align_corners, dtype):
        (batch, channels), (h, w), L = view.shape[:2], view.shape[2:], out[0] * out[1]
        y = allocate(batch * channels * L, dtype)
        no_memory("interpolate", kernel("interpolate", dtype)(batch, channels, h, w, out[0], out[1], steps[0],
                                                              steps[1], int(mode == "linear"), int(align_corners),
                                                              self._dense(view, dtype), y, channels * L, L))
        return y

    def interpolate_into(self, view, out, steps, mode, align_corners, dst, dtype):
        """interpolate written into ``dst`` (row-major planes at any image and channel
        strides: a slice of a Concat's buffer); returns None."""
        check("interpolate_into", view, out, steps, mode, align_corners, dst, dtype)
        self._apart("interpolate_into", dst, (view,))
        (batch, channels), (h, w) = view.shape[:2], view.shape[2:]
        no_memory("interpolate_into", kernel("interpolate", dtype)(
            batch, channels, h, w, out[0], out[1], steps[0], steps[1], int(mode == "linear"), int(align_corners),
            self._dense(view, dtype), dst.buffer + dst.offset, dst.strides[0], dst.strides[1]))

    def conv_bands(self, x, weight, bias, stride, before, dilation, groups, out, relu, band_rows, dst, dtype):
        """The inference convolution in bands (convolution_t.h's tg_conv_bands): a new
        (N, C_out, *out) buffer, or None when it wrote into ``dst``."""
        check("conv_bands", x, weight, bias, stride, before, dilation, groups, out, relu, band_rows, dst, dtype)
        (batch, c_in), c_out, L = x.shape[:2], weight.shape[0], numel(out)
        args = (self._dense(x, dtype), self._dense(weight, dtype), self._dense_or_null(bias, dtype))
        if dst is None:
            y = allocate(batch * c_out * L, dtype)
            target, image, channel = y, c_out * L, L
        else:
            self._apart("conv_bands", dst, (x, weight, bias))
            y, target, image, channel = None, dst.buffer + dst.offset, dst.strides[0], dst.strides[1]
        no_memory("conv_bands", kernel("conv_bands", dtype)(
            batch, c_in, c_out, groups, len(out), x.shape[2:], weight.shape[2:], stride, before, dilation, out,
            *args, int(relu), band_rows, target, image, channel))
        return y

    def _apart(self, name, dst, views):
        """A destination must share no element with what the kernel reads in place (a
        contiguous input: any other is copied by _dense first), or it would read values it
        has already overwritten: each of dst's row-major planes against that input's span."""
        plane = numel(dst.shape[2:])
        for v in views:
            if v is None or v.buffer is not dst.buffer or not is_contiguous(v.shape, v.strides) \
                    or v.dtype is not dst.dtype or not plane:
                continue
            lo, hi = v.offset, v.offset + numel(v.shape)
            for n in range(dst.shape[0]):
                for c in range(dst.shape[1]):
                    start = dst.offset + n * dst.strides[0] + c * dst.strides[1]
                    if start < hi and lo < start + plane:
                        raise ValueError(f"{name}: the destination overlaps an input; write into a "
                                         "buffer of its own")

    def max_pool(self, view, kernel_size, stride, before, dilation, out, dtype):
        check("max_pool", view, kernel_size, stride, before, dilation, out, dtype)
        if dtype not in FLOATS:         # python's loops; its positions stay int64
            return self._pair_on_python("max_pool", (view, kernel_size, stride, before, dilation, out, dtype),
                                        (dtype, dtypes.int64))
        (batch, channels), L = view.shape[:2], numel(out)
        y, where = allocate(batch * channels * L, dtype), allocate(batch * channels * L, dtypes.int64)
        no_memory("max_pool", kernel("max_pool", dtype)(batch, channels, len(out), view.shape[2:], kernel_size,
                                                        stride, before, dilation, out, self._dense(view, dtype), y,
                                                        where, channels * L, L))
        return y, where

    def max_pool_into(self, view, kernel_size, stride, before, dilation, out, dst, dtype):
        """max_pool's maxima (no positions: inference) written into ``dst`` (row-major
        planes at any image and channel strides: a slice of a Concat's buffer); None."""
        check("max_pool_into", view, kernel_size, stride, before, dilation, out, dst, dtype)
        self._apart("max_pool_into", dst, (view,))
        (batch, channels) = view.shape[:2]
        no_memory("max_pool_into", kernel("max_pool", dtype)(
            batch, channels, len(out), view.shape[2:], kernel_size, stride, before, dilation, out,
            self._dense(view, dtype), dst.buffer + dst.offset, ffi.NULL, dst.strides[0], dst.strides[1]))
