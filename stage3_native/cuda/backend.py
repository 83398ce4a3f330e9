"""Device "cuda": stage2's backend interface on the CUDA kernels beside it (chapter on native
kernels, section "CUDA"). Compare each method with ../cpu/backend.py's: the same views, the
same op codes (../native_backend.py holds what the two share: the tables, and every kernel
whose arguments are the same on both, which reaches this library through ``_call``), but
the buffers are GPU memory and every kernel is a launch.

A buffer is a typed device pointer that cffi frees (``ffi.gc``) when the last tensor viewing
it is dropped: the memory goes back to the library's caching allocator (memory.cu), and
``empty_cache()`` hands the cached blocks back to the driver. A pointer does not know how
much memory it points to, so the backend notes each buffer's bytes (weakly, dropped with
the buffer) for ``size``. Data crosses between host and
device only in from_flat/from_bytes/from_numpy (tensor creation and ``.to("cuda")``) and
to_flat/to_bytes/as_numpy (``tolist``, ``item``, ``numpy``, ``.to("cpu")``), plus one
8-byte read after the kernels that check indices (index_select, index_add, cross_entropy),
so that a bad index raises IndexError at the op that had it, as on the CPU.

Two devices share this class: "cuda", the library nvcc built, on a GPU; and "cuda-emu",
the same sources built for the CPU (cuda/emulate.cuh), which runs anywhere.
"""
import shlex
import shutil
import threading
import weakref

from stage2_tensor import backend, dtypes
from stage2_tensor.backend import View
from stage2_tensor.kernels import check
from stage2_tensor.strides import make_strides, numel

from .. import cuda_build
from ..native_backend import (BINARY_CODE, CODE, COMPARISON_CODE, CTYPE, FLOATS, REDUCE_CODE, UNARY_CODE,
                             NativeBackend, float_only, split_dims, stored_dtype)


class CudaError(RuntimeError):
    """An error the CUDA runtime reported, with its message."""


_LOCK = threading.Lock()
_LIBRARIES = {}


def load(device):
    """(ffi, lib) of device "cuda" or "cuda-emu": its library built when missing or stale,
    then opened. Raises RuntimeError saying what is missing."""
    with _LOCK:
        if device not in _LIBRARIES:
            from cffi import FFI
            reason = _unbuildable(device)
            if reason is not None:
                raise RuntimeError(reason)
            if device == "cuda-emu" or cuda_build.nvcc() is not None:
                cuda_build.ensure_built(device)
            ffi = FFI()
            ffi.cdef(cuda_build.declarations())
            _LIBRARIES[device] = ffi, ffi.dlopen(str(cuda_build.LIBRARIES[device]))
        return _LIBRARIES[device]


def _unbuildable(device):
    """Why `device`'s library is missing and cannot be built here, or None."""
    if cuda_build.LIBRARIES[device].exists():
        return None
    if device == "cuda" and cuda_build.nvcc() is None:
        return "the CUDA library was not built: nvcc was not found (on the PATH or in $CUDA_HOME/bin)"
    if device == "cuda-emu" and shutil.which(shlex.split(cuda_build.cxx())[0]) is None:
        return f"the emulator's library was not built: no C++ compiler ({cuda_build.cxx()}) was found"
    return None


def quick_reason(device):
    """Why `device` cannot run here as far as a look that builds and opens nothing of ours
    tells, or None when it may: its library missing with nothing to build it, or for "cuda"
    no NVIDIA driver (then there is no GPU to run on, and building the library with nvcc,
    minutes, would only end in that)."""
    reason = _unbuildable(device)
    if reason is None and device == "cuda":
        reason = cuda_build.no_gpu()
    return reason


def unavailable_reason(device="cuda"):
    """Why `device` cannot run here, or None when it can."""
    reason = quick_reason(device)
    if reason is not None:
        return reason
    try:
        ffi, lib = load(device)
    except (RuntimeError, OSError) as err:
        return str(err)
    count = ffi.new("int *")
    status = lib.tg_cuda_device_count(count)
    if status != 0 or count[0] == 0:
        why = ffi.string(lib.tg_cuda_error_string(status)).decode() if status else "no device"
        return (f"no CUDA device was found (cudaGetDeviceCount: {why}); the CUDA library was "
                f"built ({cuda_build.LIBRARIES[device].name})")
    return None


def create(device):
    """The backend of `device`, for stage2's backend.register_loader."""
    reason = unavailable_reason(device)
    if reason is not None:
        raise RuntimeError(f"device {device!r} cannot run here: {reason}")
    return CudaBackend(device, *load(device))


