"""Activation modules beyond layers.py's ReLU, Tanh, Sigmoid and GELU, PyTorch's names:
SiLU, LeakyReLU, PReLU, ELU, Softplus, ReLU6, Hardtanh, Hardsigmoid, Hardswish, Mish, SELU,
CELU, Softsign, LogSigmoid, Tanhshrink, Softmin, Softmax2d, Softshrink, Hardshrink,
Threshold, GLU, RReLU, LocalResponseNorm, AlphaDropout and FeatureAlphaDropout. Each is a thin Module around its function in
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


class _Elementwise(Module):
    """An activation of F with no argument but ``inplace``."""
    function = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self).function(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU6(_Elementwise):
    """min(max(x, 0), 6), as PyTorch's nn.ReLU6."""
    function = staticmethod(F.relu6)


class Hardsigmoid(_Elementwise):
    """relu6(x + 3) / 6, as PyTorch's nn.Hardsigmoid."""
    function = staticmethod(F.hardsigmoid)


class Hardswish(_Elementwise):
    """x * relu6(x + 3) / 6, as PyTorch's nn.Hardswish."""
    function = staticmethod(F.hardswish)


class Mish(_Elementwise):
    """x * tanh(softplus(x)), as PyTorch's nn.Mish."""
    function = staticmethod(F.mish)


class SELU(_Elementwise):
    """Scaled ELU with Klambauer et al.'s constants, as PyTorch's nn.SELU."""
    function = staticmethod(F.selu)


class Hardtanh(Module):
    """x clamped to [min_val, max_val], as PyTorch's nn.Hardtanh."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None or max_value is not None:
            raise ValueError("Hardtanh: min_value and max_value are deprecated; use min_val and max_val")
        F._check_number(min_val, "min_val", "Hardtanh")
        F._check_number(max_val, "max_val", "Hardtanh")
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class CELU(Module):
    """x where x > 0, else alpha (e^(x / alpha) - 1), as PyTorch's nn.CELU."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        F._check_number(alpha, "alpha", "CELU")
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softsign(Module):
    """x / (1 + |x|), as PyTorch's nn.Softsign."""

    def forward(self, input):
        return F.softsign(input)


class LogSigmoid(Module):
    """log(sigmoid(x)), as PyTorch's nn.LogSigmoid."""

    def forward(self, input):
        return F.logsigmoid(input)


class Tanhshrink(Module):
    """x - tanh(x), as PyTorch's nn.Tanhshrink."""

    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(Module):
    """softmax(-x) along dim, as PyTorch's nn.Softmin."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels at each position of a (N, C, H, W) or (C, H, W) input, as
    PyTorch's nn.Softmax2d."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input of 3 or 4 dimensions, got {input.ndim}")
        return F.softmax(input, -3)


class _Shrink(Module):
    function = None

    def __init__(self, lambd=0.5):
        super().__init__()
        F._check_number(lambd, "lambd", type(self).__name__)
        self.lambd = lambd

    def forward(self, input):
        return type(self).function(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, 0 between, as PyTorch's nn.Softshrink."""
    function = staticmethod(F.softshrink)


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0, as PyTorch's nn.Hardshrink."""
    function = staticmethod(F.hardshrink)


class Threshold(Module):
    """x where x > threshold, else value, as PyTorch's nn.Threshold."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        F._check_number(threshold, "threshold", "Threshold")
        F._check_number(value, "value", "Threshold")
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """a * sigmoid(b) of the input's two halves along dim, as PyTorch's nn.GLU."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class RReLU(Module):
    """Randomized leaky ReLU: negative slopes drawn from [lower, upper) in training, their
    mean in evaluation, as PyTorch's nn.RReLU."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        F._check_number(lower, "lower", "RReLU")
        F._check_number(upper, "upper", "RReLU")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class LocalResponseNorm(Module):
    """Each element divided by (k + alpha / size * the sum of squares over its ``size``
    neighbouring channels)^beta, as PyTorch's nn.LocalResponseNorm."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _AlphaDropout(Module):
    function = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self).function(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(_AlphaDropout):
    """Dropout that keeps SELU's mean and variance, as PyTorch's nn.AlphaDropout."""
    function = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_AlphaDropout):
    """Alpha dropout of whole channels, as PyTorch's nn.FeatureAlphaDropout."""
    function = staticmethod(F.feature_alpha_dropout)


class CrossMapLRN2d(LocalResponseNorm):
    """LocalResponseNorm of 4-d inputs (PyTorch's legacy name)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        return super().forward(input)
