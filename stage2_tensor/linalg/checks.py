"""What every linalg function checks first, with PyTorch's words: a tensor of at least two
dimensions, square matrices, a floating dtype; and LinAlgError, the error of a matrix
that has no answer (singular, not positive-definite), a RuntimeError as in PyTorch."""
from .. import dtypes
from ..tensor import Tensor


class LinAlgError(RuntimeError):
    """A matrix the operation cannot factor or invert (torch.linalg.LinAlgError)."""


def matrices(op, A, name="A"):
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")


def floating_dtype(op, A):
    """float32 or float64: the dtypes the factorizations run in (PyTorch's CPU has no half)."""
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {_torch_name(A.dtype)}")
    if A.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{op}: not implemented for '{_torch_name(A.dtype)}' (float32 and float64 are)")


def square(op, A, name="A", floating=True):
    matrices(op, A, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if floating:
        floating_dtype(op, A)


def _torch_name(dtype):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}.get(dtype.name, dtype.name)


def batch_message(op, index, batched, what):
    """PyTorch's error for matrix number ``index`` (of a batch) that has no answer."""
    where = f"(Batch element {index}): " if batched else ""
    return f"{op}: {where}{what}"
