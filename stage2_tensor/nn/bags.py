"""PyTorch's nn.EmbeddingBag (the sum, mean or max of each bag's embedding rows,
stage2_tensor/embedding_bag.py) and nn.Bilinear (y = x1^T W x2 + b,
stage2_tensor/bilinear.py), with PyTorch's parameters and initialisation."""
import math

from ..factories import randn, uniform
from ..grad_mode import no_grad
from . import functional as F
from .modules import Module, Parameter


class EmbeddingBag(Module):
    """A table of num_embeddings rows of size embedding_dim, N(0, 1) at the start (the
    padding_idx row zeros); called with (input, offsets=None, per_sample_weights=None)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        if max_norm is not None or norm_type != 2.0 or scale_grad_by_freq or sparse:
            raise ValueError("EmbeddingBag: max_norm, norm_type, scale_grad_by_freq and sparse are not supported "
                             "here; leave them at their defaults")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        if _weight is None:
            weight = randn(num_embeddings, embedding_dim, dtype=dtype, device=device)
            if padding_idx is not None:
                with no_grad():
                    weight[padding_idx] = 0.0
            self.weight = Parameter(weight)
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse = mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, mode=self.mode, per_sample_weights=per_sample_weights,
                               include_last_offset=self.include_last_offset, padding_idx=self.padding_idx)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}" + (
            f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class Bilinear(Module):
    """y = x1^T W x2 + b, W (out_features, in1_features, in2_features) and b uniform on
    [-1/sqrt(in1_features), 1/sqrt(in1_features)], as PyTorch's."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        k = 1 / math.sqrt(in1_features)
        self.weight = Parameter(uniform((out_features, in1_features, in2_features), -k, k, dtype=dtype,
                                        device=device))
        self.bias = Parameter(uniform((out_features,), -k, k, dtype=dtype, device=device)) if bias else None

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
