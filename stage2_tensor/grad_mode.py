"""Grad mode (chapter 4, "Tensor-level autograd"): whether operations record the graph.

``no_grad()`` turns recording off (optimizer updates, evaluation, the backward pass itself),
``enable_grad()`` turns it back on inside that, ``set_grad_enabled(mode)`` sets it either
way, and ``inference_mode()`` is PyTorch's faster no_grad, here simply no_grad. Each works
in a ``with`` block and as a decorator, as in PyTorch.

The mode belongs to a thread, as in PyTorch: one thread evaluating under no_grad must not
stop another thread's training step from recording its graph. It lives in a
``threading.local``; a thread that has not set it sees the class attribute, so every new
thread starts with grad enabled.
"""
import copy
import functools
import threading


class _ThreadState(threading.local):
    enabled = True                # read by GradientFunction.apply on every operation


thread_state = _ThreadState()


def is_grad_enabled():
    return thread_state.enabled


class _GradMode:
    """Sets this thread's grad mode to ``self.grad`` in a ``with`` block and restores the
    previous one on leaving it; as a decorator, around each call of the function. A class
    rather than a generator context manager: no_grad is entered on every optimizer step and
    backward pass, and this is the cheaper kind to enter."""
    grad = False

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]):     # ``@no_grad`` without parentheses
            return cls()(args[0])
        return super().__new__(cls)

    def __init__(self):
        pass

    def __enter__(self):
        self.previous, thread_state.enabled = thread_state.enabled, self.grad

    def __exit__(self, *exc):
        thread_state.enabled = self.previous

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            # A fresh copy per call, holding that call's previous mode: one decorator shared
            # by a recursive call, or by two threads at once, restores each caller's mode.
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def clone(self):
        return copy.copy(self)


class no_grad(_GradMode):
    """``with no_grad():`` (or ``@no_grad()``): operations record nothing."""
    grad = False


class enable_grad(_GradMode):
    """``with enable_grad():``: operations record again, inside a no_grad."""
    grad = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` sets the mode at once (a plain call, as in PyTorch); in a
    ``with`` block or as a decorator the previous mode comes back on leaving it."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled: expected True or False, got {mode!r}")
        self.grad, self.previous = mode, thread_state.enabled
        thread_state.enabled = mode

    def __enter__(self):                 # the previous mode is the one before __init__
        thread_state.enabled = self.grad

    def __call__(self, func):
        thread_state.enabled = self.previous    # decorating a function changes no mode now
        return super().__call__(func)

    def clone(self):
        return set_grad_enabled(self.grad)


class inference_mode(_GradMode):
    """PyTorch's no_grad that also skips view tracking and version counters; neither costs
    enough here to skip, so it is no_grad. ``inference_mode(False)`` turns grad mode on, as
    PyTorch's does (leaving inference mode means grad enabled)."""

    def __init__(self, mode=True):
        if not isinstance(mode, bool):
            raise TypeError(f"inference_mode: expected True or False, got {mode!r}")
        self.grad = not mode
