"""Making tensors: from Python data, filled, ranges and random (chapter 1, "Tensors").

Random factories draw from one module-level generator; ``seed(n)`` makes them repeat.

Every factory that is given a size checks it before it makes anything (``check_size``):
its sizes as every new tensor's (strides.check_shape), and its bytes against the
machine's memory, so that arange(2**40) is refused at once, naming the bytes, rather than
after filling memory with a Python list. The ranges (arange, linspace, eye) are computed
by the device's kernels from an index (``_positions``), never element by element in Python;
so are the random numbers (rand, randn, uniform, normal, randint, and nn.init through them),
from the state of the Python generator they come from ("Random tensors" below).
"""
import contextlib
import math
import numbers
import os
import random as _random

from . import backend, dtypes
from .backend import View
from .compiled.capture import live
from .data_checks import raise_if_any
from .generators import Generator
from .interop import from_numpy
from .strides import check_shape, numel
from .tensor import Tensor


def host_memory():
    """The bytes of physical memory of this machine, or None where the system cannot say. Read
    with the POSIX names SC_PHYS_PAGES and SC_PAGESIZE, which Linux and macOS both know
    (SC_PAGE_SIZE, Linux's synonym, is missing from some macOS Pythons); Windows has no
    os.sysconf, and a system may not know a name or answer -1 ("indeterminate")."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGESIZE")
    except (AttributeError, OSError, ValueError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


# The most bytes one tensor a factory makes may take: the machine's memory. A larger one
# could only fail, after a long time (a Python list filling memory) or with an error that
# names nothing (MemoryError). It bounds a GPU's tensors too: this package cannot ask a
# GPU how much memory it has.
HOST_MEMORY = host_memory()


def check_size(op, size, dtype):
    """``size`` as a checked shape (strides.check_shape: ints, none negative, within int64)
    whose bytes of ``dtype`` fit in the machine's memory; else RuntimeError naming ``op`` and
    the bytes asked for, as PyTorch's allocator ("tried to allocate N bytes")."""
    shape = check_shape(op, size)
    nbytes = numel(shape) * dtype.itemsize
    if HOST_MEMORY is not None and nbytes > HOST_MEMORY:
        raise RuntimeError(f"{op}(): tried to allocate {nbytes} bytes ({numel(shape)} elements of "
                           f"{dtype.name}, shape {shape}), more than this machine's "
                           f"{HOST_MEMORY} bytes of memory")
    return shape


_rng = _random.Random(0)


_seeds = [0]                # the last seed set: torch.initial_seed()


def seed(n=None):
    """Seed the generator behind rand, randn, uniform, normal (and dropout, init); without
    ``n``, with a seed drawn from the system (torch.seed()), which is returned."""
    if n is None:
        n = _random.SystemRandom().getrandbits(63)
    _rng.seed(n)
    _seeds[0] = n
    return n


def generator():
    return _rng


@live
def random_bits(rng, bits):
    """rng.getrandbits(bits): the seed of a kernel that makes its own random numbers
    (dropout's), drawn again at each replay of a compiled step."""
    return rng.getrandbits(bits)


@live
def randperm(n, *, generator=None, dtype=None, requires_grad=False, device=None):
    """A random permutation of 0..n-1 (int64 by default), as PyTorch's randperm: drawn from
    ``generator`` (a ``Generator``) when given, else from the package's generator."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative int, got {n!r}")
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"randperm: generator must be a stage2_tensor.Generator or None, got "
                        f"{type(generator).__name__}")
    check_size("randperm", (n,), dtype or dtypes.int64)
    order = list(range(n))
    (_rng if generator is None else generator._rng).shuffle(order)
    return _make(order, (n,), dtype or dtypes.int64, device or backend.default_device(), requires_grad)


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
    return dtypes.DEFAULT_FOR_KIND[max(kinds)] if kinds else dtypes.DEFAULT_FOR_KIND[2]


def _make(flat, shape, dtype, device, requires_grad=False):
    buffer = backend.get(device).from_flat(flat, dtype)
    t = Tensor.from_buffer(buffer, shape, dtype, device)
    return t.requires_grad_(True) if requires_grad else t


def tensor(data, dtype=None, requires_grad=False, device=None):
    """A new tensor from a number, a nested list of numbers or another tensor (copied).
    Without `dtype`: bool, int64 or float32 by the data, as in PyTorch."""
    if isinstance(data, Tensor):
        out = data.detach().to(device=device or data.device, dtype=dtype or data.dtype)
        out = out.clone() if out.storage.buffer is data.storage.buffer else out
        return out.requires_grad_(True) if requires_grad else out
    if hasattr(data, "__array__") and not isinstance(data, (list, tuple)):
        return tensor(from_numpy(data), dtype, requires_grad, device)
    flat, shape = _flatten(data)
    return _make(flat, shape, dtype or _infer_dtype(flat), device or backend.default_device(), requires_grad)


def as_tensor(x, dtype=None, device=None):
    """x itself when it already is a tensor of that dtype and device; otherwise a tensor."""
    if isinstance(x, (bool, int, float)):      # a Python number in arithmetic: the usual case
        return _make([x], (), dtype or _infer_dtype([x]), device or backend.default_device())
    if isinstance(x, Tensor):
        return x.to(device=device, dtype=dtype)
    return tensor(x, dtype=dtype, device=device)


def _size_arg(size):
    """zeros(2, 3) and zeros((2, 3)) both mean the shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return size


