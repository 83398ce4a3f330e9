"""Floor division and remainder: ``floor_divide`` (``//``) and ``remainder`` (``%``), as
PyTorch and Python (chapter 2, "Composite operations").

Composites of the rounding primitive floor (ops.py): the quotient is taken in float64,
where both operands are exact (integers up to 2^53), and floored. The floor is a constant
to autograd (its gradient is 0 almost everywhere, as PyTorch's); remainder a - floor(a / b) b
takes its gradient through a and b (1 and -floor(a / b)). Integers in, integers out.
"""
from . import dtypes
from .data_checks import raise_if_any
from .factories import as_tensor
from .tensor import Tensor


def _operands(op, a, b):
    """(a, b, the result's dtype): tensors on one device, promoted as a + b would be."""
    t = a if isinstance(a, Tensor) else b
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): expected a tensor operand, got {type(a).__name__} and {type(b).__name__}")
    dtype = (a + b).dtype if isinstance(a, Tensor) and isinstance(b, Tensor) else \
        dtypes.promote_scalar(t.dtype, b if t is a else a)
    if not dtype.is_floating_point:     # a tensor's zeros found by a kernel (data_checks.py)
        if not isinstance(b, Tensor):
            if b == 0:
                raise ZeroDivisionError(f"{op}(): integer division by zero")
        else:
            raise_if_any(b == 0, lambda: ZeroDivisionError(f"{op}(): integer division by zero"))
    a = as_tensor(a, dtype=dtype, device=t.device) if not isinstance(a, Tensor) else a
    b = as_tensor(b, dtype=dtype, device=t.device) if not isinstance(b, Tensor) else b
    return a, b, dtype


def floor_divide(a, b):
    """floor(a / b) element-wise (Python's //), in the operands' promoted dtype."""
    return _quotient(*_operands("floor_divide", a, b))


def _quotient(a, b, dtype):
    q = a.detach().to(dtype=dtypes.float64) / b.detach().to(dtype=dtypes.float64)
    return q.floor().to(dtype=dtype)


def remainder(a, b):
    """a - floor(a / b) * b element-wise (Python's %: the sign of b), in the promoted dtype."""
    a, b, dtype = _operands("remainder", a, b)
    q = _quotient(a, b, dtype)
    return a - q * b if dtype.is_floating_point else (a - q * b).to(dtype=dtype)
