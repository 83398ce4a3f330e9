"""Reordering along dimensions: ``flip`` (reversed) and ``roll`` (rotated), PyTorch's
torch.flip and torch.roll. flip is one kernel (kernels/indexing.py's ``flip``), its own
gradient: the upstream gradient flipped back along the same dims. roll is an
``index_select`` per dimension with a constant index (views.constant_tensor, made once per
size), so its gradient is index_select's own: the upstream gradient scattered back to
where each element came from.
"""
from . import views
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
    for s, d in zip(shifts, dims):
        n = x.shape[d]
        if n == 0:
            continue
        s %= n
        index = views.constant_tensor(("roll", n, s), x.device, [(i - s) % n for i in range(n)])
        x = views.IndexSelect.apply(x, d, index)
    return x