def _filled(op, size, value, dtype, requires_grad, device):
    """A tensor of ``size`` filled with ``value`` by the device's ``full`` kernel, the size
    checked first (``check_size``, naming ``op``)."""
    size = check_size(op, size, dtype)
    device = device or backend.default_device()
    buffer = backend.launch(device, "full", numel(size), value, dtype, out_dtype=dtype)
    t = Tensor.from_buffer(buffer, size, dtype, device)
    return t.requires_grad_(True) if requires_grad else t


def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    size = size if isinstance(size, (tuple, list)) else (size,)
    return _filled("full", size, fill_value, dtype or dtypes.infer(fill_value), requires_grad, device)


def zeros(*size, dtype=None, requires_grad=False, device=None):
    return _filled("zeros", _size_arg(size), 0.0, dtype or dtypes.DEFAULT_FOR_KIND[2], requires_grad, device)


def ones(*size, dtype=None, requires_grad=False, device=None):
    return _filled("ones", _size_arg(size), 1.0, dtype or dtypes.DEFAULT_FOR_KIND[2], requires_grad, device)


def _positions(n, device):
    """0, 1, ..., n - 1 as int64 on ``device``, made by its kernels rather than by a Python
    loop: the running sums (cumsum) of n ones are 1, 2, ..., n."""
    int64 = dtypes.int64
    ones = backend.launch(device, "full", n, 1, int64, out_dtype=int64)
    counts = backend.launch(device, "cumsum", View(ones, (n,), (1,), 0, int64), 0, int64, out_dtype=int64)
    return Tensor.from_buffer(counts, (n,), int64, device) - 1


