"""Where the time of a training step on device "cpu" goes (chapter 6, section 8, "Where the
time of one MNIST step goes").

A step on "cpu" is three kinds of work: the C kernels themselves; the cpu backend's Python
wrapper around each (cpu/backend.py: checking, allocating the output, passing shapes and
strides); and everything outside the backend, stage2's Python (Tensor, broadcasting,
autograd, the nn modules, the optimizer). Two tools measure the split:

* ``StepTimer``, a context manager that times every backend call and every C function
  without a profiler, so the step runs at nearly its own speed. While it is active, each
  public method of the "cpu" backend object is shadowed by a timed version on the instance
  (a Tensor finds its kernels with getattr, so it gets these), and the compiled library that
  cpu/backend.py calls (its module global ``lib``) is replaced by a stand-in that times each
  C function and charges it to the backend call running it. A method called inside another
  (a ``contiguous`` copy inside ``matmul``) counts for the outer one. It also adds up the
  floating-point operations of the matrix products. Leaving it restores both, exceptions
  included.

* ``by_category(stats)``, which sorts a cProfile run (``pstats.Stats``) into the same kinds
  by each function's file, with stage2's ``nn`` modules and optimizer apart from the rest
  of stage2. cProfile sees a cffi function as a built-in of ``stage3_native._native``: that
  is a C kernel. Any other built-in (``dict.get``, ``isinstance``) is charged to the
  categories of its callers, in proportion to its time under each. cProfile's bookkeeping
  slows every Python call down, so under it Python's share grows: the timer gives the
  proportions, cProfile which functions.
"""
import math
import time
from collections import defaultdict
from pathlib import Path

from stage2_tensor import backend

from .cpu import backend as cpu_backend
from .native_backend import own_methods

C_KERNELS = "C kernels"
WRAPPER = "cpu backend (Python)"
OUTSIDE = "outside the backend (stage2)"
STAGE2 = "stage2 Tensor, autograd, dispatch"
STAGE2_MODULES = "stage2 nn modules, optimizer"
CALLER = "the step function"
REPO = Path(__file__).resolve().parents[1]


class StepTimer:
    """Times the backend calls and C functions of device "cpu" while active:

        with StepTimer() as timer:
            for i in range(steps):
                step(i)
        timer.per_call(steps)        # {backend call: (seconds, seconds in C)} per step
        timer.split(seconds, steps)  # C kernels / cpu backend (Python) / outside the backend

    A backend call's key is its method name, with the op for ``unary``, ``binary`` and
    ``reduce`` ("binary add"). ``seconds[key]`` is the time in the call (wrapper and C),
    ``in_c[key]`` the part spent in C functions, ``calls[key]`` the count; ``flops`` adds
    2mkn per matrix product (a (..., m, k) @ b (..., k, n), counted over a's batch)."""

    def __init__(self):
        self.backend = backend.get("cpu")
        self.methods = own_methods(self.backend)
        self.seconds, self.in_c, self.calls = defaultdict(float), defaultdict(float), defaultdict(int)
        self.flops, self.depth, self.key = 0, 0, None
        self._lib = None

    def __enter__(self):
        if isinstance(cpu_backend.lib, _TimedLib):
            raise RuntimeError("a StepTimer is already active: timers do not nest")
        self._lib = cpu_backend.lib
        for name in self.methods:
            setattr(self.backend, name, self._timed_method(name, getattr(self.backend, name)))
        cpu_backend.lib = _TimedLib(self, self._lib)
        cpu_backend.look_up_kernels()           # the backend had looked the C functions up once
        return self

    def __exit__(self, *exc):
        for name in self.methods:
            self.backend.__dict__.pop(name, None)    # the class's methods show through again
        cpu_backend.lib = self._lib
        cpu_backend.look_up_kernels()
        return False

    def _timed_method(self, name, method):
        def call(*args, **kwargs):
            outer = self.depth == 0
            if outer:
                self.key = f"{name} {args[0]}" if name in ("unary", "binary", "reduce") else name
                if name == "matmul":
                    self.flops += 2 * math.prod(args[0].shape) * args[1].shape[-1]
            self.depth += 1
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.depth -= 1
                if outer:
                    self.seconds[self.key] += time.perf_counter() - t0
                    self.calls[self.key] += 1
                    self.key = None
        return call

    def per_call(self, steps=1):
        """{backend call: (seconds, seconds in C)} divided by ``steps``, slowest first."""
        return {key: (self.seconds[key] / steps, self.in_c[key] / steps)
                for key in sorted(self.seconds, key=self.seconds.get, reverse=True)}

    def split(self, seconds, steps=1):
        """The three kinds of work in ``seconds`` (the wall time of the timed steps; both
        divided by ``steps``): C kernels, the backend's Python wrapper, and the rest."""
        in_c, in_backend = sum(self.in_c.values()) / steps, sum(self.seconds.values()) / steps
        return {C_KERNELS: in_c, WRAPPER: in_backend - in_c, OUTSIDE: seconds / steps - in_backend}


class _TimedLib:
    """Stands in for the compiled library: every C function timed, its time charged to the
    backend call running it (``key`` None: outside any, as in a test calling lib itself)."""

    def __init__(self, timer, lib):
        self._timer, self._lib = timer, lib

    def __getattr__(self, name):                # called once per name: setattr caches it
        fn, timer = getattr(self._lib, name), self._timer
        if not callable(fn):
            return fn

        def call(*args):
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                timer.in_c[timer.key] += time.perf_counter() - t0
        setattr(self, name, call)
        return call


def category(func):
    """A cProfile function key (filename, line, name) -> its category, by the file it is
    in; None for a built-in (or generated code) that is not a C kernel."""
    filename, _, name = func
    if filename == "~" or filename.startswith("<"):
        return C_KERNELS if "stage3_native._native" in name else None
    parts = Path(filename).parts
    if "stage3_native" in parts:
        return WRAPPER
    if "stage2_tensor" in parts:
        return STAGE2_MODULES if {"nn", "optim"} & set(parts) else STAGE2
    return CALLER


def by_category(stats):
    """Seconds of own time per category of a ``pstats.Stats`` (or its ``.stats`` dict),
    largest first. A built-in that is not a C kernel has its own time shared among its
    callers' categories in proportion to the time it spent under each."""
    totals = defaultdict(float)
    for func, (_, _, own, _, callers) in getattr(stats, "stats", stats).items():
        where = category(func)
        if where is not None:
            totals[where] += own
            continue
        if not callers:
            totals[CALLER] += own
            continue
        under = {caller: timing[2] for caller, timing in callers.items()}
        if sum(under.values()) == 0:            # too fast to time under each: equal shares
            under = dict.fromkeys(under, 1.0)
        whole = sum(under.values())
        for caller, t in under.items():
            totals[category(caller) or CALLER] += own * t / whole
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def label(func):
    """A cProfile function key as text: a built-in's name, or path:line(name) with the
    path relative to the repository."""
    filename, line, name = func
    if filename == "~":
        return name
    root = str(REPO) + "/"
    return f"{filename.replace(root, '')}:{line}({name})"
