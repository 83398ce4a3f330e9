"""Bits and truth values: the bitwise ops of integer and bool tensors (&, |, ^, ~, <<, >>,
ops.py's primitives bitwise_and, ..., whose C computes in int64 and wraps as PyTorch), gcd and
lcm, and the logical ops of any tensor (nonzero is true), whose results are bool. None is
differentiable."""
from . import dtypes
from .elementwise import binary_kernel, operands, unary, where
from .tensor import Tensor


def _integers(op, a, b, bools=True):
    """a and b as tensors of one integer (or bool) dtype; a float one is PyTorch's error."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}(): expected a tensor operand, got {type(a).__name__} and {type(b).__name__}")
    a, b, _, dtype = operands(a, b)
    if dtype.is_floating_point or (dtype is dtypes.bool_ and not bools):
        raise RuntimeError(f'"{op}" is not implemented for {dtype}: it takes integer'
                           f'{" or bool" if bools else ""} tensors')
    return a.detach(), b.detach()


def _kernel(op, bools=True):
    def function(input, other):  # noqa: A002  (PyTorch's argument names)
        return binary_kernel(op, *_integers(op, input, other, bools))
    function.__name__ = op
    return function


bitwise_and = _kernel("bitwise_and")
bitwise_or = _kernel("bitwise_or")
bitwise_xor = _kernel("bitwise_xor")
bitwise_left_shift = _kernel("bitwise_left_shift", bools=False)
bitwise_right_shift = _kernel("bitwise_right_shift", bools=False)
gcd = _kernel("gcd", bools=False)
lcm = _kernel("lcm", bools=False)


def bitwise_not(x):
    """~x: every bit flipped (an integer); a bool's negation."""
    if x.dtype.is_floating_point:
        raise RuntimeError(f'"bitwise_not" is not implemented for {x.dtype}: it takes integer or bool tensors')
    if x.dtype is dtypes.bool_:
        return x.detach() == False  # noqa: E712  (a comparison of tensors)
    return unary("bitwise_not", x.detach())


def _truth(x):
    return x if isinstance(x, Tensor) and x.dtype is dtypes.bool_ else x != 0


def _check(op, a, b):
    for name, t in (("input", a), ("other", b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(t).__name__}")


def logical_and(input, other):  # noqa: A002
    _check("logical_and", input, other)
    a, b = _truth(input), _truth(other)
    return where(a, b, a)


def logical_or(input, other):  # noqa: A002
    _check("logical_or", input, other)
    a, b = _truth(input), _truth(other)
    return where(a, a, b)


def logical_xor(input, other):  # noqa: A002
    _check("logical_xor", input, other)
    return _truth(input) != _truth(other)


def logical_not(input):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"logical_not(): argument 'input' must be a Tensor, not {type(input).__name__}")
    return input == 0
