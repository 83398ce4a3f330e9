"""``no_grad()``: run code without recording the graph (optimizer updates, evaluation)."""
import contextlib

enabled = True                 # read directly by GradientFunction.apply on every operation


def is_grad_enabled():
    return enabled


class no_grad(contextlib.ContextDecorator):
    """``with no_grad():`` (or ``@no_grad()`` on a function) turns recording off. A class
    rather than a generator context manager: it is entered on every optimizer step and
    backward pass, and this is the cheaper kind to enter."""

    def __enter__(self):
        global enabled
        self.previous, enabled = enabled, False

    def __exit__(self, *exc):
        global enabled
        enabled = self.previous
