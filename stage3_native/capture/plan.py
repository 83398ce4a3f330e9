"""A captured call as a plan: its values and its steps, run again on new buffers.

``run(inputs, live)`` fills a list of buffers (the inputs given, the static ones the trace
kept, a new buffer for each fresh value, made as the device says), then runs the steps in
order: a launch calls its C function with its recorded arguments, each buffer argument
taken from the list (a pointer into one rebuilt at its byte offset); a live point calls
``live(k, buffers)`` (stage2: the syncs, then the Python call) and takes the buffer it
returns. No Python runs between two launches but this loop.

A launch that returns another result than the captured one, or writes another bad entry
into its host out-parameter (CUDA's reporting kernels), stops the replay with a
RuntimeError: what the kernel checks (an index, a target) is data, which the guards do not
see.
"""
from . import memory
from .steps import Launch, LivePoint


class Plan:
    """The steps of a trace, in segments (one, or a compiled forward's and each backward's:
    ``LaunchTrace.mark``); each segment allocates the fresh values first made in it."""

    def __init__(self, trace):
        values, device = trace.values, trace.device
        kinds = values.kinds
        self.device, self.ffi = device, device.ffi
        self.char_p = device.ffi.typeof("char *")
        self.inputs = trace.inputs
        # what show.py prints and draws: each step's buffers, their kinds and blocks, as captured
        self.uses = [s.buffer_values() if isinstance(s, Launch) else list(s.values) for s in trace.steps]
        used = {v for u in self.uses for v in u}    # (a fused kernel's intermediates are in none)
        self.static = [b if kinds[v] == "static" and v in used else None for v, b in enumerate(values.objects)]
        self.kinds = list(kinds)
        self.unshared_bytes, self.where = 0, {}
        self.block_sizes = self._place(trace) if device.block is not None else []
        for step in trace.steps:
            if isinstance(step, Launch):        # static buffers stay in the recorded arguments
                step.refs = [r for r in step.refs if kinds[r[1]] != "static"]
                step.items = [r for r in step.items if kinds[r[2]] != "static"]
        bounds = trace.bounds + [(len(trace.steps), len(values.objects))]
        self.segments = []
        for (first, first_value), (end, end_value) in zip(bounds, bounds[1:]):
            fresh = [(v, *device.fresh(b)) for v, b in enumerate(values.objects)
                     if first_value <= v < end_value and kinds[v] == "fresh"]
            self.segments.append((trace.steps[first:end], fresh))
        self.launches = sum(isinstance(s, Launch) for s in trace.steps)

    def _place(self, trace):
        """The memory plan (memory.py): each static buffer the call made empty gets a block
        the plan owns, written into its launches' arguments once, here; the trace's own
        buffers are let go (the captured call's tensors keep theirs, untouched by replays).
        The blocks' sizes, in bytes."""
        values, cast, char_p = trace.values, self.ffi.cast, self.char_p
        placed = {v for v in trace.empty if values.kinds[v] == "static"}
        spans = memory.lifetimes(trace.steps, placed)
        extents = {v: self.device.extent(values.objects[v]) for v in spans}
        self.unshared_bytes = sum(extents.values())         # what the buffers took, each its own
        where, sizes = memory.pack(spans, extents)
        self.where = where
        blocks = self.memory = [self.device.block(size) for size in sizes]   # the arguments only point

        def pointer(v, offset, ctype):
            ctype = ctype or self.ffi.getctype(self.ffi.typeof(values.objects[v]).item, "*")
            return cast(ctype, cast(char_p, blocks[where[v]]) + offset)

        for step in trace.steps:
            if not isinstance(step, Launch):
                continue
            args = list(step.args)
            for j, v, offset, ctype in step.refs:
                if v in where:
                    args[j] = pointer(v, offset, ctype)
            for j, k, v, offset, ctype in step.items:
                if v in where:
                    if args[j] is step.args[j]:
                        args[j] = list(args[j])
                    args[j][k] = pointer(v, offset, ctype)
            step.args = tuple(args)
        for v in placed:
            self.static[v] = None
        return sizes

    def start(self, inputs):
        """The buffers of one run: the static ones, and the inputs given."""
        buffers = list(self.static)
        for v, b in zip(self.inputs, inputs):
            buffers[v] = b
        return buffers

    def run(self, buffers, live, segment=0):
        steps, fresh = self.segments[segment]
        cast, char_p = self.ffi.cast, self.char_p
        for v, make, args in fresh:
            buffers[v] = make(*args)
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
                    args[j] = b if pointer is None else cast(pointer, cast(char_p, b) + offset)
            if step.items:
                args = self._items(args, step.items, buffers)
            result = step.fn(*args)
            if step.result is not None and result != step.result:
                raise RuntimeError(f"compiled function: {step.name} returned {result} where the captured call "
                                   f"returned {step.result} ({self.device.failure(result)}); "
                                   "run the function without tg.compile for the full error")
            if step.reports:
                _check_reports(step, args)
        return buffers

    def _items(self, args, items, buffers):
        """The arguments with the buffers inside their lists replaced (new lists: the
        recorded ones stay as captured)."""
        args, cast, char_p = list(args), self.ffi.cast, self.char_p
        copied = set()
        for j, k, v, offset, pointer in items:
            if j not in copied:
                args[j] = list(args[j])
                copied.add(j)
            b = buffers[v]
            args[j][k] = b if pointer is None else cast(pointer, cast(char_p, b) + offset)
        return args


def _check_reports(step, args):
    for j, held in step.reports:
        if args[j][0] != held:
            raise RuntimeError(f"compiled function: {step.name} reported {args[j][0]} where the captured call "
                               f"reported {held} (the position of a bad entry, -1 for none: an index or target "
                               "out of range); run the function without tg.compile for the full error")
