"""Layers (thesis chapter 2, "Neural Networks"): Linear, Embedding, LayerNorm, Dropout, the
activations and the MSE and NLL losses (the others in loss.py), each a thin Module around a function of
``functional.py``. Random initialisation draws from the package's generator, so
``stage2_tensor.seed(n)`` makes a model's initial weights repeat.
"""
import math

from .. import loss_functions
from ..composites import gelu_op
from ..factories import ones, randn, uniform, zeros
from . import functional as F
from .modules import Module, Parameter


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features), b of shape (out_features,).
    Both start uniform on [-1/sqrt(in), 1/sqrt(in)], as in the thesis and PyTorch: with
    inputs of variance about 1, each output then has a variance of about 1/3 however wide
    the layer is. A wide layer does not blow the signal up, but a deep stack of linear or
    tanh layers shrinks it about threefold per layer (chapter 2, "Depth: the variance
    shrinks"); ``init.xavier_uniform_`` (variance 2 / (in + out)) keeps it."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        k = 1 / math.sqrt(in_features)
        self.weight = Parameter(uniform((out_features, in_features), -k, k, dtype=dtype, device=device))
        self.bias = Parameter(uniform((out_features,), -k, k, dtype=dtype, device=device)) if bias else None

    def forward(self, x):
        if x.shape[-1:] != (self.in_features,):
            raise ValueError(f"Linear({self.in_features}, {self.out_features}) expects inputs "
                             f"of shape (..., {self.in_features}), got {x.shape}")
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A table of num_embeddings vectors of size embedding_dim, N(0, 1) at the start; the
    input holds row numbers. Its gradient adds up for a row picked several times."""

    def __init__(self, num_embeddings, embedding_dim, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(randn(num_embeddings, embedding_dim, dtype=dtype, device=device))

    def forward(self, indices):
        return self.weight[indices]                # (*indices.shape, embedding_dim)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Normalise over the last dimension(s) to mean 0 and variance 1, then scale by weight
    (ones at the start) and shift by bias (zeros); ``bias=False`` keeps the scale only."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(ones(*shape, dtype=dtype, device=device)) if elementwise_affine else None
        self.bias = Parameter(zeros(*shape, dtype=dtype, device=device)) if elementwise_affine and bias else None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Zero elements with probability p in training mode (scaling the rest by 1/(1-p));
    the identity after ``model.eval()``."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class ReLU(Module):
    """max(x, 0); ``inplace=True`` writes it into x (stage2_tensor/inplace.py says when)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.relu(x, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, x):
        return x.tanh()


class Sigmoid(Module):
    def forward(self, x):
        return x.sigmoid()


class GELU(Module):
    """GELU: exact, x * Phi(x) (PyTorch's default, approximate="none"), or GPT-2's tanh
    approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) with approximate="tanh"
    (Hugging Face's "gelu_new"). A bad value fails here, not at the first forward."""

    def __init__(self, approximate="none"):
        super().__init__()
        gelu_op(approximate)                    # raises ValueError for an unknown value
        self.approximate = approximate

    def forward(self, x):
        return x.gelu(self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, self.dim)


class Identity(Module):
    """Returns its input: a placeholder where a layer is optional (PyTorch's nn.Identity,
    which accepts and ignores any constructor arguments)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x


class Flatten(Module):
    """Flatten dimensions start_dim..end_dim into one: images (N, 28, 28) to (N, 784)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Flatten's inverse: dimension ``dim`` split into ``unflattened_size``, (N, 784) to
    (N, 28, 28) with Unflatten(1, (28, 28)); one size may be -1 (inferred), as in PyTorch."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        sizes = tuple(unflattened_size) if isinstance(unflattened_size, (tuple, list)) else None
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        if not sizes or not all(isinstance(s, int) and (s >= 0 or s == -1) for s in sizes):
            raise TypeError(f"Unflatten: unflattened_size must be a non-empty tuple of sizes "
                            f"(ints >= 0, or one -1), got {unflattened_size!r}")
        self.dim, self.unflattened_size = dim, sizes

    def forward(self, x):
        dim = self.dim % x.ndim if -x.ndim <= self.dim < x.ndim else None
        if dim is None:
            raise IndexError(f"Unflatten: dim {self.dim} is out of range for an input of "
                             f"shape {x.shape}")
        return x.reshape(*x.shape[:dim], *self.unflattened_size, *x.shape[dim + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class MSELoss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class NLLLoss(Module):
    """F.nll_loss as a module: the input holds log-probabilities (LogSoftmax's output)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            raise ValueError("NLLLoss: size_average and reduce are deprecated (as in PyTorch); "
                             "pass reduction='mean', 'sum' or 'none' instead")
        loss_functions.check_reduction(reduction, "NLLLoss")
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)
