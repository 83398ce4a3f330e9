"""Activation modules beyond layers.py's ReLU, Tanh, Sigmoid and GELU, PyTorch's names:
SiLU, LeakyReLU, PReLU, ELU and Softplus. Each is a thin Module around its function in
functional.py, a composite of differentiable tensor operations (no kernel of its own);
its arguments are checked when the module is built, not at its first forward. ``inplace``
as PyTorch's (stage2_tensor/inplace.py says what it writes).
"""
from .. import factories
from . import functional as F
from .modules import Module, Parameter


class SiLU(Module):
    """x * sigmoid(x) (swish), as PyTorch's nn.SiLU."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.silu(x, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x, as PyTorch's nn.LeakyReLU."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        F._check_number(negative_slope, "negative_slope", "LeakyReLU")
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """x where x > 0, else a * x, with the slope a learned: one for all channels, or one per
    channel (num_parameters = the input's size in dimension 1), starting at ``init``, as
    PyTorch's nn.PReLU. Its weight is a parameter like any other (weight decay included)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be a positive int, got {num_parameters!r}")
        F._check_number(init, "init", "PReLU")
        self.num_parameters = num_parameters
        self.weight = Parameter(factories.full((num_parameters,), float(init), dtype=dtype, device=device))

    def forward(self, x):
        return F.prelu(x, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(Module):
    """x where x > 0, else alpha * (e^x - 1), as PyTorch's nn.ELU."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        F._check_number(alpha, "alpha", "ELU")
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x):
        return F.elu(x, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """log(1 + e^(beta x)) / beta, and x itself where beta x > threshold, as PyTorch's
    nn.Softplus."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        F._check_number(beta, "beta", "Softplus")
        F._check_number(threshold, "threshold", "Softplus")
        if beta == 0:
            raise ValueError("Softplus: beta must be non-zero (the output is divided by it)")
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"
