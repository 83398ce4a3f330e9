"""PyTorch's other names for what tracegrad already does: ``x.add(y, alpha=2)``,
``x.multiply(y)``, ``torch.mul(x, y)``, ``torch.transpose(x, 0, 1)``, ``x.clip(0, 1)``,
``x.ravel()``, ``x.is_cuda``, ``x.new_full((2,), 3.0)``. Nothing here computes: each name
calls the operation that does, so that a program ported by changing its imports finds the
spelling it was written with.

Three tables. ``AliasMethods`` are Tensor's methods that add an argument to an operator
(``add``'s ``alpha``, ``div``'s ``rounding_mode``) or read what the tensor already knows
(``nbytes``, ``is_signed``); ``METHOD_ALIASES`` are methods that are another name for one
(``multiply`` is ``mul``); ``FUNCTIONS`` are the methods as ``torch.X(input, ...)``
functions, made by ``torch_compat._functional`` as its own are.
"""
from . import concat, dtypes, factories, logical, methods, rounding
from .elementwise import where
from .grad_mode import no_grad
from .tensor import Tensor
from .torch_compat import _functional


class AliasMethods:
    """Methods whose operation is elsewhere; ``methods.bind`` puts each onto Tensor."""

    # ---- arithmetic by name, with PyTorch's extra arguments ---------------------------------
    def add(self, other, *, alpha=1):
        """self + alpha * other."""
        return self + _scaled("add", self, other, alpha)

    def sub(self, other, *, alpha=1):
        """self - alpha * other."""
        return self - _scaled("sub", self, other, alpha)

    def rsub(self, other, *, alpha=1):
        """other - alpha * self (torch.rsub: the operands of sub swapped)."""
        return other - _scaled("rsub", self, self, alpha)

    def mul(self, other):
        return self * other

    def div(self, other, *, rounding_mode=None):
        """self / other; rounding_mode "trunc" rounds the quotient toward zero, "floor" down
        (both keep an integer dtype, as PyTorch; their gradient is 0)."""
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return rounding.floor_divide(self, other)
        if rounding_mode == "trunc":
            return _trunc_divide(self, other)
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"{rounding_mode!r}")

    def true_divide(self, other):
        return self / other

    def positive(self):
        """self itself (unary +); a bool tensor is an error, as PyTorch."""
        if self.dtype is dtypes.bool_:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    __pos__ = positive

    # ---- shapes -------------------------------------------------------------------------------
    def reshape_as(self, other):
        methods._check_tensor("reshape_as", other)
        return self.reshape(other.shape)

    def ravel(self):
        """The elements as one row: a view where the layout allows, else a copy."""
        return self.reshape(-1)

    def ndimension(self):
        return self.ndim

    def is_same_size(self, other):
        methods._check_tensor("is_same_size", other)
        return self.shape == other.shape

    # ---- what the tensor knows about itself -----------------------------------------------------
    @property
    def itemsize(self):
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self):
        """Bytes of this view's elements (numel * itemsize), not of its whole storage."""
        return self.numel() * self.dtype.itemsize

    @property
    def is_cuda(self):
        """On a GPU device: "cuda", or "cuda-emu", its kernels emulated on the CPU."""
        return self.device.startswith("cuda")

    @property
    def is_cpu(self):
        """In the host's memory: devices "python", "cpu" and "cpu:lazy"."""
        return not self.is_cuda

    def get_device(self):
        """The GPU's index (0, the one tracegrad drives) for a GPU tensor, -1 for a host one."""
        return 0 if self.is_cuda else -1

    def is_signed(self):
        """Whether the dtype holds negative numbers: all but bool and uint8."""
        return self.dtype not in (dtypes.bool_, dtypes.uint8)

    def is_nonzero(self):
        """The one element's truth, as bool(x); a tensor of another size is an error."""
        n = self.numel()
        if n != 1:
            what = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self.item())

    # ---- new tensors like this one --------------------------------------------------------------
    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of ``size`` with this dtype and device unless told; tracegrad fills it with
        zeros (PyTorch leaves it uninitialized: a program must not read it first anyway)."""
        return self.new_zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return factories.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """A tensor of ``data`` (copied), with this tensor's dtype and device unless told."""
        return factories.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                                requires_grad=requires_grad)

    # ---- autograd -------------------------------------------------------------------------------
    def detach_(self):
        """Cut this tensor from the graph, in place: it becomes a leaf that requires no grad."""
        self.grad_fn, self.requires_grad = None, False
        return self

    # ---- moving ---------------------------------------------------------------------------------
    def cuda(self, device=None, non_blocking=False):
        """This tensor on device "cuda" (tracegrad drives one GPU: device None, 0 or "cuda")."""
        if device not in (None, 0, "cuda", "cuda:0"):
            raise RuntimeError(f"cuda(): tracegrad drives one GPU, device 0; got {device!r}")
        return self.to("cuda")

    # ---- the functions of a tensor and another, as methods --------------------------------------
    def where(self, condition, y):
        """self where condition is true, else y (torch.where(condition, self, y))."""
        return where(condition, self, y)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return logical.allclose(self, other, rtol, atol, equal_nan)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return logical.isclose(self, other, rtol, atol, equal_nan)

    def equal(self, other):
        return logical.equal(self, other)


