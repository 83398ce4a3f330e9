"""What the native devices share (chapter on native kernels): "cpu" (cpu/backend.py, the C
kernels in csrc/) and "cuda", "cuda-emu" (cuda/backend.py, the kernels in cuda/) run the same
views through the same op codes; only the library underneath differs.

NativeBackend holds the tables both libraries number things by, the rule that the fused
kernels (softmax, the losses, dropout, layer norm) cover float32 and float64 only, the
python fallback of a matmul of integers, and the split of a reduction's dimensions. A
subclass brings its library: its buffers (``allocate``, ``contiguous``...), its kernel calls,
``_matmul``, the product of two float views, and ``_cumsum``, the running sums of a dense
one. The element-wise methods (``unary``, ``binary``) stay in each subclass, written out in
full: they run on every small operation, so they take no extra call through a shared layer.
"""
import functools

from stage2_tensor import backend, contracts, dtypes, ops
from stage2_tensor.backend import Backend, View
from stage2_tensor.strides import is_contiguous, make_strides, numel

from .updates import GroupUpdates

# The kernels' dtype numbers (csrc/tracegrad.h, cuda/ and their C types)
# float16 and bfloat16 are held as their bits; only copies and fills take them (stage2's
# backend.py, "Half precision", runs every other kernel on float32 copies)
CODE = {dtypes.bool_: 0, dtypes.int32: 1, dtypes.int64: 2, dtypes.float32: 3, dtypes.float64: 4,
        dtypes.float16: 5, dtypes.bfloat16: 6}
CTYPE = {dtypes.bool_: "uint8_t", dtypes.int32: "int32_t", dtypes.int64: "int64_t",
         dtypes.float32: "float", dtypes.float64: "double", dtypes.float16: "uint16_t",
         dtypes.bfloat16: "uint16_t"}
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
    """A fused kernel's method: its arguments checked (the contracts.py function of the same
    name), and a dtype other than float32 or float64 (its last argument) run on the python
    backend instead, as the kernels cover only those two."""
    name = method.__name__
    check = getattr(contracts, name)    # a kernel without its contract fails at import

    @functools.wraps(method)
    def run(self, *args):
        check(*args)
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


class NativeBackend(GroupUpdates, Backend):
    fused = frozenset(p.name for p in ops.FUSED)       # the C and CUDA kernels have them all
    """A device on a native library; ``ffi`` is its cffi handle (for NULL)."""
    max_dims = 16                       # TG_MAX_DIMS: the kernels' index arrays hold 16

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
            contracts.matmul(a, b, dtype, bias)
        if dtype in FLOATS:
            return self._matmul(a, b, dtype, bias)
        out = self._on_python("matmul", (a, b, dtype), dtype)
        if bias is None:
            return out
        shape = tuple(a.shape[:-1]) + (b.shape[-1],)    # bias broadcast over the rows
        rows = View(bias.buffer, shape, (0,) * (len(shape) - 1) + tuple(bias.strides), bias.offset, bias.dtype)
        return self.binary("add", View(out, shape, make_strides(shape), 0, dtype), rows, dtype)

    def cumsum(self, view, dim, dtype):
        """Running sums along dim: ``_cumsum`` (the library's kernel) on the view made
        contiguous and of dtype, seen as (outer, size, inner). A bool result is the running
        count of true elements, made as int64 and converted (true from the first true one)."""
        contracts.cumsum(view, dim, dtype)
        if dtype is dtypes.bool_:
            counts = self.cumsum(view, dim, dtypes.int64)
            return self.contiguous(View(counts, view.shape, make_strides(view.shape), 0, dtypes.int64), dtype)
        outer, inner = numel(view.shape[:dim]), numel(view.shape[dim + 1:])
        return self._cumsum(outer, view.shape[dim], inner, self._dense(view, dtype), dtype)

    def _dense(self, view, dtype):
        """A pointer to the view's elements, row-major and of dtype: its own memory when it
        already is, else a contiguous copy."""
        if view.dtype is dtype and is_contiguous(view.shape, view.strides):
            return view.buffer + view.offset
        return self.contiguous(view, dtype)

    def _dense_or_null(self, view, dtype):
        return self.ffi.NULL if view is None else self._dense(view, dtype)

    def _pair_on_python(self, name, args, out_dtypes):
        """The python backend's kernel for a dtype the device's does not cover, when its
        outputs differ in dtype (max_pool's values and int64 positions): each brought back
        as its own (``_on_python`` would give them all the last argument's)."""
        backend.log_fallback(f"{name} for {args[-1].name}", self.name)
        py = backend.get("python")
        moved = [View(py.from_flat(self.to_flat(a), a.dtype), a.shape, make_strides(a.shape), 0, a.dtype)
                 if isinstance(a, View) else a for a in args]
        return tuple(self.from_flat(list(r), d) for r, d in zip(getattr(py, name)(*moved), out_dtypes))
