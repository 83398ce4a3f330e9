"""PyTorch's nn.CosineSimilarity and nn.PairwiseDistance: Modules around F's functions
(stage2_tensor/distances.py)."""
from . import functional as F
from .modules import Module


class CosineSimilarity(Module):
    """F.cosine_similarity along dim."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """F.pairwise_distance: the p-norm of x1 - x2 + eps along the last dimension."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
