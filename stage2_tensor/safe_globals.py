"""Which classes and functions a saved model may name, and finding them when it is loaded
(serialization.py saves a model as its class's name and its attributes).

A file is untrusted, and a model's class is code that runs on the file's data when the
model is called, so ``load`` makes only tracegrad's own classes and functions (of the
modules of stage2_tensor, already imported; none is imported because a file names it) and
those ``add_safe_globals`` allows: PyTorch's ``weights_only=True``, with tracegrad's own
classes known. With ``weights_only=False`` the user trusts the file: any nn.Module class or
function, its module imported as pickle does. Either way a name must be a module's
top-level class or function (no dunder attributes), and a class an nn.Module: nothing else
is ever made or called.
"""
import contextlib
import importlib
import sys
from types import FunctionType

from .nn.modules import Module


def short(value, limit=80):
    """repr(value), cut to `limit` characters (a crafted field may be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def path_of(obj, what, where):
    """'module:qualified.name', by which load finds a class or a function again."""
    qualname = getattr(obj, "__qualname__", "")
    if "<" in qualname or not getattr(obj, "__module__", None):     # <lambda>, <locals>
        raise TypeError(f"save: {where} is the {what} {qualname or obj!r}, defined inside a "
                        "function or as a lambda, which load could not find by name; define it "
                        "at the top level of a module (or save the model's state_dict())")
    return f"{obj.__module__}:{qualname}"


_SAFE = {}                      # 'module:name' -> a class or function add_safe_globals allowed


def add_safe_globals(allowed):
    """Let ``load`` make models of these classes (nn.Module subclasses of the user's) and
    name these functions, as PyTorch's torch.serialization.add_safe_globals."""
    for obj in allowed:
        if not ((isinstance(obj, type) and issubclass(obj, Module)) or isinstance(obj, FunctionType)):
            raise TypeError(f"add_safe_globals: expected nn.Module classes and functions, got {obj!r}")
        _SAFE[path_of(obj, "class" if isinstance(obj, type) else "function", repr(obj))] = obj


@contextlib.contextmanager
def safe_globals(allowed):
    """``add_safe_globals(allowed)`` for the ``with`` block only, as PyTorch's
    torch.serialization.safe_globals."""
    before = dict(_SAFE)
    add_safe_globals(allowed)
    try:
        yield
    finally:
        _SAFE.clear()
        _SAFE.update(before)


def get_safe_globals():
    return list(_SAFE.values())


def clear_safe_globals():
    _SAFE.clear()


def _is_ours(module_name):
    return module_name == "stage2_tensor" or module_name.startswith("stage2_tensor.")


def resolve(path, what, decoder):
    """The class (an nn.Module subclass) or function a saved model names, found by name:
    tracegrad's own (in its modules already loaded) or one add_safe_globals allowed; with
    weights_only=False (``decoder.trusted``), any, its module imported. ``decoder`` (the
    loading's) names the file and makes its errors."""
    module_name, _, qualname = path.partition(":") if isinstance(path, str) else ("", "", "")
    names = (module_name.split(".") if module_name != "__main__" else []) + qualname.split(".")
    if not all(n.isidentifier() and not n.startswith("__") for n in names):     # a script's own: __main__
        raise decoder.corrupt(f"its object names the {what} {short(path)}, expected 'module:name'")
    obj = _SAFE.get(path)
    if obj is None and not _is_ours(module_name) and not decoder.trusted:
        raise RuntimeError(
            f"load: {decoder.where} holds a model of the {what} {module_name}.{qualname}, which is "
            f"not tracegrad's own; loading it would run that code on the file's data. If you "
            f"trust the file, load(path, weights_only=False); or allow the {what} with "
            f"stage2_tensor.serialization.add_safe_globals([{qualname.split('.')[-1]}]); or save "
            "and load the model's state_dict() instead")
    if obj is None:
        try:
            obj = sys.modules.get(module_name) if _is_ours(module_name) else importlib.import_module(module_name)
        except ImportError as err:
            raise RuntimeError(f"load: {decoder.where} names the {what} {module_name}.{qualname}, "
                               f"whose module cannot be imported here ({err})") from None
        for name in qualname.split("."):
            obj = getattr(obj, name, None)
    wanted = (isinstance(obj, type) and issubclass(obj, Module)) if what == "class" else isinstance(obj, FunctionType)
    if not wanted or f"{obj.__module__}:{obj.__qualname__}" != path:
        kind = "an nn.Module class" if what == "class" else "a function"
        raise decoder.corrupt(f"its object names the {what} {path}, which is not {kind} here")
    return obj
