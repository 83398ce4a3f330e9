"""PyTorch's surface that is not a concept of its own: the names a PyTorch training script
reaches for, kept so that it runs with its imports changed (chapter 4, "Devices"). Each is
a different spelling of something tracegrad does elsewhere, or a switch that changes
nothing here; nothing in this module computes.

    tg.exp(x), tg.sum(x, 1), ...        Tensor's methods as functions (torch.exp, torch.sum)
    tg.cuda.is_available(), ...         torch.cuda's queries, about device "cuda" (the module cuda/)
    tg.backends.cuda.matmul.allow_tf32  torch.backends' switches for libraries tracegrad lacks (backends/)
    tg.device("cuda"), tg.accelerator   torch.device and torch.accelerator: device names
    tg.compile(model)                   torch.compile: captured once, replayed (compiled/)

What PyTorch names that *is* a concept of tracegrad's has its own module: ``amp.py``
(GradScaler, loss scaling), ``generators.py`` (Generator, a stream of random numbers of
its own), ``interop.py`` (numpy), ``serialization.py`` (save, load).

    dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() \\
        else torch.device("cpu")
"""
from types import SimpleNamespace

from . import backend, elementwise
from .tensor import Tensor

# ---- torch.device, torch.accelerator ----------------------------------------------------------
# Tracegrad names a device by a string ("python", "cpu", "cpu:lazy", "cuda", "cuda-emu");
# device("cpu") is that string, so it goes wherever a device name goes (x.to(device),
# zeros(3, device=device)), with PyTorch's ``type`` and ``index``.

builtins_type = type


class device(str):  # noqa: N801  (PyTorch's name)
    """A device name, a str: ``device("cuda")``, ``device("cuda", 0)``, ``device("cuda:0")``
    (tracegrad drives one GPU, so "cuda:0" is "cuda")."""

    def __new__(cls, type, index=None):  # noqa: A002  (PyTorch's argument name)
        if isinstance(type, device):
            return type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a device name such as 'cpu' or 'cuda', got "
                            f"{builtins_type(type).__name__}")
        name, _, given = type.partition(":") if type.startswith("cuda") else (type, "", "")
        if given:
            if index is not None:
                raise ValueError(f"device(): type {type!r} already names an index, and index={index} was given")
            index = int(given) if given.isdigit() else given
        if index not in (None, 0):
            raise ValueError(f"device(): tracegrad drives one GPU, index 0; got index {index!r} for {name!r}")
        self = super().__new__(cls, name)
        self._index = index
        return self

    @property
    def type(self):
        return str(self).split(":")[0]

    @property
    def index(self):
        return self._index

    def __repr__(self):
        return f"device(type={self.type!r}" + (f", index={self._index})" if self._index is not None else ")")

    def __enter__(self):
        """``with device("cuda"):`` makes it the default device inside the block, as PyTorch."""
        _outer_defaults.append(backend._default_device)
        backend.set_default_device(str(self))
        return self

    def __exit__(self, *exc):
        backend.set_default_device(_outer_defaults.pop())


_outer_defaults = []        # the defaults the enclosing ``with device(...)`` blocks replaced


def get_default_device():
    """The device of a tensor made without one: "cpu" where the native library is
    installed, as PyTorch's default is its CPU; "python" with stage2 alone."""
    return device(backend.default_device())


def set_default_device(name):
    """Make ``name`` the device of every tensor and module made without one (None: back to
    the installed default), as PyTorch's set_default_device."""
    backend.set_default_device(None if name is None else str(device(name)))


def _accelerator_available():
    return backend.available("cuda")


def _current_accelerator():
    """device("cuda") where the GPU runs, else None (as PyTorch without an accelerator)."""
    return device("cuda") if _accelerator_available() else None


accelerator = SimpleNamespace(is_available=_accelerator_available,
                              current_accelerator=_current_accelerator,
                              device_count=lambda: 1 if _accelerator_available() else 0)


# ---- torch.cuda, torch.backends: modules of their own (cuda/, backends/), importable as PyTorch's -------------
from . import backends, cuda  # noqa: E402, F401  (tg.cuda.is_available(), tg.backends.cudnn.benchmark)


# ---- torch.compile: capture and replay (compiled/) ----------------------------------------------
from .compiled import compile  # noqa: E402, F401, A004


# ---- Tensor's methods as functions ---------------------------------------------------------------
# ``torch.exp(x)`` is ``x.exp()``, ``torch.sum(x, dim=1)`` is ``x.sum(dim=1)``. Each checks
# that its first argument is a tensor (a plain number gets an error naming the function, not
# an AttributeError from inside it) and calls the method, so an operation is written once,
# in methods.py's table. Last in the file: some shadow Python's builtins (abs, max, min, sum,
# pow, round), which nothing here uses after them.

