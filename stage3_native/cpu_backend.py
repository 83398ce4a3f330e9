"""Device "cpu": stage2's backend interface on the C kernels in csrc/ (chapter on native
kernels). Compare each method with the same one in stage2_tensor/python_backend.py: the
Python loop over positions becomes one call into C with the view's shape and strides.

A buffer is a cffi array (``ffi.new``), owned by Python: when the last tensor viewing it is
dropped, reference counting frees the native memory at once.
"""
import os

from stage2_tensor import backend, dtypes
from stage2_tensor.backend import BINARY_OPS, REDUCE_OPS, UNARY_OPS, Backend, View
from stage2_tensor.python_backend import positions
from stage2_tensor.strides import is_contiguous, make_strides, numel

from ._native import ffi, lib

CODE = {dtypes.bool_: 0, dtypes.int32: 1, dtypes.int64: 2, dtypes.float32: 3, dtypes.float64: 4}
CTYPE = {dtypes.bool_: "uint8_t", dtypes.int32: "int32_t", dtypes.int64: "int64_t",
         dtypes.float32: "float", dtypes.float64: "double"}
SUFFIX = {dtypes.bool_: "u8", dtypes.int32: "i32", dtypes.int64: "i64",
          dtypes.float32: "f32", dtypes.float64: "f64"}
MATMUL_VARIANTS = {"naive": 0, "reordered": 1, "blocked": 2, "blas": 3}
FLOATS = (dtypes.float32, dtypes.float64)            # the fused kernels' dtypes


def default_matmul():
    """The thesis's dispatch: the system CBLAS when the library was built with one, unless
    TRACEGRAD_BLAS=tinyblas asks for the project's own blocked kernel (so both get tested)."""
    if not lib.tg_has_cblas() or os.environ.get("TRACEGRAD_BLAS", "").lower() == "tinyblas":
        return "blocked"
    return "blas"


# Every buffer comes from the caching allocator (csrc/alloc.c): reused blocks cost no page
# faults. Most kernels write every output element, so memory is handed out uninitialized;
# ``zeros`` is for the few that accumulate into their output.
_new = ffi.new_allocator(lib.tg_alloc, lib.tg_free, should_clear_after_alloc=False)
_new_zeroed = ffi.new_allocator(lib.tg_alloc, lib.tg_free, should_clear_after_alloc=True)


def allocate(n, dtype):
    """n elements of dtype in native memory, uninitialized."""
    return _new(f"{CTYPE[dtype]}[]", n)


def zeros(n, dtype):
    """n zeroed elements of dtype in native memory."""
    return _new_zeroed(f"{CTYPE[dtype]}[]", n)


def set_num_threads(n):
    """How many threads the kernels may use (at import: TRACEGRAD_NUM_THREADS, else every core)."""
    if int(n) < 1:
        raise ValueError(f"set_num_threads: expected a thread count of at least 1, got {n}")
    lib.tg_set_num_threads(int(n))


def get_num_threads():
    return lib.tg_num_threads()


def ints(values):
    return ffi.new("int64_t[]", list(values))


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
    dims = normalize_dims(tensor, dim)
    kept = [d for d in range(tensor.ndim) if d not in dims]
    pick = lambda ds, values: ints(values[d] for d in ds)            # noqa: E731
    return REDUCE_PATHS[lib.tg_reduce_path(len(kept), pick(kept, tensor.shape), pick(kept, tensor.strides),
                                           len(dims), pick(dims, tensor.shape), pick(dims, tensor.strides))]


def kernel(name, dtype):
    return getattr(lib, f"tg_{name}_{SUFFIX[dtype]}")


