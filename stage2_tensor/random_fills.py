"""PyTorch's other random draws: ``torch.bernoulli``, ``torch.poisson``, ``randint_like`` and
the in-place fills ``bernoulli_``, ``random_``, ``exponential_``, ``geometric_``,
``log_normal_`` and ``cauchy_`` (bound onto Tensor in methods.py).

Each is tensor operations on numbers the random factories draw (factories.uniform, normal
and the mt19937 integer kernel), so they come from the package's generator, or from
``generator=`` where PyTorch takes one, and ``manual_seed`` repeats them on every device;
none loops over elements in Python. Continuous draws are made in float64 from uniforms u in
[0, 1) and rounded to the tensor's dtype once: 1 - u is never 0 there, so no draw is
infinite, which a float32 uniform rounded up to 1 could make. As PyTorch's in-place fills
they are outside the graph; torch.bernoulli and torch.poisson give tensors that do not
require grad (PyTorch's carry a gradient of zeros).
"""
import math
import warnings

from . import dtypes, factories
from .data_checks import raise_if_any
from .strides import numel
from .tensor import Tensor

_F64 = dtypes.float64

# the largest integer each floating dtype holds with every integer below it: 2^digits
_FLOAT_DIGITS = {dtypes.float16: 11, dtypes.bfloat16: 8, dtypes.float32: 24, dtypes.float64: 53}
_INT_RANGE = {dtypes.bool_: (0, 1), dtypes.uint8: (0, 255), dtypes.int8: (-128, 127),
              dtypes.int16: (-(1 << 15), (1 << 15) - 1), dtypes.int32: (-(1 << 31), (1 << 31) - 1),
              dtypes.int64: (-(1 << 63), (1 << 63) - 1)}


def _uniforms(t, generator, op):
    """float64 uniforms in [0, 1) of t's shape on t's device."""
    return factories.uniform(tuple(t.shape), dtype=_F64, device=t.device, generator=_checked(op, generator))


def _checked(op, generator):
    factories._source(op, generator)        # refuses what is not a Generator
    return generator


def _real(op, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}(): argument '{name}' must be a number, not {type(value).__name__}")
    return float(value)


def _continuous(op, t, kind):
    """PyTorch's refusal of a draw of a continuous distribution into an integer tensor."""
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{kind} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {t.dtype.name} ({op})")


# ---- bernoulli ------------------------------------------------------------------------------