def _functional(name, what):
    def function(input, *args, **kwargs):  # noqa: A002  (PyTorch's argument name)
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be a Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{what.capitalize()}: input.{name}(...) (PyTorch's torch.{name})."
    return function


exp = _functional("exp", "e to the power of each element")
log = _functional("log", "the natural logarithm of each element")
sqrt = _functional("sqrt", "the square root of each element")
tanh = _functional("tanh", "the hyperbolic tangent of each element")
sigmoid = _functional("sigmoid", "1 / (1 + exp(-x)) of each element")
abs = _functional("abs", "the absolute value of each element")  # noqa: A001
argmax = _functional("argmax", "the index of the largest element (along dim)")
argmin = _functional("argmin", "the index of the smallest element (along dim)")
max = _functional("max", "the largest element; along dim, (values, indices); with a tensor, maximum")  # noqa: A001
min = _functional("min", "the smallest element; along dim, (values, indices); with a tensor, minimum")  # noqa: A001
sum = _functional("sum", "the sum of the elements (along dim)")  # noqa: A001
mean = _functional("mean", "the mean of the elements (along dim)")
var = _functional("var", "the variance (along dim): the squared deviations' sum over n - correction")
std = _functional("std", "the standard deviation (along dim), the square root of var")
flatten = _functional("flatten", "the dimensions start_dim to end_dim as one")
squeeze = _functional("squeeze", "without dimensions of size 1 (or only dim, if it has size 1)")
unsqueeze = _functional("unsqueeze", "with a dimension of size 1 inserted at dim")
maximum = _functional("maximum", "the element-wise larger of two tensors")
minimum = _functional("minimum", "the element-wise smaller of two tensors")
masked_fill = _functional("masked_fill", "value where the bool mask is true, the input elsewhere")
clamp = _functional("clamp", "each element limited to [min, max]")
tril = _functional("tril", "zeros above the diagonal")
triu = _functional("triu", "zeros below the diagonal")
chunk = _functional("chunk", "at most `chunks` views along dim")
pow = _functional("pow", "each element to the power `exponent` (a number or a tensor)")  # noqa: A001
neg = _functional("neg", "minus each element")
relu = _functional("relu", "max(x, 0) of each element")
erf = _functional("erf", "the error function of each element")
log1p = _functional("log1p", "log(1 + x) of each element, exact where x is tiny")
expm1 = _functional("expm1", "e^x - 1 of each element, exact where x is tiny")
sin = _functional("sin", "the sine of each element (radians)")
cos = _functional("cos", "the cosine of each element (radians)")
floor = _functional("floor", "the largest integer not above each element")
ceil = _functional("ceil", "the smallest integer not below each element")
trunc = _functional("trunc", "each element rounded toward zero")
round = _functional("round", "the nearest integer to each element, halves to even")  # noqa: A001
square = _functional("square", "each element times itself")
rsqrt = _functional("rsqrt", "1 / sqrt(x) of each element")
amax = _functional("amax", "the largest element over dim (all by default), values only")
amin = _functional("amin", "the smallest element over dim (all by default), values only")
logsumexp = _functional("logsumexp", "log(sum(exp(x))) over dim, without overflow")
unbind = _functional("unbind", "the slices along dim, each without it")
flip = _functional("flip", "reversed along dims")
roll = _functional("roll", "rotated by shifts along dims")
sign = _functional("sign", "-1, 0 or 1: the sign of each element")
diag = _functional("diag", "a vector on a matrix's diagonal, or a matrix's diagonal as a vector")
lerp = _functional("lerp", "input + weight * (end - input)")
addcmul = _functional("addcmul", "input + value * tensor1 * tensor2")
addcdiv = _functional("addcdiv", "input + value * tensor1 / tensor2")
narrow = _functional("narrow", "the view of length elements from start along dim")
index_put = _functional("index_put", "a copy with values put at an advanced index (added, with accumulate)")
index_add = _functional("index_add", "a copy with alpha * source added at index along dim")
index_copy = _functional("index_copy", "a copy with source's slices at index along dim")
index_fill = _functional("index_fill", "a copy with value at index along dim")
take = _functional("take", "the elements at index of the input read as one row")
take_along_dim = _functional("take_along_dim", "gather with broadcasting (along the flat input without dim)")
masked_select = _functional("masked_select", "the elements where the bool mask is true, as one row")
masked_scatter = _functional("masked_scatter", "a copy with source's elements where the bool mask is true")
nonzero = _functional("nonzero", "the positions of the nonzero elements (count, ndim), or a tuple of columns")
argwhere = _functional("argwhere", "the positions of the nonzero elements (count, ndim)")
count_nonzero = _functional("count_nonzero", "how many elements are nonzero (along dim)")


def where(condition, input=None, other=None):  # noqa: A002  (PyTorch's argument names)
    """input where condition is true, else other (elementwise.where); with the condition
    alone, its nonzero positions as one tensor per dimension (nonzero(as_tuple=True))."""
    if input is None and other is None:
        if not isinstance(condition, Tensor):
            raise TypeError(f"where(): argument 'condition' must be a Tensor, not {type(condition).__name__}")
        return condition.nonzero(as_tuple=True)
    return elementwise.where(condition, input, other)
