"""The in-place forms of Tensor's operations, PyTorch's trailing underscore: ``x.exp_()``,
``x.pow_(2)``, ``x.clamp_min_(0)``, ``x.tril_()``, ``x.t_()``, ``x.unsqueeze_(0)``.

Each is its operation's result written into the tensor, as methods.py's ``add_`` and
``clamp_`` are: ``_check_inplace`` first (a tensor autograd needs is not written: a leaf that
requires grad, or one in the graph, is an error, so a gradient never reads overwritten
values), then ``_write``, which bumps the storage's version. The result must fit the tensor
as PyTorch requires: the tensor's shape (``x.pow_(y)`` may not broadcast x) and a dtype
the tensor can hold (``exp_`` of an integer tensor is an error, not a silent truncation).

The shape methods (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``) write no element:
they give the tensor the layout of the view they name, as PyTorch does.
"""
from . import methods
from .tensor import Tensor

# Operations whose in-place form is "compute, then write": name_ calls name.
WRITTEN = (
    "abs", "neg", "exp", "log", "sqrt", "rsqrt", "square", "sigmoid", "tanh", "relu", "sin", "cos",
    "floor", "ceil", "round", "trunc", "sign", "expm1", "log1p", "erf", "pow", "clamp_min", "clamp_max",
    "cumsum", "cumprod", "tril", "triu", "floor_divide", "remainder", "eq", "ne", "lt", "le", "gt", "ge",
)

# Operations whose in-place form gives the tensor a new layout, writing nothing.
RELAID = ("t", "transpose", "squeeze", "unsqueeze")

# Other names of in-place forms: name -> the method it is.
INPLACE_ALIASES = {
    "absolute_": "abs_", "negative_": "neg_", "multiply_": "mul_", "subtract_": "sub_", "divide_": "div_",
    "true_divide_": "div_", "greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_", "less_equal_": "le_",
    "not_equal_": "ne_",
}


class ClampMethods:
    """clamp with one bound, as PyTorch names it."""

    def clamp_min(self, min):  # noqa: A002  (PyTorch's argument name)
        return self.clamp(min=min)

    def clamp_max(self, max):  # noqa: A002
        return self.clamp(max=max)


def written(name):
    """``name_``: ``name``'s result written into the tensor, checked as PyTorch checks it."""
    op = name + "_"

    def method(self, *args, **kwargs):
        self._check_inplace(op, *args, *kwargs.values())
        out = getattr(self, name)(*args, **kwargs)
        check_fits(op, self, out)
        return self._write(op, out)
    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"{name}, written into this tensor."
    return method


def relaid(name):
    """``name_``: the tensor given the layout of ``name``'s view of it."""
    op = name + "_"

    def method(self, *args):
        self._check_inplace(op)
        view = getattr(self, name)(*args)
        self.set_layout(view.storage, view.shape, view.strides, view.offset, view.dtype)
        return self
    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"This tensor given the layout of its {name} view, in place."
    return method


def check_fits(op, x, out):
    """What PyTorch requires of an in-place result: x's shape, and a dtype x can hold (a float
    result in an integer tensor, or a number in a bool one, would lose what it computed)."""
    if out.shape != x.shape:
        raise RuntimeError(f"{op}: output with shape {list(x.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    if out.dtype.kind > x.dtype.kind:
        raise RuntimeError(f"{op}: result type {out.dtype.name} can't be cast to the desired output type "
                           f"{x.dtype.name}")


def bind():
    methods.bind(Tensor, ClampMethods)
    for name in WRITTEN:
        setattr(Tensor, name + "_", written(name))
    for name in RELAID:
        setattr(Tensor, name + "_", relaid(name))
    for name, target in INPLACE_ALIASES.items():
        setattr(Tensor, name, vars(Tensor)[target])


bind()
