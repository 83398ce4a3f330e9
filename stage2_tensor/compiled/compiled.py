"""``tg.compile``: a function, forward, backward and optimizer step included, captured once
and replayed (PyTorch's ``torch.compile``, its names and calling conventions).

Each call first computes its key, the guards: grad mode, every argument's shape, strides,
dtype, device and requires_grad (other arguments by value), the same for every tensor of
the state (state.py) and which of them share memory, and each module's training flag. A key
seen for the first time runs the function eagerly (a warm-up: an optimizer makes its state,
a lazy module its weights); the second time, the call is captured (capture.py) and its
device compiles what it recorded into a plan; from then on the key replays the plan: its
launches, its live calls, the syncs that hand Python the tensors it made. A new key (a new
batch size, eval mode) compiles again, up to ``config.cache_size_limit`` keys per function,
after which it runs eagerly, as PyTorch does.

A device with nothing to compile to (the python device, which runs the function as
written) or a call that cannot be captured (a graph break) runs eagerly for that key; the
python device is the reference a compiled step is tested against.

Not guarded (PyTorch's dynamo guards these; here they are read once, at capture): Python
values the function reads other than its arguments and the modules' training flags (a
global float, a counter), tensors made from Python data inside it (``tensor(list)``), and
attributes of the state replaced by objects that are not tensors. The state a function
reaches is found again at each capture.
"""
import functools
import threading
import warnings

from .. import backend
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor
from .backward import CompiledBackward, capture_backward
from . import capture as capturing
from .capture import Capture, layout, output
from .state import roots, slots

MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class config:                       # noqa: N801  (torch._dynamo.config's name)
    cache_size_limit = 8            # keys compiled per function before it runs eagerly


class _Eager:
    """A key that runs eagerly: seen once (a warm-up), or one that cannot be captured."""
    __slots__ = ("reason",)

    def __init__(self, reason=None):
        self.reason = reason


class CompiledFunction:
    def __init__(self, fn, fullgraph=False):
        self.fn, self.fullgraph = fn, fullgraph
        self.entries = {}
        self.slots = self.modules = self.owners = None
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, owner=None):                 # @tg.compile on a method
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if capturing.active() is not None:              # inside another's capture: part of it
            return self.fn(*args, **kwargs)
        if self.slots is None:
            self._find_state(args, kwargs)
        tensors, key = self._key(args, kwargs)
        entry = self.entries.get(key)
        if isinstance(entry, Replay):
            return entry(tensors)
        if entry is None:
            if len(self.entries) < config.cache_size_limit:
                self.entries[key] = _Eager()            # first call: a warm-up
            elif not self.fullgraph:
                self._warn(f"more than config.cache_size_limit = {config.cache_size_limit} different "
                           "inputs (shapes, dtypes, modes)")
            return self.fn(*args, **kwargs)
        if entry.reason is not None:
            return self.fn(*args, **kwargs)
        return self._capture(key, args, kwargs)

    def _find_state(self, args, kwargs):
        from ..nn.modules import Module
        found = roots(self.fn, args, kwargs)
        self.slots = slots(found)
        self.owners = tuple(id(s.owner) for s in self.slots)    # whose state: part of the key
        self.constants = [t for t in found if isinstance(t, Tensor)]
        self.modules = [m for obj in found if isinstance(obj, Module) for m in obj.modules()]

    def _key(self, args, kwargs):
        """The tensors a replay reads (arguments', then the state's) and the call's guards."""
        tensors, parts = [], [is_grad_enabled()]
        for a in _leaves((args, kwargs)):
            if isinstance(a, Tensor):
                tensors.append(a)
                parts.append(_describe(a))
            else:
                parts.append(_constant(a))
        parts.append(len(tensors))
        for slot in self.slots:
            t = slot.get()
            if isinstance(t, Tensor):
                tensors.append(t)
                parts.append(_describe(t))
            else:
                parts.append(None)
        first = {}
        parts.append(tuple(first.setdefault(id(t.storage.buffer), i) for i, t in enumerate(tensors)))
        parts.append(tuple(m.training for m in self.modules))
        parts.append(self.owners)
        return tensors, tuple(parts)

    def _capture(self, seen, args, kwargs):
        self._find_state(args, kwargs)                  # the state after the warm-up
        tensors, key = self._key(args, kwargs)
        if key != seen:                                 # keyed anew (an optimizer's moments now
            del self.entries[seen]                      # slots too): the warm-up's entry goes
        devices = {t.storage.device for t in tensors}
        be = backend.get(devices.pop()) if len(devices) == 1 else None
        if be is None or not hasattr(be, "capture"):
            reason = ("tensors on several devices" if devices else
                      f"device {be.name!r} runs the function as written" if be else "no tensors")
            self.entries[key] = _Eager(reason)
            return self.fn(*args, **kwargs)
        trace = be.capture([t.storage.buffer for t in tensors])
        trace.known([t.storage.buffer for t in self.constants if t.storage.device == be.name])
        capture = Capture(trace, self.slots, self.fullgraph)
        result = capture.run(self.fn, args, kwargs)
        outputs = list(_leaves(result))
        backward = None
        if capture.broken is None and not capture.backward_ran and any(
                isinstance(t, Tensor) and t.requires_grad for t in outputs):
            n_args = sum(isinstance(a, Tensor) for a in _leaves((args, kwargs)))
            backward = self._capture_backward(capture, tensors, outputs, n_args)
        unfollowed = capture.trace.unfollowed() if capture.broken is None else None
        if unfollowed:
            capture.graph_break(unfollowed)
        if capture.broken is not None:
            self.entries[key] = _Eager(capture.broken)
            self._warn(f"graph break: {capture.broken}")
            return result
        end = capture.changed()
        made = [(capture.trace.value(t.storage.buffer), layout(t)) if isinstance(t, Tensor) else None
                for t in outputs]
        self.entries[key] = Replay(capture, end, result, made, be, backward)
        return result

    def _capture_backward(self, capture, tensors, outputs, n_args):
        """A forward whose outputs require grad: its backward captured too (backward.py), with
        respect to the leaves of the state that require grad (the parameters)."""
        if any(t.requires_grad for t in tensors[:n_args]):
            capture.graph_break("an argument that requires grad (a compiled module's backward reaches "
                                "its parameters only)")
            return None
        first = {}                              # a tied parameter, in two slots, once
        for i, t in enumerate(tensors[n_args:], n_args):
            if t.requires_grad and t.grad_fn is None:
                first.setdefault(id(t), i)
        params = list(first.values())
        return params, capture_backward(capture, tensors, outputs, params)

    def _warn(self, message):
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        warnings.warn(f"tg.compile: {message}; {name} runs eagerly for these inputs", stacklevel=3)


