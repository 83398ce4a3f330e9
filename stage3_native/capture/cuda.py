"""Capture on the CUDA devices ("cuda", and "cuda-emu": the same kernels on the CPU): the
stand-ins go on the backend object itself, where cuda/backend.py reaches its library
(``self.lib``, ``self.ffi``, ``self.allocate``).

A buffer is a typed device pointer, which does not know its size: the backend notes each
one's bytes when it allocates it (``_nbytes``, weakly), and the trace reads them there, for
the buffers it is given and those made while it records. A pointer the trace never saw is
read in place when it is the start of a buffer the backend allocated (an outside constant),
and not followed otherwise.

Host memory is not a buffer: what the backend makes with ``ffi.new`` or ``ffi.from_buffer``
while the trace records (a reporting kernel's ``i64 *`` bad entry, the values of a copy to
the device) is passed to every replay as it is, so a copy to the device puts the same
values there again, and a scalar out-parameter's value after each replayed launch is
checked against the captured one: a kernel that finds a bad index at replay stops it with
the error the cpu plan gives. Every kernel returns a CUDA status, kept as its result: a
replay that gets an error stops with it. A copy to the host (``tg_cuda_to_host``: a value
read into Python) is a graph break; ``_int64_at`` runs unrecorded, as it only reads a bad
entry for the error that follows.

The plan stays a list of launches, run from Python. On a GPU, PyTorch's
``mode="reduce-overhead"`` goes further and replays the step as a CUDA graph (one launch of
the recorded kernels); that is not done here, as there is no GPU to test it on.
"""
from .device import CaptureDevice
from .stand_ins import MakingFfi, RecordingLib, making

# memory.cu's and cublas.cu's functions that manage memory or describe the device and the
# library: not launches (the allocator's free, in particular, runs whenever Python drops a
# buffer)
UNRECORDED = frozenset(("tg_cuda_device_count", "tg_cuda_device_name", "tg_cuda_error_string", "tg_cuda_malloc",
                        "tg_cuda_free", "tg_cuda_memory_allocated", "tg_cuda_memory_reserved", "tg_cuda_empty_cache",
                        "tg_cuda_has_cublas", "tg_cuda_has_cublas_tf32", "tg_cuda_cublas_load",
                        "tg_cuda_cublas_library", "tg_cuda_cublas_status_name"))


class CudaCapture(CaptureDevice):
    unrecorded = UNRECORDED
    breaks = {"tg_cuda_to_host": "a tensor's values copied from the device into Python"}
    paused_methods = ("_int64_at",)

    def __init__(self, be):
        super().__init__(be)
        self.ffi, self.lib, self.allocate = be.ffi, be.lib, be.allocate
        self.dtypes = {ctype: dtype for dtype, ctype in be._ctype_ptr.items()}    # one per pointer type
        self.host = {}                  # id -> host memory made while recording (kept alive)

    def install(self, trace):
        be = self.be
        if isinstance(be.lib, RecordingLib):
            raise RuntimeError(f"a capture cannot start on device {be.name!r} while another one records")

        def host_made(x, empty):        # host memory: replays pass it as it is, empty or not
            if trace.recording:
                self.host[id(x)] = x
        be.lib = RecordingLib(trace, self.lib, self.unrecorded, self.breaks)
        be.ffi = MakingFfi(self.ffi, host_made, ("new", "from_buffer"))
        be.allocate = making(self.allocate, trace.allocated, count=0)

    def uninstall(self):
        self.be.lib, self.be.ffi = self.lib, self.ffi
        self.be.__dict__.pop("allocate", None)

    def _bytes(self, x):
        """The bytes the backend noted for buffer x, None for anything else."""
        try:
            return self.be._nbytes.get(x)
        except TypeError:               # not something a weak reference can point to
            return None

    def extent(self, buffer):
        return self._bytes(buffer) or 0

    def is_buffer(self, x):
        return self._bytes(x) is not None

    def owner(self, pointer):
        if self._bytes(pointer) is None:       # the noted bytes are found by address
            return None
        return next((b for b in list(self.be._nbytes.keys()) if b == pointer), None)

    def is_host(self, x):
        return id(x) in self.host

    def fresh(self, buffer):
        dtype = self.dtypes[self.ffi.typeof(buffer)]
        return self.allocate, (self._bytes(buffer) // dtype.itemsize, dtype)

    def failure(self, result):
        return f"a CUDA error: {self.ffi.string(self.lib.tg_cuda_error_string(result)).decode()}"
