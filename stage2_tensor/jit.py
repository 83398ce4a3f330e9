"""PyTorch's ``torch.jit``: ``script`` and ``trace`` return the module or function they are
given, unchanged, and ``ignore``, ``unused``, ``export`` are decorators that change nothing.
TorchScript compiles a model for running without Python; tracegrad runs everything in
Python (its compiling is device "cpu:lazy"'s, torch_compat.compile says how), so the
results are the same values PyTorch's scripted model gives, computed as the model is written.
"""

__all__ = ["script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing"]


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """obj itself (a Module or a function); as a decorator, the function unchanged."""
    if obj is None:
        return lambda fn: fn
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """func itself: tracegrad does not record a TorchScript graph. Unlike PyTorch's trace, control
    flow that depends on the values still runs as written for every input."""
    if not callable(func):
        raise TypeError(f"trace: expected a Module or a function, got {type(func).__name__}")
    return func


def ignore(drop=False, **kwargs):
    return drop if callable(drop) else (lambda fn: fn)


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    """False: nothing here runs as TorchScript."""
    return False


def is_tracing():
    return False