def _number(op, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{op}(): {name} must be a number, got {value!r}")


def arange(start, end=None, step=1, dtype=None, requires_grad=False, device=None):
    """start, start + step, ... up to end (left out), as PyTorch's arange: int64 when
    start, end and step are ints, else float32 (unless ``dtype`` says). Element i is
    start + i * step, computed by the device's kernels from an index (in int64, or in
    float64 and rounded to dtype), after the size is checked."""
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        _number("arange", name, value)
    # as Python numbers (numpy's come in too), an int staying exact
    start, end, step = (int(v) if isinstance(v, numbers.Integral) else float(v) for v in (start, end, step))
    if not (math.isfinite(start) and math.isfinite(end)):
        raise ValueError(f"arange(): unsupported range: {start} -> {end} (both ends must be finite)")
    if not (step > 0 or step < 0):                      # zero, or nan
        raise ValueError(f"arange(): step must be nonzero, got {step}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise ValueError(f"arange(): upper bound and larger bound inconsistent with step sign: "
                         f"{start} -> {end} in steps of {step}")
    count = (end - start) / step
    if not math.isfinite(count):                        # the ends too far apart for a float
        raise RuntimeError(f"arange(): {start} -> {end} in steps of {step} makes {count} elements")
    dtype = dtype or _infer_dtype([start, end, step])
    n = check_size("arange", (math.ceil(count),), dtype)[0]
    values = _positions(n, device or backend.default_device())
    if not (isinstance(start, int) and isinstance(step, int)):
        values = values.to(dtype=dtypes.float64)        # as Python's start + i * step
    if step != 1:
        values = values * step
    if start != 0 or step < 0:      # (+ 0 turns the -0.0 of 0 * a negative step into 0.0)
        values = values + start
    values = values.to(dtype=dtype)
    return values.requires_grad_(True) if requires_grad else values


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


def _random_tensor(op, size, draw, dtype, requires_grad, device):
    """A tensor of ``size`` of ``draw()``s, one by one in Python (init.trunc_normal_'s
    inverse distribution function); the factories below draw in a kernel."""
    dtype = dtype or dtypes.DEFAULT_FOR_KIND[2]
    size = check_size(op, size, dtype)
    if _skip_init:
        return full(size, 0.0, dtype=dtype, requires_grad=requires_grad, device=_skip_init[-1] or device)
    return _make([draw() for _ in range(numel(size))], size, dtype, device or backend.default_device(), requires_grad)


# Random tensors. Python's random.Random draws them, but not one call per element: its
# state (getstate: the Mersenne Twister's 624 words and position, and gauss's cached
# value) goes to the device's mt19937 kernel (kernels/random.py), which draws exactly what
# Python's calls would and gives back the state after them, which the generator takes
# (setstate). So the numbers are Python's, bit for bit, for every seed and device, and a
# later Python draw goes on where Python would have; only a native device draws in C.

@live
def _from_generator(rng, device, kernel, *args):
    """Run ``kernel`` of ``device`` from ``rng``'s state, then put rng in the state after."""
    version, state, spare = rng.getstate()
    if kernel == "mt19937_floats":
        buffer, state, spare = backend.launch(device, kernel, state, spare, *args)
    else:
        buffer, state = backend.launch(device, kernel, state, *args)
    rng.setstate((version, state, spare))
    return buffer


def _drawn(op, size, rng, distribution, a, b, dtype, requires_grad, device):
    """A tensor of ``size`` of a + b * x, x rng's random() ("uniform") or its gauss's
    standard normal z ("normal"), as Python's uniform and gauss compute them. Drawn as
    float32 or float64 and rounded to nearest, as a Python float stored in a tensor; a half
    through float32, another dtype from float64, as their conversions of a Python float go."""
    dtype = dtype or dtypes.DEFAULT_FOR_KIND[2]
    size = check_size(op, size, dtype)
    if _skip_init:
        return full(size, 0.0, dtype=dtype, requires_grad=requires_grad, device=_skip_init[-1] or device)
    device = device or backend.default_device()
    drawn_as = dtype if dtype in (dtypes.float32, dtypes.float64) else \
        dtypes.float32 if dtype.is_half else dtypes.float64
    buffer = _from_generator(rng, device, "mt19937_floats", numel(size), distribution, a, b, drawn_as)
    out = Tensor.from_buffer(buffer, size, drawn_as, device)
    out = out if drawn_as is dtype else out.to(dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


def rand(*size, dtype=None, requires_grad=False, device=None):
    """Uniform on [0, 1): the package generator's random()."""
    return _drawn("rand", _size_arg(size), _rng, "uniform", 0.0, 1.0, dtype, requires_grad, device)


def randn(*size, dtype=None, requires_grad=False, device=None):
    """Standard normal: the package generator's gauss(0.0, 1.0)."""
    return _drawn("randn", _size_arg(size), _rng, "normal", 0.0, 1.0, dtype, requires_grad, device)


def uniform(size, low=0.0, high=1.0, dtype=None, requires_grad=False, device=None, *, generator=None):
    """Uniform on [low, high): Python's uniform(low, high), low + (high - low) * random(),
    from ``generator`` (a Generator) when given."""
    size = size if isinstance(size, (tuple, list)) else (size,)
    rng = _source("uniform", generator)
    _number("uniform", "low", low)
    _number("uniform", "high", high)
    return _drawn("uniform", size, rng, "uniform", float(low), float(high - low), dtype, requires_grad, device)


def normal(size, mean=0.0, std=1.0, dtype=None, requires_grad=False, device=None, *, generator=None):
    """N(mean, std^2): Python's gauss(mean, std), from ``generator`` (a Generator) when given."""
    size = size if isinstance(size, (tuple, list)) else (size,)
    rng = _source("normal", generator)
    _number("normal", "mean", mean)
    _number("normal", "std", std)
    return _drawn("normal", size, rng, "normal", float(mean), float(std), dtype, requires_grad, device)


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
    dtype, device = dtype or dtypes.DEFAULT_FOR_KIND[2], device or backend.default_device()
    check_size("eye", (n, m), dtype)
    out = (_positions(n, device).reshape(n, 1) == _positions(m, device).reshape(1, m)).to(dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


def empty(*size, dtype=None, requires_grad=False, device=None):
    """A tensor whose values are unspecified, as PyTorch's empty: here zeros, since every
    device's memory is made by a kernel anyway (and unspecified may as well be repeatable)."""
    return _filled("empty", _size_arg(size), 0.0, dtype or dtypes.DEFAULT_FOR_KIND[2], requires_grad, device)


def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    """``steps`` evenly spaced values from start to end, both included (float32 by default,
    as PyTorch). As PyTorch, the first half counts up from start and the second half down
    from end, so both ends come out exactly."""
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    for name, value in (("start", start), ("end", end)):
        _number("linspace", name, value)
    dtype, f64 = dtype or dtypes.DEFAULT_FOR_KIND[2], dtypes.float64
    check_size("linspace", (steps,), dtype)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    i = _positions(steps, device or backend.default_device()).to(dtype=f64)
    up, down = i * step + start, end - (steps - 1 - i) * step
    # the device's "where" kernel picks up or down (elementwise.where would import this
    # module, which elementwise imports)
    values = up.launch("where", (i < steps / 2).as_view(), up.as_view(), down.as_view(), f64,
                       shape=up.shape, dtype=f64).to(dtype=dtype)
    return values.requires_grad_(True) if requires_grad else values


def randint(low=0, high=None, size=None, dtype=None, requires_grad=False, device=None, *, generator=None):
    """Integers drawn uniformly from [low, high): ``randint(high, size)``,
    ``randint(high, size=size)`` or ``randint(low, high, size)``, as PyTorch (int64 by
    default), from ``generator`` (a Generator) when given."""
    if size is None:                       # randint(high, size): low defaults to 0
        low, high, size = 0, low, high
    elif high is None:                     # randint(high, size=...)
        low, high = 0, low
    if size is None:
        raise TypeError("randint: missing size, e.g. randint(10, (3,)) or randint(0, 10, (3,))")
    for name, value in (("low", low), ("high", high)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"randint: {name} must be an int, got {value!r}")
    if low >= high:
        raise ValueError(f"randint: low must be less than high, got low={low} >= high={high}")
    if low < -(1 << 63) or high > (1 << 63) - 1:
        raise RuntimeError(f"randint: low and high must be int64s (from -2^63 to 2^63 - 1), got low={low}, "
                           f"high={high}")
    dtype = dtype or dtypes.int64
    size = check_size("randint", size if isinstance(size, (tuple, list)) else (size,), dtype)
    rng, device = _source("randint", generator), device or backend.default_device()
    # Python's randrange(low, high), drawn as int64 and converted as a Python int stored
    buffer = _from_generator(rng, device, "mt19937_integers", numel(size), low, high - low, dtypes.int64)
    out = Tensor.from_buffer(buffer, size, dtypes.int64, device)
    out = out if dtype is dtypes.int64 else out.to(dtype=dtype)
    return out.requires_grad_(True) if requires_grad else out


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """Category indices drawn from each row of ``input`` (1-D: one distribution; 2-D: one
    per row), as PyTorch's multinomial: the rows are non-negative weights, not necessarily
    normalized (each is divided by its sum). Without ``replacement`` a category once drawn
    is not drawn again in that row, so num_samples may not exceed the row's non-zero
    weights. Returns int64 of shape (num_samples,) or (rows, num_samples) on input's device,
    drawn from ``generator`` (a ``Generator``) when given, else the package's generator
    (``seed``). The numbers differ from PyTorch's for one seed; the distribution is the same.
    One kernel draws them (kernels/random.py): a row of n weights costs O(n + num_samples log
    n) with replacement, O(n * num_samples) without (each draw sums the row again)."""
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
    categories = input.shape[-1]
    if not input.numel():
        raise RuntimeError(f"multinomial(): the distribution has no categories (shape {input.shape})")
    if not replacement and num_samples > categories:
        raise RuntimeError(f"multinomial(): cannot sample n_sample ({num_samples}) > prob_dist.size(-1) "
                           f"({categories}) samples without replacement")
    shape = check_size("multinomial", input.shape[:-1] + (num_samples,), dtypes.int64)
    weights = input.detach().reshape(-1, categories)
    rows = weights.shape[0]
    # one uniform number per draw, row by row, as the draws were made one at a time before
    # there was a kernel: a seed gives the same categories as it always did
    f64 = dtypes.float64
    uniforms = View(_uniform_numbers(rng, input.device, rows * num_samples), (rows, num_samples),
                    (num_samples, 1), 0, f64)
    drawn, bad = backend.launch(input.device, "multinomial", weights.as_view(), uniforms, bool(replacement),
                                weights.dtype, out_dtype=dtypes.int64)
    bad = Tensor.from_buffer(bad, (), dtypes.int64, input.device)

    def error():                            # (its numbers drawn: a call that raises uses them up)
        row = int(bad.item())
        return backend.bad_distribution(row, weights[row].tolist(), num_samples, replacement)
    raise_if_any(bad >= 0, error)           # the kernel's verdict, read by a kernel
    return Tensor.from_buffer(drawn, shape, dtypes.int64, input.device)


@live
def _uniform_numbers(rng, device, n):
    """n uniform numbers in [0, 1) from rng, a float64 buffer of device: multinomial's, drawn
    again at each replay of a compiled step."""
    return backend.get(device).from_flat([rng.random() for _ in range(n)], dtypes.float64)
