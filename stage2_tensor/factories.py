"""Making tensors: from Python data, filled, ranges and random (chapter 1, "Tensors").

Random factories draw from one module-level generator; ``seed(n)`` makes them repeat.
"""
import bisect
import contextlib
import itertools
import math
import random as _random

from . import backend, dtypes
from .generators import Generator
from .interop import from_numpy
from .strides import numel
from .tensor import Tensor

_rng = _random.Random(0)


def seed(n):
    """Seed the generator behind rand, randn, uniform, normal (and dropout, init)."""
    _rng.seed(n)


def generator():
    return _rng


def randperm(n, *, generator=None, dtype=None, requires_grad=False, device=None):
    """A random permutation of 0..n-1 (int64 by default), as PyTorch's randperm: drawn from
    ``generator`` (a ``Generator``) when given, else from the package's generator."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative int, got {n!r}")
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"randperm: generator must be a stage2_tensor.Generator or None, got "
                        f"{type(generator).__name__}")
    order = list(range(n))
    (_rng if generator is None else generator._rng).shuffle(order)
    return _make(order, (n,), dtype or dtypes.int64, device or "python", requires_grad)


def _flatten(data):
    """A nested list of numbers as (flat list, shape); ragged nesting is an error."""
    if not isinstance(data, (list, tuple)):
        return [data], ()
    if not data:
        return [], (0,)
    parts = [_flatten(x) for x in data]
    shapes = {shape for _, shape in parts}
    if len(shapes) != 1:
        raise ValueError(f"tensor(): nested lists must be rectangular; found rows of shapes "
                         f"{sorted(shapes)} at the same depth")
    return [v for flat, _ in parts for v in flat], (len(data),) + shapes.pop()


def _infer_dtype(flat):
    kinds = {dtypes.kind_of_scalar(v) for v in flat}
    return dtypes.DEFAULT_FOR_KIND[max(kinds)] if kinds else dtypes.float32


def _make(flat, shape, dtype, device, requires_grad=False):
    buffer = backend.get(device).from_flat(flat, dtype)
    t = Tensor.from_buffer(buffer, shape, dtype, device)
    return t.requires_grad_(True) if requires_grad else t


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new tensor from a number, a nested list of numbers or another tensor (copied).
    Without `dtype`: bool, int64 or float32 by the data, as in PyTorch."""
    if isinstance(data, Tensor):
        out = data.detach().to(device=device or data.device, dtype=dtype or data.dtype)
        out = out if out is not data else out.clone()
        return out.requires_grad_(True) if requires_grad else out
    if hasattr(data, "__array__") and not isinstance(data, (list, tuple)):
        return tensor(from_numpy(data), dtype, requires_grad, device)
    flat, shape = _flatten(data)
    return _make(flat, shape, dtype or _infer_dtype(flat), device or "python", requires_grad)


def as_tensor(x, dtype=None, device=None):
    """x itself when it already is a tensor of that dtype and device; otherwise a tensor."""
    if isinstance(x, (bool, int, float)):      # a Python number in arithmetic: the usual case
        return _make([x], (), dtype or _infer_dtype([x]), device or "python")
    if isinstance(x, Tensor):
        return x.to(device=device, dtype=dtype)
    return tensor(x, dtype=dtype, device=device)


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, int) or s < 0:
            raise ValueError(f"a shape holds non-negative ints, got {size}")
    return tuple(size)


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    size = _shape((size,) if isinstance(size, int) else (tuple(size),))
    dtype, device = dtype or dtypes.infer(fill_value), device or "python"
    buffer = backend.launch(device, "full", numel(size), fill_value, dtype, out_dtype=dtype)
    t = Tensor.from_buffer(buffer, size, dtype, device)
    return t.requires_grad_(True) if requires_grad else t


def zeros(*size, dtype=None, requires_grad=False, device=None):
    return full(_shape(size), 0.0, dtype or dtypes.float32, requires_grad, device)


