"""The steps of a captured call, in order: a launch (one C function of the device's
library) or a live point (a Python call the replay makes again)."""


class Launch:
    """A C function and its arguments. ``refs`` (index, value, byte offset, pointer type or
    None to pass the buffer itself) say which arguments are buffers; ``items`` (index, item,
    value, byte offset, pointer type) the same for buffers inside a list or tuple argument
    (cat's array of buffers). ``result`` is what it returned when captured (None: nothing to
    check); ``reports`` (index, value) the host out-parameters it wrote (a kernel's bad
    entry on CUDA) and what they held after the captured call."""
    __slots__ = ("name", "fn", "args", "refs", "result", "items", "reports")

    def __init__(self, name, fn, args, refs, result, items=(), reports=()):
        self.name, self.fn, self.args, self.refs, self.result = name, fn, tuple(args), refs, result
        self.items, self.reports = items, reports

    def buffer_values(self):
        """The values of its buffer arguments."""
        return [r[1] for r in self.refs] + [r[2] for r in self.items]

    def __repr__(self):
        return f"Launch({self.name}, buffers {self.buffer_values()})"


class LivePoint:
    """Live call ``k`` of the capture; ``values`` the buffers it returns."""
    __slots__ = ("k", "values")

    def __init__(self, k):
        self.k, self.values = k, []
