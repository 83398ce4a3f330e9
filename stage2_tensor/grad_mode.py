"""``no_grad()``: run code without recording the graph (optimizer updates, evaluation)."""
import contextlib

_enabled = True


def is_grad_enabled():
    return _enabled


@contextlib.contextmanager
def no_grad():
    global _enabled
    previous, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = previous
