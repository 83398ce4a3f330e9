"""cov and corrcoef of variables in rows, observations in columns (numpy's layout and
PyTorch's): cov = (X - mean) (X - mean)^T / (N - correction), with optional integer
frequency weights and real observation weights (numpy's formula), one matmul;
corrcoef = cov / sqrt(var_i var_j), clipped to [-1, 1]. Composites, differentiable."""
from . import dtypes
from .elementwise import where
from .tensor import Tensor


def _observations(op, input):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.ndim > 2:
        raise RuntimeError(f"{op}(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    return x if x.dtype.is_floating_point else x.to(dtype=dtypes.float32)


def _weights(name, w, n, integer):
    if w is None:
        return None
    if not isinstance(w, Tensor) or w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {getattr(w, 'ndim', w)}")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if integer and w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {w.dtype}")
    if not integer and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {w.dtype}")
    if bool((w < 0).any().item()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w.reshape(-1)


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance matrix of the rows (variables) over the columns (observations); a 0-d
    tensor for one variable."""
    x = _observations("cov", input)
    n = x.shape[1]
    fw = _weights("fweights", fweights, n, True)
    aw = _weights("aweights", aweights, n, False)
    w = None
    if fw is not None:
        w = fw.to(dtype=x.dtype)
    if aw is not None:
        w = aw.to(dtype=x.dtype) if w is None else w * aw.to(dtype=x.dtype)
    if w is None:
        total = float(n)
        mean = x.mean(1, keepdim=True)
        factor = total - correction
    else:
        total = w.sum()
        mean = (x * w).sum(1, keepdim=True) / total
        factor = total - (correction * (w * aw.to(dtype=x.dtype)).sum() / total if aw is not None else correction)
    centered = x - mean
    weighted = centered if w is None else centered * w
    factor = factor if isinstance(factor, Tensor) else x.new_zeros(()) + factor
    factor = where(factor < 0, 0.0, factor)
    out = (weighted @ centered.mT) / factor
    return out.reshape(()) if input.ndim < 2 or input.shape[0] == 1 else out


def corrcoef(input):  # noqa: A002
    """Pearson's correlation coefficients of the rows: cov over the product of the rows'
    standard deviations, clipped to [-1, 1]."""
    c = cov(_observations("corrcoef", input))
    if c.ndim == 0:
        return c / c
    d = c.reshape(-1)[::c.shape[0] + 1]
    std = d.sqrt()
    return (c / std.unsqueeze(-1) / std).clamp(-1.0, 1.0)