def ones(*size, dtype=None, requires_grad=False, device=None):
    return full(_shape(size), 1.0, dtype or dtypes.float32, requires_grad, device)


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    if end is None:
        start, end = 0, start
    n = max(0, math.ceil((end - start) / step))
    values = [start + i * step for i in range(n)]
    dtype = dtype or _infer_dtype([start, end, step])
    return _make(values, (n,), dtype, device or "python", requires_grad)


_skip_init = []                # while skip_init is active: [the device its zeros go to]


@contextlib.contextmanager
def skip_init(device=None):
    """Inside ``with skip_init():`` the random factories (rand, randn, uniform, normal, so
    every layer's initialisation) give zeros instead of drawing, on ``device`` when given.
    For building a model whose parameters a checkpoint is about to overwrite: drawing
    GPT-2's 124M initial numbers one by one in Python would take minutes, to be thrown
    away. (PyTorch's torch.nn.utils.skip_init, Hugging Face's no_init_weights.)"""
    _skip_init.append(device)
    try:
        yield
    finally:
        _skip_init.pop()


def _random_tensor(size, draw, dtype, requires_grad, device):
    size = _shape(size)
    if _skip_init:
        return full(size, 0.0, dtype=dtype or dtypes.float32, requires_grad=requires_grad,
                    device=_skip_init[-1] or device)
    return _make([draw() for _ in range(numel(size))], size, dtype or dtypes.float32,
                 device or "python", requires_grad)


def rand(*size, dtype=None, requires_grad=False, device=None):
    """Uniform on [0, 1)."""
    return _random_tensor(size, _rng.random, dtype, requires_grad, device)


def randn(*size, dtype=None, requires_grad=False, device=None):
    """Standard normal."""
    return _random_tensor(size, lambda: _rng.gauss(0.0, 1.0), dtype, requires_grad, device)


def uniform(size, low=0.0, high=1.0, dtype=None, requires_grad=False, device=None, *, generator=None):
    """Uniform on [low, high), from ``generator`` (a Generator) when given."""
    size = (size,) if isinstance(size, int) else tuple(size)
    rng = _source("uniform", generator)
    return _random_tensor(size, lambda: rng.uniform(low, high), dtype, requires_grad, device)


def normal(size, mean=0.0, std=1.0, dtype=None, requires_grad=False, device=None, *, generator=None):
    """N(mean, std^2), from ``generator`` (a Generator) when given."""
    size = (size,) if isinstance(size, int) else tuple(size)
    rng = _source("normal", generator)
    return _random_tensor(size, lambda: rng.gauss(mean, std), dtype, requires_grad, device)


def _source(op, generator):
    """The random.Random to draw from: the generator's, else the package's."""
    if generator is None:
        return _rng
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}: generator must be a stage2_tensor.Generator or None, got "
                        f"{type(generator).__name__}")
    return generator._rng


def _like(fn):
    def like(t, dtype=None, requires_grad=False, device=None, **kw):
        return fn(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad,
                  device=device or t.device, **kw)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"{fn.__name__} with the shape (and by default dtype and device) of t."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(t, fill_value, dtype=None, requires_grad=False, device=None):
    return full(t.shape, fill_value, dtype or t.dtype, requires_grad, device or t.device)



def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    """The n x m (m = n by default) identity: ones on the diagonal, zeros elsewhere."""
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"eye: {name} must be a non-negative int, got {v!r}")
    return _make([1.0 if i == j else 0.0 for i in range(n) for j in range(m)], (n, m),
                 dtype or dtypes.float32, device or "python", requires_grad)


