"""Reordering along dimensions: ``flip`` (reversed) and ``roll`` (rotated), PyTorch's
torch.flip and torch.roll. Each is one kernel (kernels/indexing.py), and each is its own
gradient: the upstream gradient flipped back along the same dims, or rolled back by the
opposite shifts.
"""
from .gradient_function import GradientFunction
from .strides import normalize_dim
from .tensor import Tensor


def _dims(op, x, dims):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be a Tensor, not {type(x).__name__}")
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    out = [normalize_dim(d, x.ndim) for d in dims]
    if len(set(out)) != len(out):
        raise ValueError(f"{op}(): dims {dims} name a dimension twice")
    return out


class Flip(GradientFunction):
    def forward(self, x, dims):
        self.dims = dims
        return x.launch("flip", x.as_view(), dims, x.dtype, shape=x.shape, dtype=x.dtype)

    def backward(self, grad):
        return (Flip.apply(grad, self.dims),)


def flip(x, dims):
    """x with the order of elements reversed along each of ``dims``."""
    return Flip.apply(x, tuple(_dims("flip", x, dims)))


class Roll(GradientFunction):
    def forward(self, x, shifts):
        self.shifts = shifts
        return x.launch("roll", x.as_view(), shifts, x.dtype, shape=x.shape, dtype=x.dtype)

    def backward(self, grad):
        return (Roll.apply(grad, tuple((n - s) % n if n else 0 for s, n in zip(self.shifts, grad.shape))),)


def roll(x, shifts, dims=None):
    """x with elements moved ``shifts`` places along ``dims`` (those leaving one end come back
    at the other); without dims, along the flattened tensor, shape kept."""
    if dims is None:
        if not isinstance(shifts, int):
            raise ValueError(f"roll(): without dims, shifts must be one int, got {shifts!r}")
        return roll(x.reshape(-1), shifts, 0).reshape(*x.shape)
    dims = _dims("roll", x, dims)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if len(shifts) != len(dims):
        raise ValueError(f"roll(): shifts and dims must align, got {len(shifts)} shifts and {len(dims)} dims")
    per_dim = [0] * x.ndim
    for s, d in zip(shifts, dims):
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"roll(): shifts must be ints, got {s!r}")
        per_dim[d] = s % x.shape[d] if x.shape[d] else 0
    return Roll.apply(x, tuple(per_dim))