class CudaBackend(NativeBackend):
    # The kernels only the C library has: stage2 runs their composites here
    lacks = frozenset(("attention", "attention_backward", "linear_cross_entropy", "linear_cross_entropy_backward",
                       "conv_bands", "interpolate_into", "max_pool_into"))
    # index_add and index_reduce combine with atomics, which have no byte-sized form
    python_fallbacks = {**NativeBackend.python_fallbacks, "index_add": frozenset((dtypes.bool_,)),
                        "index_reduce": frozenset((dtypes.bool_,))}
    # the backward kernels of resampling and pooling add their gradients atomically, into zeros
    adds_into_output = frozenset(("pad_backward", "interpolate_backward", "max_pool_backward"))

    def __init__(self, name, ffi, lib):
        self.name, self.ffi, self.lib = name, ffi, lib
        self._status = ffi.new("int *")
        self._nbytes = weakref.WeakKeyDictionary()      # buffer -> bytes, for size()
        self._ctype_ptr = {dtype: ffi.typeof(f"{ctype} *") for dtype, ctype in CTYPE.items()}

    def capture(self, inputs):
        """A recording of the kernels a compiled function launches (stage3_native/capture)."""
        from ..capture import LaunchTrace
        from ..capture.cuda import CudaCapture
        return LaunchTrace(CudaCapture(self), inputs)

    # ---- the kernel calls NativeBackend marshals (native_backend.py) -------------------------
    def _call(self, name, dtype, *args):
        """tg_cuda_<name>(dtype code, *args), its status checked."""
        self.check(getattr(self.lib, f"tg_cuda_{name}")(CODE[dtype], *args), name)

    def _call_reporting(self, name, dtype, *args):
        """The same for a kernel that checks its data: it writes the first bad entry's index
        (-1: none) into one more argument, read back here."""
        bad = self.ffi.new("i64 *")
        self._call(name, dtype, *args, bad)
        return bad[0]

    def _int64_at(self, pointer, i):
        """Element i of a device array of int64 (one 8-byte copy to the host)."""
        value = self.ffi.new("int64_t *")
        self.check(self.lib.tg_cuda_to_host(value, pointer + i, 8), "copy to host")
        return value[0]

    # ---- device, memory and copies (memory.cu) -----------------------------------------------
    def check(self, status, what):
        """Raise CudaError carrying the runtime's message when a call did not succeed."""
        if status:
            message = self.ffi.string(self.lib.tg_cuda_error_string(status)).decode()
            raise CudaError(f"{what} on device {self.name!r}: {message} (CUDA error {status})")

    def device_name(self):
        name = self.ffi.new("char[256]")
        self.check(self.lib.tg_cuda_device_name(name, 256), "device_name")
        return self.ffi.string(name).decode()

    def synchronize(self):
        self.check(self.lib.tg_cuda_synchronize(), "synchronize")

    def allocate(self, n, dtype):
        """Device memory for n elements of dtype (uninitialized), freed with its last view."""
        nbytes = n * dtype.itemsize
        pointer = self.lib.tg_cuda_malloc(nbytes, self._status)
        if pointer == self.ffi.NULL:
            self.check(self._status[0] or 2, f"allocating {nbytes} bytes")
        buffer = self.ffi.gc(self.ffi.cast(self._ctype_ptr[dtype], pointer), self.lib.tg_cuda_free)
        self._nbytes[buffer] = nbytes
        return buffer

    def size(self, buffer, dtype):
        """How many elements of dtype the buffer holds: the bytes noted when this backend
        allocated it (TypeError for anything else)."""
        try:
            nbytes = self._nbytes.get(buffer)
        except TypeError:               # not even something a weak reference can point to
            nbytes = None
        if nbytes is None:
            raise TypeError(f"device {self.name!r} cannot use a {type(buffer).__name__} as a "
                            "buffer; expected one it allocated")
        return nbytes // dtype.itemsize

    def memory_allocated(self):
        """Bytes held by live buffers (rounded up to the allocator's block sizes)."""
        return self.lib.tg_cuda_memory_allocated()

    def memory_reserved(self):
        """Bytes taken from the device: live buffers and the cache of freed ones."""
        return self.lib.tg_cuda_memory_reserved()

    def empty_cache(self):
        self.check(self.lib.tg_cuda_empty_cache(), "empty_cache")

    def from_flat(self, values, dtype):
        host = self.ffi.new(f"{CTYPE[dtype]}[]", [dtype.encode(v) for v in values])
        out = self.allocate(len(values), dtype)
        self.check(self.lib.tg_cuda_to_device(out, host, len(values) * dtype.itemsize), "copy to device")
        return out

    def from_bytes(self, data, dtype):
        out = self.allocate(len(data) // dtype.itemsize, dtype)
        self.check(self.lib.tg_cuda_to_device(out, self.ffi.from_buffer(data), len(data)), "copy to device")
        return out

    def to_bytes(self, view):
        n = numel(view.shape)
        source = self._dense(view, view.dtype)
        host = bytearray(n * view.dtype.itemsize)
        self.check(self.lib.tg_cuda_to_host(self.ffi.from_buffer(host), source, len(host)), "copy to host")
        return host

    def to_flat(self, view):
        n = numel(view.shape)
        host = self.ffi.new(f"{CTYPE[view.dtype]}[]", n)
        self.check(self.lib.tg_cuda_to_host(host, self._dense(view, view.dtype), n * view.dtype.itemsize),
                   "copy to host")
        return [view.dtype.decode(v) for v in self.ffi.unpack(host, n)] if n else []

    def as_numpy(self, view):
        """A numpy copy of the view (GPU memory cannot be shared with numpy)."""
        import numpy as np
        return np.frombuffer(self.to_bytes(view), dtype=view.dtype.name).reshape(view.shape)

    def from_numpy(self, array, dtype):
        """A device copy of the array (GPU memory cannot be shared with numpy)."""
        import numpy as np
        data = np.ascontiguousarray(array)
        out = self.allocate(data.size, dtype)
        self.check(self.lib.tg_cuda_to_device(out, self.ffi.from_buffer(data), data.nbytes), "copy to device")
        return out

    # ---- element-wise (elementwise.cu) --------------------------------------------------------
    def full(self, n, value, dtype):
        out = self.allocate(n, dtype)
        self.check(self.lib.tg_cuda_fill(out, CODE[dtype], n, float(value),
                                         0 if dtype.is_floating_point else int(value)), "full")
        return out

    def contiguous(self, view, dtype):
        out = self.allocate(numel(view.shape), dtype)
        self.check(self.lib.tg_cuda_copy(len(view.shape), view.shape, view.buffer, CODE[view.dtype],
                                         view.strides, view.offset, out, CODE[dtype],
                                         make_strides(view.shape), 0), "contiguous")
        return out

    def write(self, dst, src):
        if src.shape != dst.shape:
            check("write", dst, src)
        self.check(self.lib.tg_cuda_copy(len(dst.shape), dst.shape, src.buffer, CODE[src.dtype],
                                         src.strides, src.offset, dst.buffer, CODE[dst.dtype],
                                         dst.strides, dst.offset), "write")

    def unary(self, op, view, dtype):
        x = self._as(view, dtype)
        out = self.allocate(numel(x.shape), dtype)
        self.check(self.lib.tg_cuda_unary(UNARY_CODE[op], CODE[dtype], len(x.shape), x.shape, x.buffer,
                                          x.strides, x.offset, out), op)
        return out

    def binary(self, op, a, b, dtype):
        if b.shape != a.shape:
            check("binary", op, a, b, dtype)
        if op in COMPARISON_CODE:             # in the operands' dtype, the result bool
            out = self.allocate(numel(a.shape), dtypes.bool_)
            self.check(self.lib.tg_cuda_compare(COMPARISON_CODE[op], CODE[a.dtype], len(a.shape), a.shape,
                                                a.buffer, a.strides, a.offset, b.buffer, b.strides, b.offset,
                                                out), op)
            return out if dtype is dtypes.bool_ else self.contiguous(
                View(out, a.shape, make_strides(a.shape), 0, dtypes.bool_), dtype)
        if a.dtype is not dtype or b.dtype is not dtype:
            a, b = self._as(a, dtype), self._as(b, dtype)
        out = self.allocate(numel(a.shape), dtype)
        self.check(self.lib.tg_cuda_binary(BINARY_CODE[op], CODE[a.dtype], len(a.shape), a.shape, a.buffer,
                                           a.strides, a.offset, b.buffer, b.strides, b.offset, out), op)
        return out

    # ---- reductions (reduce.cu) ---------------------------------------------------------------
    def reduce(self, op, view, dims, dtype):
        outer_shape, outer_strides, inner_shape, inner_strides = split_dims(view.shape, view.strides, dims)
        if op != "sum" and numel(inner_shape) == 0:
            raise RuntimeError(f"{op}: cannot reduce over an empty dimension (shape {view.shape})")
        n_out = numel(outer_shape)
        stored = stored_dtype(op, view.dtype, dtype)
        out = self.allocate(n_out, stored)
        self.check(self.lib.tg_cuda_reduce(REDUCE_CODE[op], CODE[view.dtype], len(outer_shape), outer_shape,
                                           outer_strides, len(inner_shape), inner_shape, inner_strides,
                                           view.buffer, view.offset, out, CODE[stored]), op)
        return out if stored is dtype else self.contiguous(View(out, (n_out,), (1,), 0, stored), dtype)

    # ---- matmul (matmul.cu, cublas.cu) --------------------------------------------------------
    # matmul.cu's variants, slowest first: the textbook kernel, the shared-memory tiled one,
    # the tiled one with 128-bit loads and double-buffered shared memory (float32; float64
    # runs the tiled kernel), cuBLAS (loaded at run time, when there is one), and cuBLAS
    # with float32 products on the tensor cores in TF32 (10-bit mantissas: faster, less
    # exact; float64 unchanged).
    MATMUL_VARIANTS = {"naive": 0, "tiled": 1, "vectorized": 2, "cublas": 3, "cublas-tf32": 4}

    @property
    def matmul_variant(self):
        """The variant matmul runs: unless set, "cublas" where cuBLAS loads, else "tiled"."""
        if getattr(self, "_matmul_variant", None) is None:
            self._matmul_variant = "cublas" if self.has_cublas() else "tiled"
        return self._matmul_variant

    @matmul_variant.setter
    def matmul_variant(self, variant):
        if variant not in self.MATMUL_VARIANTS:
            raise ValueError(f"matmul_variant: expected one of {', '.join(self.MATMUL_VARIANTS)}, got {variant!r}")
        if variant not in self.matmul_variants():
            raise ValueError(f"matmul_variant {variant!r} cannot run on device {self.name!r}: "
                             + ("the emulator has no cuBLAS" if self.name == "cuda-emu" else
                                "cuBLAS did not load (libcublas.so.13, .12, .11 or $TRACEGRAD_CUBLAS)"
                                if not self.has_cublas() else "this cuBLAS has no cublasGemmEx"))
        self._matmul_variant = variant

    def matmul_variants(self):
        """The variants this device can run."""
        names = ["naive", "tiled", "vectorized"]
        if self.has_cublas():
            names.append("cublas")
            if self.lib.tg_cuda_has_cublas_tf32():
                names.append("cublas-tf32")
        return names

    def has_cublas(self):
        """Whether cuBLAS loaded: libcublas.so.13, .12, .11 or $TRACEGRAD_CUBLAS from the
        system's library path, else one from pip's NVIDIA wheels. Never on "cuda-emu"."""
        if self.lib.tg_cuda_has_cublas():
            return True
        if self.name == "cuda" and not getattr(self, "_cublas_searched", False):
            self._cublas_searched = True
            for path in self._cublas_wheels():
                if self.lib.tg_cuda_cublas_load(str(path).encode()):
                    return True
        return False

    def cublas_library(self):
        """The path or name of the libcublas in use ("" when none)."""
        return self.ffi.string(self.lib.tg_cuda_cublas_library()).decode() if self.has_cublas() else ""

    @staticmethod
    def _cublas_wheels():
        """libcublas of pip's nvidia-cublas wheels (PyTorch's CUDA builds install one), which
        the dynamic loader does not search: site-packages/nvidia/<cublas or cu13>/lib/."""
        import sys
        from pathlib import Path
        found = []
        for folder in sys.path:
            try:
                found += sorted(Path(folder or ".").glob("nvidia/*/lib/libcublas.so.*"), reverse=True)
            except OSError:
                continue
        return found

    def _check_matmul(self, status):
        """self.check, except that cuBLAS's own status codes (not CUDA errors) say so."""
        if status >= self.lib.TG_CUBLAS_STATUS:
            code = status - self.lib.TG_CUBLAS_STATUS
            name = self.ffi.string(self.lib.tg_cuda_cublas_status_name(code)).decode()
            raise CudaError(f"matmul on device {self.name!r}: cuBLAS status {code} ({name})")
        self.check(status, "matmul")

    def _matmul(self, a, b, dtype, bias):
        """The product of float views (NativeBackend.matmul checked them) on the GPU."""
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        a, b = self._as(a, dtype), self._as(b, dtype)
        batch = tuple(a.shape[:-2])
        out = self.allocate(numel(batch) * m * n, dtype)
        self._check_matmul(self.lib.tg_cuda_matmul(
            self.MATMUL_VARIANTS[self.matmul_variant], CODE[dtype], len(batch), batch, tuple(a.strides[:-2]),
            a.offset, tuple(b.strides[:-2]), b.offset, m, n, k, a.buffer, a.strides[-2], a.strides[-1],
            b.buffer, b.strides[-2], b.strides[-1], self._dense_or_null(bias, dtype), out))
        return out

    # ---- gather and scatter-add (index.cu) ----------------------------------------------------
    def _index_error(self, ids, position, dim, size):
        """bad_index(...) for the index at `position` of the device array ids (the kernel
        reported where the first bad index is, not its value)."""
        return backend.bad_index(self._int64_at(ids, position), dim, size)

    def _cat(self, *args):
        self.check(self.lib.tg_cuda_cat(*args), "cat")

    def index_select(self, view, dim, index):
        check("index_select", view, dim, index)
        size, n_index = view.shape[dim], numel(index.shape)
        ids = self._dense(index, dtypes.int64)
        out = self.allocate(numel(view.shape[:dim]) * n_index * numel(view.shape[dim + 1:]), view.dtype)
        bad = self.ffi.new("i64 *")
        self.check(self.lib.tg_cuda_index_select(len(view.shape), view.shape, view.strides, view.offset, dim,
                                                 ids, n_index, view.buffer, view.dtype.itemsize, out, bad),
                   "index_select")
        if bad[0] >= 0:
            raise self._index_error(ids, bad[0], dim, size)
        return out

    def index(self, view, indices):
        check("index", view, indices)
        k, n = indices.shape[0], numel(indices.shape[1:])
        ids = self._dense(indices, dtypes.int64)
        out = self.allocate(n * numel(view.shape[k:]), view.dtype)
        bad = self.ffi.new("i64 *")
        self.check(self.lib.tg_cuda_index(len(view.shape), view.shape, view.strides, view.offset, view.buffer,
                                          view.dtype.itemsize, k, ids, n, out, bad), "index")
        if bad[0] >= 0:
            raise self._index_error(ids, bad[0], bad[0] // n, view.shape[bad[0] // n])
        return out

    def index_add(self, shape, dim, index, src, base=None):
        check("index_add", shape, dim, index, src, base)
        if src.dtype is dtypes.bool_:                     # no atomic addition of bytes
            return self._on_python("index_add", (shape, dim, index, src, base), src.dtype)
        ids = self._dense(index, dtypes.int64)
        # the kernel adds into it
        out = self.full(numel(shape), 0, src.dtype) if base is None else self.contiguous(base, src.dtype)
        bad = self.ffi.new("i64 *")
        self.check(self.lib.tg_cuda_index_add(CODE[src.dtype], numel(shape[:dim]), shape[dim],
                                              numel(shape[dim + 1:]), ids, numel(index.shape),
                                              self._dense(src, src.dtype), out, bad), "index_add")
        if bad[0] >= 0:
            raise self._index_error(ids, bad[0], dim, shape[dim])
        return out

    # ---- resampling (resample.cu) and pooling (convolution.cu): contiguous planes, a thread
    # per output, written as new planes (the C kernels also take a slice's strides)
    @float_only
    def interpolate(self, view, out, steps, mode, align_corners, dtype):
        planes, (h, w) = numel(view.shape[:2]), view.shape[2:]
        y = self.allocate(planes * out[0] * out[1], dtype)
        self.check(self.lib.tg_cuda_interpolate(CODE[dtype], planes, h, w, out[0], out[1], steps[0], steps[1],
                                                int(mode == "linear"), int(align_corners),
                                                self._dense(view, dtype), y), "interpolate")
        return y

    def max_pool(self, view, kernel_size, stride, before, dilation, out, dtype):
        check("max_pool", view, kernel_size, stride, before, dilation, out, dtype)
        if dtype not in FLOATS:         # python's loops; its positions stay int64
            return self._pair_on_python("max_pool", (view, kernel_size, stride, before, dilation, out, dtype),
                                        (dtype, dtypes.int64))
        planes, L = numel(view.shape[:2]), numel(out)
        y, where = self.allocate(planes * L, dtype), self.allocate(planes * L, dtypes.int64)
        self.check(self.lib.tg_cuda_max_pool(CODE[dtype], planes, len(out), view.shape[2:], kernel_size, stride,
                                             before, dilation, out, self._dense(view, dtype), y, where),
                   "max_pool")
        return y, where
