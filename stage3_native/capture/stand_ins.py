"""The stand-ins a device puts where its backend reaches the library while a trace records
(as the profiler swaps ``lib`` for a timed one, profile.py)."""
from stage2_tensor.compiled import graph_break


class RecordingLib:
    """Stands in for the compiled library: each C function runs through ``trace.launch``,
    but those in ``unrecorded`` (memory, the device's description: not launches), which run
    as they are, and those in ``breaks`` (name -> reason), a graph break while recording."""

    def __init__(self, trace, lib, unrecorded=frozenset(), breaks=None):
        self._trace, self._lib = trace, lib
        self._unrecorded, self._breaks = unrecorded, breaks or {}

    def __getattr__(self, name):                # called once per name: setattr caches it
        fn, trace = getattr(self._lib, name), self._trace
        if not callable(fn) or name in self._unrecorded:
            return fn
        if name in self._breaks:
            reason = self._breaks[name]

            def call(*args):
                if trace.recording:
                    graph_break(reason)
                return fn(*args)
        else:
            def call(*args):
                return trace.launch(name, fn, args)
        setattr(self, name, call)
        return call


class MakingFfi:
    """Stands in for cffi's ffi: what ``new`` (and the other names in ``makers``) return is
    handed to ``made`` as well."""

    def __init__(self, ffi, made, makers=("new",)):
        self._ffi = ffi
        for name in makers:
            setattr(self, name, making(getattr(ffi, name), made))

    def __getattr__(self, name):
        return getattr(self._ffi, name)


def making(make, made, count=1):
    """``make`` (an allocator, ffi.new), handing what it returns to ``made`` as well, and
    whether it was made empty: argument ``count`` a number of elements (``ffi.new(type,
    n)``; an allocator's ``allocate(n, dtype)``, count=0), not values to hold."""
    def call(*args, **kwargs):
        out = make(*args, **kwargs)
        made(out, len(args) > count and type(args[count]) is int)
        return out
    return call
