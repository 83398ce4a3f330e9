"""Loss modules with PyTorch's names, arguments and defaults: CrossEntropyLoss, BCELoss,
BCEWithLogitsLoss, L1Loss and SmoothL1Loss, each a thin Module around its function in
nn.functional (stage2_tensor/loss_functions.py for the composites). Arguments are checked
when the loss is built, not at its first call. A class weight given as a tensor is held as a
buffer, as PyTorch does, so it moves with to() and is saved by state_dict.
"""
from .. import loss_functions
from ..tensor import Tensor
from . import functional as F
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
