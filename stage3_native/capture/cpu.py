"""Capture on device "cpu": the stand-ins go where cpu/backend.py reaches its library, in
its module globals (``lib``, ``ffi``, ``allocate``, ``zeros``: the backend's methods call
them directly, and ``look_up_kernels`` refills its tables of C functions from ``lib``).

A buffer is a cffi array, which knows its size; a pointer the trace never saw is read in
place when it is such an array (an outside constant), and not followed when it is a bare
pointer. Contents Python puts in a buffer (``from_flat``, ``from_bytes``, ``zeros``) are
recorded as launches that put them there again, so a reused buffer starts each replay as
it did.
"""
from .._native import ffi
from ..cpu import backend as cpu
from . import fusion
from .device import CaptureDevice
from .stand_ins import MakingFfi, RecordingLib, making

GLOBALS = ("lib", "ffi", "allocate", "zeros")


class CpuCapture(CaptureDevice):
    ffi = ffi

    def install(self, trace):
        if type(cpu.lib).__name__ in ("RecordingLib", "_TimedLib"):
            raise RuntimeError("a capture cannot start while the library is swapped (a StepTimer, "
                               "another capture)")
        self._saved = {name: getattr(cpu, name) for name in GLOBALS}
        cpu.lib = RecordingLib(trace, self._saved["lib"])
        cpu.ffi = self.be.ffi = MakingFfi(self.ffi, trace.allocated)
        cpu.allocate = self.be.allocate = making(self._saved["allocate"], trace.allocated, count=0)
        cpu.zeros = self._zeros(trace)
        cpu.look_up_kernels()

    def uninstall(self):
        for name in ("ffi", "allocate"):
            self.be.__dict__.pop(name, None)
        for name, saved in self._saved.items():
            setattr(cpu, name, saved)
        cpu.look_up_kernels()

    def extent(self, buffer):
        return self.ffi.sizeof(buffer)

    def is_buffer(self, x):
        return isinstance(x, self.ffi.CData) and self.ffi.typeof(x).kind == "array"

    def owner(self, pointer):
        return pointer if self.ffi.typeof(pointer).kind == "array" else None

    def fresh(self, buffer):
        ffi = self.ffi
        make = ffi.new if ffi.sizeof(buffer) < cpu.SMALL_BYTES else cpu._new
        return make, (ffi.typeof(buffer), len(buffer))

    def block(self, nbytes):
        ffi = self.ffi
        return ffi.new("char[]", nbytes) if nbytes < cpu.SMALL_BYTES else cpu._new(ffi.typeof("char[]"), nbytes)

    def returned(self, trace, name, out):
        if name in ("from_flat", "from_bytes"):
            ffi = self.ffi
            trace.again("memmove", ffi.memmove, (out, bytes(ffi.buffer(out)), ffi.sizeof(out)))

    def fuse(self, trace):
        if fusion.enabled:
            fusion.fuse(trace)

    def failure(self, result):
        return "an index or target out of range, or no memory"

    def _zeros(self, trace):
        zeros, fill = self._saved["zeros"], self._saved["lib"].tg_fill

        def recorded(n, dtype):
            out = zeros(n, dtype)
            if trace.recording:
                trace.again("tg_fill", fill, (out, cpu.CODE[dtype], n, 0.0, 0))
            return out
        return recorded