# Another name for a method, as PyTorch spells it: name -> the method it is.
METHOD_ALIASES = {
    "absolute": "abs", "negative": "neg", "multiply": "mul", "subtract": "sub", "divide": "div",
    "clip": "clamp", "clip_": "clamp_", "greater": "gt", "greater_equal": "ge", "less": "lt",
    "less_equal": "le", "not_equal": "ne",
}

# Tensor's methods that PyTorch also has as torch.X(input, ...).
FUNCTIONS = (
    "add", "sub", "mul", "div", "rsub", "true_divide", "multiply", "subtract", "divide", "negative",
    "positive", "absolute", "clip", "clip_", "clamp_", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "eq", "ne", "lt", "le", "gt", "ge", "clone", "detach", "detach_", "numel", "reshape",
    "permute", "transpose", "t", "all", "any", "broadcast_to", "index_select", "is_floating_point",
    "is_nonzero", "is_same_size", "ravel", "fill_", "zero_", "index_put_", "get_device", "is_signed",
    # in-place forms (inplace_methods.py) that PyTorch also has as functions
    "abs_", "neg_", "negative_", "exp_", "expm1_", "log_", "log1p_", "sqrt_", "rsqrt_", "square_", "sigmoid_",
    "tanh_", "relu_", "sin_", "cos_", "erf_", "floor_", "ceil_", "round_", "trunc_", "clamp_min", "clamp_max",
    "clamp_min_", "clamp_max_",
)


def _scaled(op, x, other, alpha):
    """alpha * other, checked as PyTorch: a float alpha needs a floating-point input."""
    if alpha is None or isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError(f"{op}(): argument 'alpha' must be a number, not {type(alpha).__name__}")
    if isinstance(alpha, float) and not x.dtype.is_floating_point and not _is_float(other):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    return other if alpha == 1 else other * alpha


def _is_float(x):
    return x.dtype.is_floating_point if isinstance(x, Tensor) else isinstance(x, float)


def _trunc_divide(a, b):
    """a / b rounded toward zero, in the operands' promoted dtype (floor_divide's way: the
    quotient in float64, a constant to autograd)."""
    a, b, dtype = rounding._operands("div", a, b)
    with no_grad():
        q = a.to(dtype=dtypes.float64) / b.to(dtype=dtypes.float64)
    return q.trunc().to(dtype=dtype)


def bind():
    """Put the methods and their other names onto Tensor."""
    methods.bind(Tensor, AliasMethods)
    for name, target in METHOD_ALIASES.items():
        setattr(Tensor, name, vars(Tensor)[target])


def functions():
    """name -> function: the torch.X forms of FUNCTIONS and PyTorch's other names of tracegrad's
    functions (concat, concatenate)."""
    out = {name: _functional(name, f"the method {name}") for name in FUNCTIONS}
    out["concat"] = out["concatenate"] = concat.cat
    return out


bind()
