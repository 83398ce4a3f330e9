"""What a trace and its plan ask of a device: the one part of capture and replay that
differs between "cpu" (cpu.py) and the CUDA devices (cuda.py).

The recording, the values, the steps, the segments and the replay's loop are the same on
every device; a device says how its library and allocator are reached (to put stand-ins
there while a trace records), what its buffers are and how large, and how a replay makes a
new one:

    install(trace), uninstall()   put the stand-ins in place (every C function through
                                  ``trace.launch``, every buffer made through
                                  ``trace.allocated``), and take them away
    extent(buffer)                the bytes a buffer spans
    is_buffer(x)                  whether x is a buffer of this device (a backend method's
                                  output, what a live call returned)
    owner(pointer)                the buffer a pointer the trace never saw is, read in place
                                  (static), or None: the trace cannot follow it
    is_host(x)                    host memory the trace saw made that is not a buffer (a
                                  CUDA kernel's out-parameter, the values of a copy to the
                                  device): passed to replays as it is
    fresh(buffer)                 (make, args): ``make(*args)`` is a new buffer like it
    returned(trace, name, out)    after backend method ``name`` returned ``out`` while
                                  recording (cpu: contents Python put there, made launches)
    fuse(trace)                   rewrite the trace's steps before the plan is made (cpu:
                                  runs of element-wise launches into generated kernels,
                                  fusion.py); by default nothing
    failure(result)               why a C function may return ``result`` where its
                                  captured call did not, for the replay's error
    block(nbytes)                 a block of memory for the memory plan (memory.py), or
                                  ``block = None``: no memory plan (the trace's buffers
                                  reused as they are)

plus ``ffi``, the library's cffi handle (the real one: the plan casts pointers with it),
``unrecorded`` (C functions that manage memory or describe the device: not launches),
``breaks`` (C function -> the graph break it is) and ``paused_methods`` (backend methods
run unrecorded).
"""


class CaptureDevice:
    ffi = None
    block = None
    unrecorded = frozenset()
    breaks = {}
    paused_methods = ()

    def __init__(self, be):
        self.be = be

    def address(self, buffer):
        return int(self.ffi.cast("uintptr_t", buffer))

    def is_host(self, x):
        return False

    def returned(self, trace, name, out):
        pass

    def fuse(self, trace):
        pass
