"""``no_grad()``: run code without recording the graph (optimizer updates, evaluation)."""
import contextlib

enabled = True                 # read directly by GradientFunction.apply on every operation


def is_grad_enabled():
    return enabled


@contextlib.contextmanager
def no_grad():
    global enabled
    previous, enabled = enabled, False
    try:
        yield
    finally:
        enabled = previous
