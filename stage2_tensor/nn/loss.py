"""Loss modules with PyTorch's names, arguments and defaults: CrossEntropyLoss, BCELoss,
BCEWithLogitsLoss, L1Loss, SmoothL1Loss, HuberLoss, KLDivLoss, the margin and ranking
losses (MarginRankingLoss ... MultiLabelMarginLoss), PoissonNLLLoss, GaussianNLLLoss and CTCLoss,
each a thin Module around its function in nn.functional (stage2_tensor/loss_functions.py
for the composites). Arguments are checked when the loss is built, not at its first call. A
class weight given as a tensor is held as a buffer, as PyTorch does, so it moves with to()
and is saved by state_dict.
"""
from .. import loss_functions
from ..tensor import Tensor
from . import functional as F
from .layers import NLLLoss
from .modules import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        loss_functions._no_legacy(size_average, reduce, type(self).__name__)
        loss_functions.check_reduction(reduction, type(self).__name__)
        self.reduction = reduction

    def _buffer(self, name, tensor):
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"{type(self).__name__}: {name} must be a tensor or None, got "
                            f"{type(tensor).__name__}")
        self.register_buffer(name, tensor)

    def extra_repr(self):
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """F.cross_entropy as a module, PyTorch's nn.CrossEntropyLoss(weight, size_average,
    ignore_index=-100, reduce, reduction, label_smoothing): the input holds logits."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(size_average, reduce, reduction)
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise TypeError(f"CrossEntropyLoss: ignore_index must be an int, got {ignore_index!r}")
        F._check_number(label_smoothing, "label_smoothing", "CrossEntropyLoss")
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, "
                             f"got {label_smoothing}")
        self._buffer("weight", weight)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_Loss):
    """F.binary_cross_entropy as a module: the input holds probabilities in [0, 1]."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self._buffer("weight", weight)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """F.binary_cross_entropy_with_logits as a module: the input holds logits."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self._buffer("weight", weight)
        self._buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction, pos_weight=self.pos_weight)


class L1Loss(_Loss):
    """F.l1_loss as a module: the mean (or sum, or each) of |input - target|."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """F.smooth_l1_loss as a module: quadratic below beta, linear above."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta >= 0:
            raise ValueError(f"SmoothL1Loss: beta must be a non-negative number, got {beta!r}")
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)

    def extra_repr(self):
        return f"reduction={self.reduction!r}, beta={self.beta}"


class HuberLoss(_Loss):
    """F.huber_loss as a module: quadratic below delta, linear (slope delta) above."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(None, None, reduction)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not delta > 0:
            raise ValueError(f"HuberLoss: delta must be a positive number, got {delta!r}")
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)

    def extra_repr(self):
        return f"reduction={self.reduction!r}, delta={self.delta}"


class KLDivLoss(_Loss):
    """F.kl_div as a module: the input holds log-probabilities; reduction may also be
    "batchmean" (the divergence per sample)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, "mean" if reduction == "batchmean" else reduction)
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _MarginLoss(_Loss):
    def __init__(self, margin, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        F._check_number(margin, "margin", type(self).__name__)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """F.margin_ranking_loss as a module: max(0, -y (x1 - x2) + margin)."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """F.hinge_embedding_loss as a module."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """F.cosine_embedding_loss as a module."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_MarginLoss):
    """F.triplet_margin_loss as a module."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)
        self.p, self.eps, self.swap = p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_MarginLoss):
    """F.triplet_margin_with_distance_loss as a module (the margin must be positive)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(margin, None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.distance_function, self.swap = distance_function, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """F.soft_margin_loss as a module: log(1 + e^(-y x))."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """F.multilabel_soft_margin_loss as a module (weight per class, a buffer)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self._buffer("weight", weight)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_Loss):
    """F.multi_margin_loss as a module (weight per class, a buffer)."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2) or isinstance(p, bool):
            raise ValueError("only p == 1 and p == 2 supported")
        F._check_number(margin, "margin", "MultiMarginLoss")
        if weight is not None and (not isinstance(weight, Tensor) or weight.ndim != 1):
            raise ValueError("weight must be None or 1D")
        self._buffer("weight", weight)
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """F.multilabel_margin_loss as a module."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """F.poisson_nll_loss as a module."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """F.gaussian_nll_loss as a module: called with (input, target, var)."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CTCLoss(_Loss):
    """F.ctc_loss as a module: called with (log_probs, targets, input_lengths,
    target_lengths)."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(None, None, reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class NLLLoss2d(NLLLoss):
    """NLLLoss (PyTorch's deprecated name for images' (N, C, H, W) log-probabilities)."""
