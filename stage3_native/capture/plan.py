"""A captured call as a plan: its values and its steps, run again on new buffers.

``run(inputs, live)`` fills a list of buffers (the inputs given, the static ones the trace
kept, a new buffer for each fresh value), then runs the steps in order: a launch calls its C
function with its recorded arguments, each buffer argument taken from the list (a pointer
into one rebuilt at its byte offset); a live point calls ``live(k, buffers)`` (stage2: the
syncs, then the Python call) and takes the buffer it returns. No Python runs between two
launches but this loop.
"""
from ..cpu import backend as cpu

ffi = cpu.ffi
CHAR_P = ffi.typeof("char *")


class Launch:
    """A C function and its arguments; ``refs`` (index, value, byte offset, pointer type or
    None to pass the buffer itself) say which arguments are buffers; ``result`` is what it
    returned when captured (None: nothing to check)."""
    __slots__ = ("name", "fn", "args", "refs", "result")

    def __init__(self, name, fn, args, refs, result):
        self.name, self.fn, self.args, self.refs, self.result = name, fn, tuple(args), refs, result

    def __repr__(self):
        return f"Launch({self.name}, buffers {[v for _, v, _, _ in self.refs]})"


class LivePoint:
    """Live call ``k`` of the capture; ``values`` the buffers it returns."""
    __slots__ = ("k", "values")

    def __init__(self, k):
        self.k, self.values = k, []


class Plan:
    """The steps of a trace, in segments (one, or a compiled forward's and each backward's:
    ``LaunchTrace.mark``); each segment allocates the fresh values first made in it."""

    def __init__(self, trace):
        kinds = trace.kinds
        self.inputs = trace.inputs
        self.static = [b if kinds[v] == "static" else None for v, b in enumerate(trace.objects)]
        for step in trace.steps:
            if isinstance(step, Launch):        # static buffers stay in the recorded arguments
                step.refs = [r for r in step.refs if kinds[r[1]] != "static"]
        bounds = trace.bounds + [(len(trace.steps), len(trace.objects))]
        self.segments = []
        for (first, first_value), (end, end_value) in zip(bounds, bounds[1:]):
            fresh = [(v, ffi.typeof(b), len(b), ffi.sizeof(b)) for v, b in enumerate(trace.objects)
                     if first_value <= v < end_value and kinds[v] == "fresh"]
            self.segments.append((trace.steps[first:end], fresh))
        self.launches = sum(isinstance(s, Launch) for s in trace.steps)

    def start(self, inputs):
        """The buffers of one run: the static ones, and the inputs given."""
        buffers = list(self.static)
        for v, b in zip(self.inputs, inputs):
            buffers[v] = b
        return buffers

    def run(self, buffers, live, segment=0):
        steps, fresh = self.segments[segment]
        for v, ctype, n, size in fresh:
            buffers[v] = ffi.new(ctype, n) if size < cpu.SMALL_BYTES else cpu._new(ctype, n)
        for step in steps:
            if type(step) is LivePoint:
                made = live(step.k, buffers)
                if step.values:
                    buffers[step.values[0]] = made
                continue
            args = step.args
            if step.refs:
                args = list(args)
                for j, v, offset, pointer in step.refs:
                    b = buffers[v]
                    args[j] = b if pointer is None else ffi.cast(pointer, ffi.cast(CHAR_P, b) + offset)
            result = step.fn(*args)
            if step.result is not None and result != step.result:
                raise RuntimeError(f"compiled function: {step.name} returned {result} where the captured call "
                                   f"returned {step.result} (an index or target out of range, or no memory); "
                                   "run the function without tg.compile for the full error")
        return buffers