def empty(*size, dtype=None, requires_grad=False, device=None):
    """A tensor whose values are unspecified, as PyTorch's empty: here zeros, since every
    device's memory is made by a kernel anyway (and unspecified may as well be repeatable)."""
    return zeros(*size, dtype=dtype, requires_grad=requires_grad, device=device)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    """``steps`` evenly spaced values from start to end, both included (float32 by default,
    as PyTorch). As PyTorch, the first half counts up from start and the second half down
    from end, so both ends come out exactly."""
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"linspace: {name} must be a number, got {value!r}")
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    values = [start + i * step if i < steps / 2 else end - (steps - 1 - i) * step for i in range(steps)]
    dtype = dtype or dtypes.float32
    return _make([dtype.cast(v) for v in values], (steps,), dtype, device or "python", requires_grad)


def randint(low, high=None, size=None, dtype=None, requires_grad=False, device=None):
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, as PyTorch (int64 by default)."""
    if size is None:                       # randint(high, size): low defaults to 0
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: missing size, e.g. randint(10, (3,)) or randint(0, 10, (3,))")
    for name, value in (("low", low), ("high", high)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"randint: {name} must be an int, got {value!r}")
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got low={low} >= high={high}")
    size = _shape((size,) if isinstance(size, int) else (tuple(size),))
    values = [_rng.randrange(low, high) for _ in range(numel(size))]
    return _make(values, size, dtype or dtypes.int64, device or "python", requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """Category indices drawn from each row of ``input`` (1-D: one distribution; 2-D: one
    per row), as PyTorch's multinomial: the rows are non-negative weights, not necessarily
    normalized (each is divided by its sum). Without ``replacement`` a category once drawn
    is not drawn again in that row, so num_samples may not exceed the row's non-zero
    weights. Returns int64 of shape (num_samples,) or (rows, num_samples) on input's device,
    drawn from ``generator`` (a ``Generator``) when given, else the package's generator
    (``seed``). The numbers differ from PyTorch's for one seed; the distribution is the same."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be a Tensor, not {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial(): prob_dist must be 1 or 2 dim, got shape {input.shape}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial(): expected a floating point tensor of probabilities, got {input.dtype}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
        raise RuntimeError(f"multinomial(): num_samples must be a positive int, got {num_samples!r}")
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"multinomial(): generator must be a stage2_tensor.Generator or None, got "
                        f"{type(generator).__name__}")
    rng = _rng if generator is None else generator._rng
    rows = input.detach().reshape(-1, input.shape[-1]).tolist() if input.shape[-1] else []
    if not rows or not rows[0]:
        raise RuntimeError(f"multinomial(): the distribution has no categories (shape {input.shape})")
    if not replacement and num_samples > len(rows[0]):
        raise RuntimeError(f"multinomial(): cannot sample n_sample ({num_samples}) > prob_dist.size(-1) "
                           f"({len(rows[0])}) samples without replacement")
    out = []
    for r, row in enumerate(rows):
        for w in row:
            if not math.isfinite(w) or w < 0:
                raise RuntimeError(f"multinomial(): probability tensor contains either inf, nan or "
                                   f"element < 0 (row {r}: {w})")
        if sum(row) <= 0:
            raise RuntimeError(f"multinomial(): invalid multinomial distribution (sum of probabilities "
                               f"<= 0) in row {r}")
        if not replacement and sum(1 for w in row if w > 0) < num_samples:
            raise RuntimeError(f"multinomial(): row {r} has {sum(1 for w in row if w > 0)} categories "
                               f"of non-zero probability, fewer than num_samples ({num_samples}) to "
                               "draw without replacement")
        weights = list(row)
        for _ in range(num_samples):
            out.append(_draw(weights, rng))
            if not replacement:
                weights[out[-1]] = 0.0
    shape = (num_samples,) if input.ndim == 1 else (len(rows), num_samples)
    return _make(out, shape, dtypes.int64, input.device)


def _draw(weights, rng):
    """One index drawn with probability weights[i] / sum(weights) (cumulative sums, bisected)."""
    cumulative = list(itertools.accumulate(weights))
    at = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    at = min(at, len(weights) - 1)
    while weights[at] == 0:                    # rounding at the top end: the last non-zero one
        at -= 1
    return at
