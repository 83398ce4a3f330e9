"""PyTorch's global settings and type queries: ``set_default_dtype``, ``set_num_threads``,
``use_deterministic_algorithms``, ``set_float32_matmul_precision``; ``is_tensor``,
``result_type``, ``promote_types``, ``can_cast``, ``iinfo``, ``typename``.

The default dtype is the one a Python float and a factory without ``dtype`` give
(``dtypes.DEFAULT_FOR_KIND[2]``, which the factories and promotion read). The thread count
is the native library's (the device module's ``set_num_threads``, stage 3); with stage2
alone, one thread. The switches for determinism and TF32 products are kept and answered:
tracegrad's kernels are deterministic and compute float32 products in float32 whatever
they say.
"""
import importlib
from typing import NamedTuple

from . import backend, dtypes, legacy_types
from .tensor import Tensor


# ---- the default floating-point dtype --------------------------------------------------------------
def get_default_dtype():
    """The dtype of a Python float in a tensor and of the float factories (float32 at start)."""
    return dtypes.DEFAULT_FOR_KIND[2]


def set_default_dtype(d):
    """Make ``d`` (a floating-point dtype) the default: tensor([1.5]), zeros(2), rand(2), an
    integer tensor times 2.5, and the layers' parameters are then ``d``, as in PyTorch."""
    if not isinstance(d, dtypes.DType) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.DEFAULT_FOR_KIND[2] = d


# ---- threads ---------------------------------------------------------------------------------------
_threads = {"interop": 1}


def _native():
    """The module of device "cpu" (stage 3's C library), or None with stage2 alone."""
    if not backend.available("cpu"):
        return None
    return importlib.import_module(type(backend.get("cpu")).__module__)


def get_num_threads():
    """How many threads the C kernels use (1 without them: device "python" runs in one)."""
    native = _native()
    return native.get_num_threads() if native is not None else 1


def set_num_threads(n):
    """The C kernels' thread count (at least 1); without them, checked and changes nothing."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    native = _native()
    if native is not None:
        native.set_num_threads(n)


def get_num_interop_threads():
    """Threads for running operations side by side: tracegrad runs one at a time."""
    return _threads["interop"]


def set_num_interop_threads(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, got {n!r}")
    _threads["interop"] = n


# ---- switches kept for the scripts that set them ----------------------------------------------------
_switches = {"deterministic": False, "warn_only": False, "matmul_precision": "highest"}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Accepted and answered: every tracegrad kernel gives the same result run after run."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, got {type(mode).__name__}")
    _switches["deterministic"], _switches["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _switches["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _switches["warn_only"]


def set_float32_matmul_precision(precision):
    """"highest", "high" or "medium", kept and answered; float32 products stay float32 (no TF32)."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got {precision!r}")
    _switches["matmul_precision"] = precision


def get_float32_matmul_precision():
    return _switches["matmul_precision"]


# ---- type queries ------------------------------------------------------------------------------------
def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_complex(input):  # noqa: A002  (PyTorch's argument name)
    """False: tracegrad has no complex dtypes."""
    _check_tensor("is_complex", input)
    return False


def promote_types(type1, type2):
    """The dtype an operation on tensors of these two dtypes gives."""
    for d in (type1, type2):
        if not isinstance(d, dtypes.DType):
            raise TypeError(f"promote_types(): expected dtypes, got {d!r}")
    return dtypes.promote(type1, type2)


def result_type(tensor1, tensor2):
    """The dtype of an arithmetic operation on these operands (tensors or numbers), as
    tracegrad's arithmetic promotes them (dtypes.py)."""
    a, b = (x.dtype if isinstance(x, Tensor) else None for x in (tensor1, tensor2))
    if a is not None and b is not None:
        return dtypes.promote(a, b)
    if a is not None:
        return dtypes.promote_scalar(a, tensor2)
    if b is not None:
        return dtypes.promote_scalar(b, tensor1)
    return dtypes.promote(dtypes.infer(tensor1), dtypes.infer(tensor2))


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` into ``to`` (an in-place result into a
    tensor): never to a lower kind (float to int, int to bool)."""
    for d in (from_, to):
        if not isinstance(d, dtypes.DType):
            raise TypeError(f"can_cast(): expected dtypes, got {d!r}")
    return from_.kind <= to.kind


class IInfo(NamedTuple):
    """An integer dtype's limits, as torch.iinfo gives them."""
    bits: int
    min: int
    max: int
    dtype: str


def iinfo(type):  # noqa: A002  (PyTorch's argument name)
    if not isinstance(type, dtypes.DType) or type.kind == 2:
        raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
    bits = type.itemsize * 8
    if type.kind == 0 or type is dtypes.uint8:
        return IInfo(bits, 0, 1 if type.kind == 0 else 255, type.name)
    return IInfo(bits, -(1 << (bits - 1)), (1 << (bits - 1)) - 1, type.name)


def typename(obj):
    """A tensor's type name ('torch.FloatTensor'), else the object's class's full name."""
    if isinstance(obj, Tensor):
        return legacy_types.type_name(obj)
    cls = obj if isinstance(obj, type) else obj.__class__
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _check_tensor(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
