"""What the native devices share (chapter on native kernels): "cpu" (cpu/backend.py, the C
kernels in csrc/) and "cuda", "cuda-emu" (cuda/backend.py, the kernels in cuda/) run the same
views through the same op codes; only the library underneath differs.

NativeBackend holds the tables both libraries number things by, the rule that the fused
kernels (softmax, the losses, dropout, layer norm) cover float32 and float64 only, the
python fallback of a matmul of integers, the split of a reduction's dimensions, and every
kernel both libraries take with the same arguments, marshalled once here. The C function
of kernel NAME is ``tg_NAME_f32`` / ``tg_NAME_f64`` on "cpu" and ``tg_cuda_NAME`` (the dtype's
code first, a status returned) on CUDA; a subclass brings its library through a few hooks:

    allocate(n, dtype)                 a new buffer of n elements (uninitialized)
    _call(name, dtype, *args)          run kernel name for dtype on args (the C signature's,
                                       after CUDA's dtype code), raising on CUDA's error
                                       status; returns what the C function returns on
                                       "cpu" (a kernel's "no memory" flag), None on CUDA
    _call_reporting(name, dtype, *args)
                                       the same for a kernel that finds a bad entry in its
                                       data (a target, a position): that entry's index, or -1
    _int64_at(pointer, i)              element i of an int64 buffer, read on the host
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


def no_memory(name, failed):
    """The kernels that allocate tables of positions or tiles return 1 on "cpu" when they
    could not (on CUDA the call's status says so, and ``_call`` returns None)."""
    if failed:
        raise MemoryError(f"{name}: no memory for the kernel's tables of positions or tiles")


# The kernels whose native versions cover float32 and float64 only: for any other dtype
# both devices run the python device's (the fused kernels through float_only)
FLOAT_KERNELS = ("matmul", "max_pool", "sgd_update", "adam_update", "softmax", "softmax_backward",
                 "cross_entropy", "cross_entropy_backward", "mse_loss", "mse_loss_backward", "dropout",
                 "layer_norm", "layer_norm_backward", "batch_norm", "batch_norm_backward", "pad",
                 "pad_backward", "interpolate", "interpolate_backward", "im2col", "col2im", "conv_direct",
                 "max_pool_backward")
NOT_FLOATS = frozenset(d for d in dtypes.ALL if d not in FLOATS)
# The optional kernels of the interface (stage2_tensor/backend.py) that the python device
# has none of: a device without one runs stage2's composite, never the python device
OPTIONAL_KERNELS = ("attention", "attention_backward", "linear_cross_entropy", "linear_cross_entropy_backward",
                    "conv_bands", "interpolate_into", "max_pool_into")


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
        """Running sums along dim: the kernel on the view made contiguous and of dtype, seen
        as (outer, size, inner). A bool result is the running count of true elements, made
        as int64 and converted (true from the first true one)."""
        contracts.cumsum(view, dim, dtype)
        if dtype is dtypes.bool_:
            counts = self.cumsum(view, dim, dtypes.int64)
            return self.contiguous(View(counts, view.shape, make_strides(view.shape), 0, dtypes.int64), dtype)
        outer, size, inner = numel(view.shape[:dim]), view.shape[dim], numel(view.shape[dim + 1:])
        out = self.allocate(outer * size * inner, dtype)
        self._call("cumsum", dtype, outer, size, inner, self._dense(view, dtype), out)
        return out

    def where(self, cond, a, b, dtype):
        if not cond.shape == a.shape == b.shape:
            contracts.where(cond, a, b, dtype)
        a, b = self._as(a, dtype), self._as(b, dtype)
        out = self.allocate(numel(a.shape), dtype)
        self._call("where", dtype, len(a.shape), a.shape, cond.buffer, cond.strides, cond.offset,
                   a.buffer, a.strides, a.offset, b.buffer, b.strides, b.offset, out)
        return out

    # ---- fused kernels: contiguous float or double, one call each ---------------------------
    # (float_only checks the arguments and runs other dtypes on the python backend)
    @float_only
    def softmax(self, view, dim, log, dtype):
        outer, inner = numel(view.shape[:dim]), numel(view.shape[dim + 1:])
        out = self.allocate(numel(view.shape), dtype)
        self._call("softmax", dtype, outer, view.shape[dim], inner, self._dense(view, dtype), int(log), out)
        return out

    @float_only
    def softmax_backward(self, grad, out, dim, log, dtype):
        outer, inner = numel(out.shape[:dim]), numel(out.shape[dim + 1:])
        dx = self.allocate(numel(out.shape), dtype)
        self._call("softmax_backward", dtype, outer, out.shape[dim], inner, self._dense(grad, dtype),
                   self._dense(out, dtype), int(log), dx)
        return dx

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
    def mse_loss(self, a, b, reduction, dtype):
        n = numel(a.shape)
        losses, diff = self.allocate(n if reduction == "none" else 1, dtype), self.allocate(n, dtype)
        self._call("mse_loss", dtype, n, self._dense(a, dtype), self._dense(b, dtype), REDUCTIONS.index(reduction),
                   losses, diff)
        return losses, diff

    @float_only
    def mse_loss_backward(self, diff, grad, factor, dtype):
        n = numel(diff.shape)
        out = self.allocate(n, dtype)
        one_value = n > 1 and not any(grad.strides) and grad.dtype is dtype   # a reduction's
        values = grad.buffer + grad.offset if one_value else self._dense(grad, dtype)
        self._call("mse_loss_backward", dtype, n, self._dense(diff, dtype), values, 0 if one_value else 1, factor,
                   out)
        return out

    @float_only
    def dropout(self, view, seed, p, dtype):
        n = numel(view.shape)
        out = self.allocate(n, dtype)
        self._call("dropout", dtype, n, self._dense(view, dtype), seed, p, out)
        return out

    # ---- layer and batch normalization: contiguous rows, contiguous (N, C, S) per channel ---
    @float_only
    def layer_norm(self, x, weight, bias, eps, dtype):
        n, rows = x.shape[-1], numel(x.shape[:-1])
        out, mean, rstd = self.allocate(rows * n, dtype), self.allocate(rows, dtype), self.allocate(rows, dtype)
        self._call("layer_norm", dtype, rows, n, self._dense(x, dtype), self._dense_or_null(weight, dtype),
                   self._dense_or_null(bias, dtype), float(eps), out, mean, rstd)
        return out, mean, rstd

    @float_only
    def layer_norm_backward(self, grad, x, mean, rstd, weight, dtype):
        n, rows = x.shape[-1], numel(x.shape[:-1])
        dx = self.allocate(rows * n, dtype)
        dweight, dbias = (self.allocate(n, dtype), self.allocate(n, dtype)) if weight is not None else (None, None)
        failed = self._call(
            "layer_norm_backward", dtype, rows, n, self._dense(grad, dtype), self._dense(x, dtype),
            self._dense(mean, dtype), self._dense(rstd, dtype), self._dense_or_null(weight, dtype), dx,
            self.ffi.NULL if dweight is None else dweight, self.ffi.NULL if dbias is None else dbias)
        if failed:
            raise MemoryError(f"layer_norm_backward: no memory for the partial sums of {rows} rows of {n}")
        return dx, dweight, dbias

    @float_only
    def batch_norm(self, x, weight, bias, eps, dtype):
        (batch, c), size = x.shape[:2], numel(x.shape[2:])
        out, mean, var = self.allocate(batch * c * size, dtype), self.allocate(c, dtype), self.allocate(c, dtype)
        self._call("batch_norm", dtype, batch, c, size, self._dense(x, dtype), self._dense_or_null(weight, dtype),
                   self._dense_or_null(bias, dtype), float(eps), out, mean, var)
        return out, mean, var

    @float_only
    def batch_norm_backward(self, grad, x, mean, var, weight, eps, dtype):
        (batch, c), size = x.shape[:2], numel(x.shape[2:])
        dx, dweight, dbias = self.allocate(batch * c * size, dtype), self.allocate(c, dtype), self.allocate(c, dtype)
        self._call("batch_norm_backward", dtype, batch, c, size, self._dense(grad, dtype), self._dense(x, dtype),
                   self._dense(mean, dtype), self._dense(var, dtype), self._dense_or_null(weight, dtype),
                   float(eps), dx, dweight, dbias)
        return dx, dweight, dbias

    # ---- resampling: contiguous planes, positions worked out arithmetically ------------------
    @float_only
    def pad(self, view, before, after, mode, value, dtype):
        planes, spatial, padded = contracts.pad_geometry(view.shape, before, after)
        y = self.allocate(planes * padded, dtype)
        no_memory("pad", self._call("pad", dtype, planes, len(before), spatial, tuple(before), tuple(after),
                                    contracts.PAD_CODES.index(mode), float(value), self._dense(view, dtype), y))
        return y

    @float_only
    def pad_backward(self, grad, spatial, before, after, mode, dtype):
        planes = contracts.pad_geometry(grad.shape, before, after)[0]
        dx = self._output("pad_backward", planes * numel(spatial), dtype)
        no_memory("pad_backward", self._call("pad_backward", dtype, planes, len(before), tuple(spatial),
                                             tuple(before), tuple(after), contracts.PAD_CODES.index(mode),
                                             self._dense(grad, dtype), dx))
        return dx

    @float_only
    def interpolate_backward(self, grad, spatial, steps, mode, align_corners, dtype):
        planes, (oh, ow), (h, w) = numel(grad.shape[:2]), grad.shape[2:], spatial
        dx = self._output("interpolate_backward", planes * h * w, dtype)
        no_memory("interpolate_backward", self._call(
            "interpolate_backward", dtype, planes, h, w, oh, ow, steps[0], steps[1], int(mode == "linear"),
            int(align_corners), self._dense(grad, dtype), dx))
        return dx

    # ---- windows of convolution and pooling: contiguous planes, the geometry checked first ---
    @float_only
    def im2col(self, view, kernel_size, stride, before, dilation, out, fill, dtype):
        planes = numel(view.shape[:2])
        cols = self.allocate(planes * numel(kernel_size) * numel(out), dtype)
        no_memory("im2col", self._call("im2col", dtype, planes, len(out), view.shape[2:], kernel_size, stride,
                                       before, dilation, out, self._dense(view, dtype), float(fill), cols))
        return cols

    @float_only
    def col2im(self, cols, spatial, kernel_size, stride, before, dilation, out, dtype):
        planes = numel(cols.shape[:2])
        x = self.allocate(planes * numel(spatial), dtype)   # the kernel writes every element
        no_memory("col2im", self._call("col2im", dtype, planes, len(out), tuple(spatial), kernel_size, stride,
                                       before, dilation, out, self._dense(cols, dtype), x))
        return x

    @float_only
    def conv_direct(self, x, weight, bias, stride, before, dilation, groups, out, dtype):
        (batch, c_in), c_out = x.shape[:2], weight.shape[0]
        y = self.allocate(batch * c_out * numel(out), dtype)
        self._call("conv_direct", dtype, batch, c_in, c_out, groups, len(out), x.shape[2:], weight.shape[2:],
                   stride, before, dilation, out, self._dense(x, dtype), self._dense(weight, dtype),
                   self._dense_or_null(bias, dtype), y)
        return y

    @float_only
    def max_pool_backward(self, grad, where, spatial, dtype):
        planes, P, L = numel(grad.shape[:2]), numel(spatial), numel(grad.shape[2:])
        dx = self._output("max_pool_backward", planes * P, dtype)
        at = self._dense(where, dtypes.int64)
        bad = self._call_reporting("max_pool_backward", dtype, planes, P, L, self._dense(grad, dtype), at, dx)
        if bad >= 0:
            raise backend.bad_position("max_pool_backward", bad, self._int64_at(at, bad), P)
        return dx

    def _run_update(self, name, dtype, sizes, arrays, settings):
        """The kernel call of sgd_update and adam_update (updates.py's GroupUpdates)."""
        self._call(name, dtype, len(sizes), sizes, *arrays, *settings)

    # ---- helpers -----------------------------------------------------------------------------
    def _output(self, kernel, n, dtype):
        """A new buffer for a kernel's n outputs: zeroed for one that adds into it."""
        return self.full(n, 0, dtype) if kernel in self.adds_into_output else self.allocate(n, dtype)

    def _dense(self, view, dtype):
        """A pointer to the view's elements, row-major and of dtype: its own memory when it
        already is, else a contiguous copy."""
        if view.dtype is dtype and is_contiguous(view.shape, view.strides):
            return view.buffer + view.offset
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