class Replay:
    """A captured call made again: the device's plan, run with the current buffers."""

    def __init__(self, capture, end, result, made, be, backward=None):
        self.plan = capture.trace.plan()
        self.lock = threading.RLock()           # the plan's blocks serve one run at a time
        self.calls, self.syncs, self.end = capture.calls, capture.syncs, end
        self.result, self.made = result, made
        self.device, self.max_dims = be.name, be.max_dims
        self.params, self.backward = backward or (None, ())

    def __call__(self, tensors):
        buffers = self.plan.start([t.storage.buffer for t in tensors])
        with self.lock:
            self.plan.run(buffers, self._live)
        for sync in self.end:
            sync.apply(buffers, self.device, self.max_dims)
        outputs = [None if m is None else output(buffers[m[0]], self.device, self.max_dims, m[1])
                   for m in self.made]
        if self.backward:
            params = tuple(tensors[i] for i in self.params)
            for plan in self.backward:
                out = outputs[plan.index]
                out.requires_grad, out.grad_fn = True, CompiledBackward(self, plan, buffers, params)
        return _rebuild(self.result, iter(outputs))

    def _live(self, k, buffers):
        for sync in self.syncs[k]:
            sync.apply(buffers, self.device, self.max_dims)
        fn, args, kwargs = self.calls[k]
        made = fn(*args, **kwargs)
        return made.storage.buffer if isinstance(made, Tensor) else made


def _describe(t):
    return (t.shape, t.strides, t.offset, t.dtype, t.storage.device, t.requires_grad)


def _constant(a):
    """An argument that is not a tensor, as a guard: its value if it is a plain one, else
    the object itself (by identity)."""
    if a is None or isinstance(a, (bool, int, float, str)):
        return (type(a), a)
    return (type(a), id(a))


def _leaves(tree):
    """The tensors and other values in nested tuples, lists and dicts, in order."""
    if isinstance(tree, (tuple, list)):
        for item in tree:
            yield from _leaves(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from _leaves(item)
    else:
        yield tree


def _rebuild(tree, made):
    """``tree`` with each tensor replaced by the next of ``made``."""
    if isinstance(tree, (tuple, list)):
        items = [_rebuild(item, made) for item in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        return type(tree)((k, _rebuild(v, made)) for k, v in tree.items())
    replaced = next(made)
    return tree if replaced is None else replaced


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, disable=False):
    """``torch.compile``: a function (or a Module: an OptimizedModule) that captures its
    first calls and replays them. ``dynamic`` is accepted; each new shape compiles anew
    (within ``config.cache_size_limit``). ``mode``, ``backend`` and ``options`` choose
    nothing here: there is one compiler."""
    if mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(map(str, MODES[1:]))}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if not callable(model):
        raise TypeError(f"compile: expected a Module or a function, got {type(model).__name__}")
    if disable:
        return model
    from ..nn.modules import Module
    if isinstance(model, Module):
        from .module import OptimizedModule
        return OptimizedModule(model, CompiledFunction(model, fullgraph))
    return CompiledFunction(model, fullgraph)