def _probability(op, p):
    """p as a float in [0, 1], or a float tensor whose every element is (one check on the device)."""
    if isinstance(p, Tensor):
        if not p.dtype.is_floating_point:
            raise NotImplementedError(f"{op}: p must be a floating-point tensor of probabilities, got {p.dtype}")
        p = p.detach()
        if p.numel():                   # nan fails too; checked by a kernel (data_checks.py)
            raise_if_any(p.clamp(0, 1) != p, lambda: RuntimeError(f"{op}: expected every probability p to be in [0, 1]"))
        return p
    p = _real(op, "p", p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{op} expects p to be in [0, 1], but got p={p}")
    return p


def _bernoulli_draws(t, p, generator, op):
    """1.0 where a uniform u of t's shape is below p (so p = 0 never, p = 1 always), else 0.0."""
    return (_uniforms(t, generator, op) < p).to(dtype=_F64)


def bernoulli(input, p=None, *, generator=None):  # noqa: A002
    """0s and 1s of input's shape and dtype, each 1 with probability input's element (or
    ``p``, a float, for every element when given), as PyTorch's torch.bernoulli."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"bernoulli(): expected a floating-point tensor of probabilities, got {input.dtype}")
    if p is None:
        p = _probability("bernoulli", input)
    else:
        p = _probability("bernoulli_", p)
    return _bernoulli_draws(input, p, generator, "bernoulli").to(dtype=input.dtype)


def bernoulli_(t, p=0.5, *, generator=None):
    """Fill t with 0s and 1s, each 1 with probability p (a float, or a tensor of
    probabilities broadcast to t's shape), as PyTorch's Tensor.bernoulli_; any dtype."""
    p = _probability("bernoulli_", p)
    if isinstance(p, Tensor):
        if len(p.shape) > len(t.shape) or any(size not in (1, want) for size, want in
                                              zip(reversed(p.shape), reversed(t.shape))):
            raise RuntimeError(f"bernoulli_: p of shape {tuple(p.shape)} does not broadcast to the tensor's "
                               f"shape {tuple(t.shape)}")
        p = p.to(device=t.device).broadcast_to(t.shape)
    return t._write("bernoulli_", _bernoulli_draws(t, p, generator, "bernoulli_"))


# ---- integers ---------------------------------------------------------------------------------

def _integer_bound(op, name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}(): argument '{name}' must be an int, not {type(value).__name__}")
    return value


def _top(dtype):
    """The largest value random_ draws by default: a floating dtype's 2^digits, an integer's maximum."""
    return 1 << _FLOAT_DIGITS[dtype] if dtype in _FLOAT_DIGITS else _INT_RANGE[dtype][1]


def _check_range(op, low, top, dtype):
    """PyTorch's checks of a range [low, top] of random_'s: an integer dtype must hold both
    ends; a floating dtype beyond 2^digits cannot hold every integer drawn (a warning)."""
    if dtype in _FLOAT_DIGITS:
        digits = _FLOAT_DIGITS[dtype]
        for what, value in (("from", low), ("to - 1", top)):
            if not -(1 << digits) <= value <= 1 << digits:
                warnings.warn(f"{op}: {what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                              f"limitations {dtype.name} can support discrete uniform distribution only within "
                              "this range", UserWarning, stacklevel=3)
        return
    smallest, largest = _INT_RANGE[dtype]
    for what, value in (("from", low), ("to - 1", top)):
        if not smallest <= value <= largest:
            raise RuntimeError(f"{op}: {what} is out of bounds for {dtype.name} ([{smallest}, {largest}])")


def _integers(op, shape, low, top, dtype, device, generator):
    """Integers uniform on [low, top], both ends included, of ``shape``, as int64 (a tensor
    of another dtype converts them): Python's randrange drawn by the mt19937 kernel."""
    if top - low + 1 > (1 << 64) - 1:
        raise RuntimeError(f"{op}: a range of 2^64 integers is not supported (from={low}, to={top + 1})")
    shape = factories.check_size(op, shape, dtypes.int64)
    rng = factories._source(op, generator)
    buffer = factories._from_generator(rng, device, "mt19937_integers", numel(shape), low, top - low + 1, dtypes.int64)
    return Tensor.from_buffer(buffer, shape, dtypes.int64, device)


def _random_range(op, frm, to, dtype):
    """random_'s range [low, top]: random_() the dtype's (see _top), random_(to) [0, to),
    random_(from, None) [from, the dtype's top], random_(from, to) [from, to)."""
    frm = _integer_bound(op, "from", frm)
    if to is None:
        top = _top(dtype)
        if frm > top:
            raise RuntimeError(f"{op} expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                               f"casted to dtype, but got from={frm} > to_inc={top}")
    else:
        to = _integer_bound(op, "to", to)
        if frm >= to:
            raise RuntimeError(f"{op} expects 'from' to be less than 'to', but got from={frm} >= to={to}")
        top = to - 1
    _check_range(op, frm, top, dtype)
    return frm, top


def random_(t, *args, generator=None, **kwargs):
    """Fill t with integers uniform on a range, as PyTorch's Tensor.random_: ``random_()``
    [0, 2^digits] for a floating dtype (every integer there is exact), [0, max] for an
    integer one; ``random_(to)`` [0, to); ``random_(from, to)`` [from, to), ``to=None``
    meaning the dtype's top, as above."""
    frm, to = _from_to(args, kwargs)
    if to is None and "to" not in kwargs and len(args) == 1:       # random_(to)
        frm, to = 0, frm
    low, top = _random_range("random_", frm, to, t.dtype)
    return t._write("random_", _integers("random_", tuple(t.shape), low, top, t.dtype, t.device, generator))


def _from_to(args, kwargs):
    """random_'s arguments, from and to, by position or by name (``from`` is a Python keyword)."""
    unknown = set(kwargs) - {"from", "to"}
    if unknown or len(args) > 2:
        raise TypeError(f"random_() takes from=0, to=None and generator; got {len(args)} positional "
                        f"arguments{' and ' + ', '.join(sorted(unknown)) if unknown else ''}")
    names = ("from", "to")[:len(args)]
    if set(names) & set(kwargs):
        raise TypeError(f"random_() got multiple values for {', '.join(sorted(set(names) & set(kwargs)))}")
    given = dict(zip(names, args), **kwargs)
    return given.get("from", 0), given.get("to")


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,  # noqa: A002
                 requires_grad=False):
    """Integers uniform on [low, high) of input's shape, and by default its dtype and device,
    as PyTorch's randint_like(input, high) and randint_like(input, low, high)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"randint_like(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if high is None:
        low, high = 0, low
    low, high = _integer_bound("randint_like", "low", low), _integer_bound("randint_like", "high", high)
    dtype, device = dtype or input.dtype, device or input.device
    low, top = _random_range("random_", low, high, dtype)
    out = _integers("randint_like", tuple(input.shape), low, top, dtype, device, generator).to(dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


# ---- continuous and counting distributions ---------------------------------------------------------

def exponential_(t, lambd=1.0, *, generator=None):
    """Fill t with Exponential(lambd) draws, -log(1 - u) / lambd."""
    lambd = _real("exponential_", "lambd", lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _continuous("exponential_", t, "Exponential")
    return t._write("exponential_", -(-_uniforms(t, generator, "exponential_")).log1p() / lambd)


def geometric_(t, p, *, generator=None):
    """Fill t with Geometric(p) draws on {1, 2, ...}, the trials up to the first success:
    floor(log(1 - u) / log(1 - p)) + 1 (1 - u in (0, 1]); any dtype but bool, as PyTorch's."""
    p = _real("geometric_", "p", p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    if t.dtype is dtypes.bool_:
        raise NotImplementedError("geometric_: not implemented for bool tensors")
    trials = ((-_uniforms(t, generator, "geometric_")).log1p() / math.log1p(-p)).floor() + 1
    return t._write("geometric_", trials)


def log_normal_(t, mean=1.0, std=2.0, *, generator=None):
    """Fill t with exp(N(mean, std^2)) draws."""
    mean, std = _real("log_normal_", "mean", mean), _real("log_normal_", "std", std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    _continuous("log_normal_", t, "Log-normal")
    z = factories.normal(tuple(t.shape), mean, std, dtype=_F64, device=t.device,
                         generator=_checked("log_normal_", generator))
    return t._write("log_normal_", z.exp())


def cauchy_(t, median=0.0, sigma=1.0, *, generator=None):
    """Fill t with Cauchy(median, sigma) draws, median + sigma * tan(pi * (u - 1/2))."""
    median, sigma = _real("cauchy_", "median", median), _real("cauchy_", "sigma", sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _continuous("cauchy_", t, "Cauchy")
    angle = (_uniforms(t, generator, "cauchy_") - 0.5) * math.pi
    return t._write("cauchy_", angle.sin() / angle.cos() * sigma + median)


def poisson(input, generator=None):  # noqa: A002
    """Poisson draws with input's rates (float, each >= 0), as PyTorch's torch.poisson:
    distributions/poisson.py's sampler (inversion below rate 10, PTRS above), run in float64
    and rounded to input's dtype; an infinite rate gives inf."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"poisson(): expected a floating-point tensor of rates, got {input.dtype}")
    from .distributions.poisson import sample_poisson   # (distributions import the whole package)
    rate = input.detach().to(dtype=_F64)
    if rate.numel() and not bool((rate >= 0).all().item()):            # nan fails too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    infinite = rate == math.inf
    finite = rate.masked_fill(infinite, 0.0)
    counts = sample_poisson(finite, generator=_checked("poisson", generator))
    return counts.masked_fill(infinite, math.inf).to(dtype=input.dtype)
