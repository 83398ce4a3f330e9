"""Tensors of values given by a formula over their positions: ``logspace``, ``vander`` (the
powers of a vector, as columns) and the signal windows of ``torch.*_window`` (Hann,
Hamming, Blackman, Bartlett, Kaiser). Each is a few element-wise operations on an arange,
on the device asked for.
"""
import math

from . import backend, concat, dtypes, factories
from .tensor import Tensor


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """``steps`` values from base ** start to base ** end, their exponents evenly spaced."""
    exponents = factories.linspace(start, end, steps, dtype=dtypes.float64, device=device)
    values = (exponents * math.log(base)).exp() if base > 0 else float(base) ** exponents
    values = values.to(dtype=dtype or dtypes.float32)
    return values.requires_grad_(True) if requires_grad else values


def vander(x, N=None, increasing=False):  # noqa: N803  (PyTorch's argument name)
    """The Vandermonde matrix of a 1-D tensor: column j is x ** (N - 1 - j), or x ** j when
    increasing; N columns (x's length by default). Running products, so a zero's powers
    have gradients (x ** 0 has none)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"vander(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.numel() if N is None else N
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point else dtypes.int64
    x = x.to(dtype=dtype)
    if n == 0:
        return factories.zeros(x.numel(), 0, dtype=dtype, device=x.device)
    ones = factories.ones(x.numel(), 1, dtype=dtype, device=x.device)
    powers = concat.cat([ones, x.unsqueeze(1).expand(x.numel(), n - 1)], 1).cumprod(1) if n > 1 else ones
    return powers if increasing else powers.flip(1)


def _positions(op, window_length, periodic, dtype, device):
    """(n as float64 positions 0..length-1, the formula's denominator N - 1), checked."""
    if isinstance(window_length, bool) or not isinstance(window_length, int) or window_length < 0:
        raise RuntimeError(f"{op} requires non-negative window_length, got window_length={window_length}")
    dtype = dtype or dtypes.float32
    if not dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {dtype}")
    n = factories.arange(window_length, dtype=dtypes.float64, device=device or backend.default_device())
    return n, window_length if periodic else window_length - 1


def _window(op, window_length, periodic, dtype, device, requires_grad, formula):
    n, denominator = _positions(op, window_length, periodic, dtype, device)
    if window_length <= 1:
        values = factories.ones(window_length, dtype=dtypes.float64, device=n.device)
    else:
        values = formula(n, denominator)
    values = values.to(dtype=dtype or dtypes.float32)
    return values.requires_grad_(True) if requires_grad else values


def _cosines(*weights):
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): the generalized cosine windows."""
    def formula(n, denominator):
        out = None
        for k, a in enumerate(weights):
            term = (n * (2 * math.pi * k / denominator)).cos() * (a * (-1) ** k)
            out = term if out is None else out + term
        return out
    return formula


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    """0.5 - 0.5 cos(2 pi n / (N - 1)); N is window_length + 1 when periodic."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _cosines(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _cosines(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """The triangle 1 - |2 n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, denominator: 1 - (n * (2 / denominator) - 1).abs())


def _i0(x):
    """The modified Bessel function I0 of a non-negative float64 tensor, by its series
    sum_k ((x / 2)^k / k!)^2, summed until the terms stop mattering for the largest x."""
    term, total = x * 0 + 1, x * 0 + 1
    half_squared = (x / 2) ** 2
    top = float(x.max().item()) if x.numel() else 0.0
    k = 1
    while (top / 2) ** (2 * k) / math.factorial(k) ** 2 > 1e-17 * math.cosh(top) or k < 2:
        term = term * half_squared / (k * k)
        total = total + term
        k += 1
    return total


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    def formula(n, denominator):
        ratio = n * (2 / denominator) - 1
        inside = (1 - ratio * ratio).relu().sqrt() * beta
        return _i0(inside) / _i0(factories.full((), float(beta), dtype=dtypes.float64, device=n.device))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, formula)
