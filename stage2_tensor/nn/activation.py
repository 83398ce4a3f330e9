"""Activation modules beyond layers.py's ReLU, Tanh, Sigmoid and GELU, PyTorch's names:
SiLU, LeakyReLU, ELU and Softplus. Each is a thin Module around its function in
functional.py, a composite of differentiable tensor operations (no kernel of its own);
its arguments are checked when the module is built, not at its first forward.
"""
from . import functional as F
from .modules import Module


class SiLU(Module):
    """x * sigmoid(x) (swish), as PyTorch's nn.SiLU."""

    def forward(self, x):
        return F.silu(x)


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x, as PyTorch's nn.LeakyReLU."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        F._check_number(negative_slope, "negative_slope", "LeakyReLU")
        F._no_inplace(inplace, "LeakyReLU")
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """x where x > 0, else alpha * (e^x - 1), as PyTorch's nn.ELU."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        F._check_number(alpha, "alpha", "ELU")
        F._no_inplace(inplace, "ELU")
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, self.alpha)

    def extra_repr(self):
        return f"alpha={self.alpha}"


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
