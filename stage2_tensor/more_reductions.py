"""PyTorch's reductions beyond sum, mean, max and the spreads: prod, nansum and nanmean,
aminmax, var_mean and std_mean, mode, quantile and nanquantile, and diff, each composed of
kernels that exist (the running product, sort, gather, cummax), so every device runs them
and autograd differentiates them.

- prod is the last of the running products along the dimension: one pass, and its gradient
  is cumprod's, which follows PyTorch's rule where there are zeros (the product of the
  others at a lone zero, 0 everywhere with two or more).
- mode, quantile and nanquantile sort each row once (n log n) and gather from the sorted
  values: mode counts each run of equal values with a running maximum of where runs start.
"""
from collections import namedtuple

from . import dtypes, factories
from .concat import cat
from .cumulative import cummax, cumprod
from .elementwise import where
from .reduce import normalize_dims
from .sorting import sort
from .statistics import std, var
from .strides import normalize_dim
from .tensor import Tensor

AminmaxResult = namedtuple("aminmax", "min max")
ModeResult = namedtuple("mode", "values indices")
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_tensor(op, x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, not {type(x).__name__}")


def _single_dim(op, x, dim):
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise TypeError(f"{op}(): argument 'dim' must be an int, not {type(dim).__name__}")
    return normalize_dim(dim, max(x.ndim, 1))


def prod(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002  (PyTorch's argument names)
    """The product of the elements (along ``dim``): integers and bools as int64, unless
    ``dtype`` says otherwise; of nothing, 1."""
    _check_tensor("prod", input)
    dtype = dtype or (input.dtype if input.dtype.is_floating_point else dtypes.int64)
    x = input.to(dtype=dtype)
    if dim is None:
        if x.numel() == 0:
            return factories.ones((), dtype=dtype, device=x.device)
        return cumprod(x.reshape(-1), 0)[-1]
    dim = _single_dim("prod", x, dim)
    if x.ndim == 0:
        return x.clone()
    n = x.shape[dim]
    if n == 0:
        shape = list(x.shape)
        shape[dim] = 1
        out = factories.ones(tuple(shape), dtype=dtype, device=x.device)
    else:
        out = cumprod(x, dim).narrow(dim, n - 1, 1)
    return out if keepdim else out.squeeze(dim)


def nansum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """sum, the nans counted as 0."""
    _check_tensor("nansum", input)
    x = input if dtype is None else input.to(dtype=dtype)
    if x.dtype.is_floating_point:
        x = where(x != x, 0.0, x)
    return x.sum(dim=dim, keepdim=keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """The mean of the elements that are not nan (of none: nan)."""
    _check_tensor("nanmean", input)
    x = input if dtype is None else input.to(dtype=dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {x.dtype}")
    kept = x == x
    return where(kept, x, 0.0).sum(dim=dim, keepdim=keepdim) / kept.to(dtype=x.dtype).sum(dim=dim, keepdim=keepdim)


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002
    """(min, max): amin and amax, over ``dim`` or every element."""
    _check_tensor("aminmax", input)
    if input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity")
    dims = () if dim is None else _single_dim("aminmax", input, dim)
    return AminmaxResult(input.amin(dims, keepdim), input.amax(dims, keepdim))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """(var, mean), var with var's arguments."""
    _check_tensor("var_mean", input)
    if isinstance(dim, bool):                   # var_mean(x, False): the older overload
        dim, unbiased = None, dim
    return (var(input, dim, unbiased, keepdim, correction=correction),
            input.mean(dim=normalize_dims(input, dim), keepdim=keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """(std, mean), std with std's arguments."""
    _check_tensor("std_mean", input)
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return (std(input, dim, unbiased, keepdim, correction=correction),
            input.mean(dim=normalize_dims(input, dim), keepdim=keepdim))


def _positions(shape, device):
    """0, 1, ..., n - 1 along the last dimension, as int64, broadcast to ``shape``."""
    return factories.arange(shape[-1], device=device).expand(*shape)


def mode(input, dim=-1, keepdim=False):  # noqa: A002
    """(values, indices): the most frequent value along ``dim`` and where it last occurs; of
    values equally frequent, the smallest, as PyTorch."""
    _check_tensor("mode", input)
    dim = _single_dim("mode", input, dim)
    if input.ndim == 0:
        return ModeResult(input.clone(), factories.zeros((), dtype=dtypes.int64, device=input.device))
    n = input.shape[dim]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    values, indices = sort(input, dim, stable=True)
    values, indices = values.transpose(dim, -1), indices.transpose(dim, -1)
    start = factories.ones((*values.shape[:-1], 1), dtype=dtypes.bool_, device=input.device)
    starts = cat([start, values[..., 1:] != values[..., :-1]], -1)
    at = _positions(values.shape, input.device)
    run = at - cummax(where(starts, at, 0), -1).values           # how far into its run of equals
    best = run.argmax(-1, keepdim=True)         # the first longest run ends there: the smallest value
    values, indices = values.gather(-1, best), indices.gather(-1, best)
    values, indices = values.transpose(dim, -1), indices.transpose(dim, -1)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return ModeResult(values, indices)


def _quantile(op, input, q, dim, keepdim, interpolation, skip_nan):  # noqa: A002
    _check_tensor(op, input)
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got {input.dtype}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{op}() interpolation must be one of {', '.join(INTERPOLATIONS)}. "
                         f"Got {interpolation!r}")
    scalar = not isinstance(q, Tensor)
    if scalar:
        if isinstance(q, bool) or not isinstance(q, (int, float)):
            raise TypeError(f"{op}(): q must be a float or a tensor, not {type(q).__name__}")
        q = factories.tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape {q.shape}")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor, got {q.dtype} "
                               f"and {input.dtype}")
        scalar = q.ndim == 0
        q = q.detach().reshape(-1)
    if q.numel() and not (bool((q >= 0).all().item()) and bool((q <= 1).all().item())):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if dim is None:
        x, kept_shape = input.reshape(-1), (1,) * input.ndim
    else:
        d = _single_dim(op, input, dim)
        x = input.reshape(1) if input.ndim == 0 else input.transpose(d, -1)
        kept_shape = tuple(1 if i == d else s for i, s in enumerate(input.shape))
        if input.ndim == 0:
            kept_shape = ()
    n = x.shape[-1]
    if n == 0:
        raise IndexError(f"{op}() input tensor must be non-empty")
    ordered = sort(x, -1).values                                  # nans last
    last = ordered[..., -1:]
    if skip_nan:
        count = (ordered == ordered).to(dtype=input.dtype).sum(-1, keepdim=True)
        rank = q * (count - 1)                                    # (..., Q)
        missing = count == 0
    else:
        rank = (q * (n - 1)).expand(*ordered.shape[:-1], q.numel())
        missing = last != last                                    # a nan in the row: nan
    if interpolation == "nearest":
        rank = rank.round()
    low, high = rank.floor(), rank.ceil()
    top = float(n - 1)
    low_i, high_i = (r.clamp(0, top).to(dtype=dtypes.int64) for r in (low, high))
    below, above = ordered.gather(-1, low_i), ordered.gather(-1, high_i)
    if interpolation in ("lower", "nearest"):
        out = below
    elif interpolation == "higher":
        out = above
    elif interpolation == "midpoint":
        out = below + (above - below) * 0.5
    else:
        out = below + (above - below) * (rank - low)
    out = where(missing, float("nan"), out)                       # (..., Q)
    out = out.permute(out.ndim - 1, *range(out.ndim - 1))         # (Q, ...)
    if keepdim:
        out = out.reshape(q.numel(), *kept_shape)
    elif dim is not None and input.ndim:
        rest = tuple(s for i, s in enumerate(input.shape) if i != normalize_dim(dim, input.ndim))
        out = out.reshape(q.numel(), *rest)
    else:
        out = out.reshape(q.numel())
    return out[0] if scalar else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002
    """The q-th quantiles (q a number or 1-D tensor in [0, 1]) along ``dim`` (None: of every
    element), between the sorted values as ``interpolation`` says; a row with a nan gives
    nan. A tensor q puts its dimension first."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):  # noqa: A002
    """quantile of the elements that are not nan (of none: nan)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    """The n-th forward difference along ``dim``, out[i] = x[i + 1] - x[i] applied n times,
    after prepend and append are joined on (bools: whether neighbours differ)."""
    _check_tensor("diff", input)
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RuntimeError(f"order must be non-negative but got {n!r}")
    dim = normalize_dim(dim, input.ndim)
    pieces = [t for t in (prepend, input, append) if t is not None]
    for t in pieces:
        _check_tensor("diff", t, "prepend/append")
    x = cat(pieces, dim) if len(pieces) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        later, earlier = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = later != earlier if x.dtype is dtypes.bool_ else later - earlier
    return x