class CpuBackend(Backend):
    name = "cpu"
    max_dims = 16                       # TG_MAX_DIMS: the kernels' index arrays hold 16

    def __init__(self):
        self.matmul_variant = default_matmul()   # "naive", "reordered": kept for the chapter

    def from_flat(self, values, dtype):
        return ffi.new(f"{CTYPE[dtype]}[]", [dtype.cast(v) for v in values])

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

    def from_numpy(self, array):
        """The array's own memory as a buffer when it is contiguous and writable, else None."""
        if not (array.flags.c_contiguous and array.flags.writeable):
            return None
        return ffi.from_buffer(f"{CTYPE[dtypes.by_name(str(array.dtype))]}[]", array)

    def to_flat(self, view):
        flat = self.contiguous(view, view.dtype)
        return [view.dtype.cast(v) for v in ffi.unpack(flat, numel(view.shape))]

    def contiguous(self, view, dtype):
        out = allocate(numel(view.shape), dtype)
        lib.tg_copy(len(view.shape), ints(view.shape), view.buffer, CODE[view.dtype],
                    ints(view.strides), view.offset, out, CODE[dtype], ints(make_strides(view.shape)), 0)
        return out

    def _on_python(self, kernel_name, args, dtype):
        """The python backend's kernel for a dtype the C kernel does not cover (logged once)."""
        backend.log_fallback(f"{kernel_name} for {dtype.name}", self.name)
        return backend.on_python(self, kernel_name, args, dtype)

    def _as(self, view, dtype):
        """The view itself, or a contiguous copy converted to dtype."""
        if view.dtype is dtype:
            return view
        return View(self.contiguous(view, dtype), view.shape, make_strides(view.shape), 0, dtype)

    def unary(self, op, view, dtype):
        x = self._as(view, dtype)
        out = allocate(numel(x.shape), dtype)
        kernel("unary", dtype)(UNARY_OPS.index(op), len(x.shape), ints(x.shape), x.buffer,
                               ints(x.strides), x.offset, out)
        return out

    def binary(self, op, a, b, dtype):
        code = BINARY_OPS.index(op)
        if dtype is dtypes.bool_ and code >= BINARY_OPS.index("eq"):     # a comparison
            out = allocate(numel(a.shape), dtypes.bool_)
            kernel("compare", a.dtype)(code, len(a.shape), ints(a.shape), a.buffer, ints(a.strides),
                                       a.offset, b.buffer, ints(b.strides), b.offset, out)
            return out
        a, b = self._as(a, dtype), self._as(b, dtype)
        out = allocate(numel(a.shape), dtype)
        kernel("binary", dtype)(code, len(a.shape), ints(a.shape), a.buffer, ints(a.strides), a.offset,
                                b.buffer, ints(b.strides), b.offset, out)
        return out

    def where(self, cond, a, b, dtype):
        a, b = self._as(a, dtype), self._as(b, dtype)
        out = allocate(numel(a.shape), dtype)
        kernel("where", dtype)(len(a.shape), ints(a.shape), cond.buffer, ints(cond.strides), cond.offset,
                               a.buffer, ints(a.strides), a.offset, b.buffer, ints(b.strides), b.offset, out)
        return out

    def reduce(self, op, view, dims, dtype):
        kept = [d for d in range(len(view.shape)) if d not in dims]
        outer_shape = [view.shape[d] for d in kept]
        inner_shape = [view.shape[d] for d in dims]
        if numel(inner_shape) == 0 and op != "sum":
            raise RuntimeError(f"{op}: cannot reduce over an empty dimension (shape {view.shape})")
        args = (REDUCE_OPS.index(op), len(kept), ints(outer_shape), ints(view.strides[d] for d in kept),
                len(dims), ints(inner_shape), ints(view.strides[d] for d in dims), view.buffer, view.offset)
        n_out = numel(outer_shape)
        if op.startswith("arg"):
            out = allocate(n_out, dtypes.int64)
            kernel("argreduce", view.dtype)(*args, out)
            return out if dtype is dtypes.int64 else self.contiguous(
                View(out, (n_out,), (1,), 0, dtypes.int64), dtype)
        wide = dtypes.float64 if view.dtype.is_floating_point else dtypes.int64   # the kernel's W
        result = allocate(n_out, wide)                   # accumulated in W, then stored as dtype
        kernel("reduce", view.dtype)(*args, result)
        return result if dtype is wide else self.contiguous(View(result, (n_out,), (1,), 0, wide), dtype)

    def matmul(self, a, b, dtype):
        if dtype not in (dtypes.float32, dtypes.float64):
            return self._on_python("matmul", (a, b, dtype), dtype)
        batch = range(len(a.shape) - 2)
        a_base = positions(View(None, tuple(a.shape[d] for d in batch), tuple(a.strides[d] for d in batch), a.offset, None))
        b_base = positions(View(None, tuple(b.shape[d] for d in batch), tuple(b.strides[d] for d in batch), b.offset, None))
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        out = allocate(len(a_base) * m * n, dtype)
        kernel("matmul", dtype)(MATMUL_VARIANTS[self.matmul_variant], len(a_base), ints(a_base), ints(b_base),
                                m, n, k, a.buffer, a.strides[-2], a.strides[-1],
                                b.buffer, b.strides[-2], b.strides[-1], out)
        return out

    def index_select(self, view, dim, index):
        shape = view.shape[:dim] + (len(index),) + view.shape[dim + 1:]
        out = allocate(numel(shape), view.dtype)
        lib.tg_index_select(len(view.shape), ints(view.shape), ints(view.strides), view.offset, dim,
                            ints(index), len(index), ffi.cast("char *", view.buffer),
                            view.dtype.itemsize, ffi.cast("char *", out))
        return out

    def index_add(self, shape, dim, index, src):
        out = zeros(numel(shape), src.dtype)        # the kernel adds into it
        kernel("index_add", src.dtype)(len(shape), ints(shape), dim, ints(index), len(index),
                                       src.buffer, ints(src.strides), src.offset, out)
        return out

    def write(self, dst, src):
        lib.tg_copy(len(dst.shape), ints(dst.shape), src.buffer, CODE[src.dtype], ints(src.strides),
                    src.offset, dst.buffer, CODE[dst.dtype], ints(dst.strides), dst.offset)

    # ---- fused kernels (softmax.c, optim.c): contiguous float or double arrays -------------
    def _dense(self, view, dtype):
        """A pointer to the view's elements, row-major and of dtype: its own memory when it
        already is, else a contiguous copy."""
        if view.dtype is dtype and is_contiguous(view.shape, view.strides):
            return view.buffer + view.offset
        return self.contiguous(view, dtype)

    def softmax(self, view, dim, log, dtype):
        if dtype not in FLOATS:
            return self._on_python("softmax", (view, dim, log, dtype), dtype)
        outer, inner = numel(view.shape[:dim]), numel(view.shape[dim + 1:])
        out = allocate(numel(view.shape), dtype)
        kernel("softmax", dtype)(outer, view.shape[dim], inner, self._dense(view, dtype), int(log), out)
        return out

    def cross_entropy(self, logits, targets, dtype):
        if dtype not in FLOATS:
            return self._on_python("cross_entropy", (logits, targets, dtype), dtype)
        n, c = logits.shape
        losses, probs = allocate(n, dtype), allocate(n * c, dtype)
        kernel("cross_entropy", dtype)(n, c, self._dense(logits, dtype), ints(targets), losses, probs)
        return losses, probs

    def _update_in_place(self, name, views, *settings):
        """Run an optimizer kernel on the views' memory (views[1] is the gradient, only
        read); a parameter or state view that is not contiguous is updated in a copy,
        written back afterwards."""
        dtype = views[0].dtype
        if dtype not in FLOATS:
            return self._on_python(name, (*views, *settings), dtype)
        arrays = [ffi.NULL if v is None else self._dense(v, dtype) for v in views]
        kernel(name, dtype)(numel(views[0].shape), *arrays, *settings)
        for v, a in zip(views[:1] + views[2:], arrays[:1] + arrays[2:]):
            if v is not None and not (v.dtype is dtype and is_contiguous(v.shape, v.strides)):
                self.write(v, View(a, v.shape, make_strides(v.shape), 0, dtype))

    def sgd_update(self, param, grad, velocity, lr, momentum, dampening, weight_decay,
                   first_step, nesterov):
        self._update_in_place("sgd_update", (param, grad, velocity), lr, momentum, dampening,
                              weight_decay, int(first_step), int(nesterov))

    def adam_update(self, param, grad, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, step):
        self._update_in_place("adam_update", (param, grad, m, v), lr, beta1, beta2, eps,
                              weight_decay, int(decoupled), step)
