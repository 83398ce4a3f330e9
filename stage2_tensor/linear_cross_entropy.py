"""F.linear_cross_entropy's checks and fused path: cross-entropy of the logits of a linear
layer without the logits, a language model's last layer and loss in one (thesis, section
"GPT": the language-model head; the performance chapter). nn/functional.py has the function
itself, which picks this path or the composite.

    linear_cross_entropy(x, weight, target) == cross_entropy(linear(x, weight), target)

With a vocabulary of 50,257 tokens and 2,048 positions a step, the logits are a (2048,
50257) matrix, 412 MB of float32, and cross_entropy keeps their softmax too, for the
backward pass. A device may compute the same loss over chunks of the vocabulary and keep
only each row's logsumexp (backend.py, ``linear_cross_entropy``: the native CPU device has
such a kernel, in C); the backward pass then computes each chunk's
logits again. Every other device, and half dtypes, run the composite: linear, then the
fused cross_entropy, the plain path that the chapters show and the tests compare with.

Not in PyTorch: the name and the order (x, weight, target) are those of Apple's
cut-cross-entropy library's linear_cross_entropy(embeddings, classifier, labels), the
semantics F.cross_entropy's (ignore_index, reduction, a mean over the rows kept: nan when
none is).
"""
from . import backend as backends
from . import dtypes
from .gradient_function import GradientFunction
from .loss_functions import check_ignore_index, check_reduction
from .tensor import Tensor

FN = "linear_cross_entropy"


class LinearCrossEntropy(GradientFunction):
    """Forward: the device's ``linear_cross_entropy`` kernel gives the loss (per row, or
    reduced), each row's logsumexp lse and, for "mean", the count of rows kept. Backward:
    ``linear_cross_entropy_backward`` recomputes the logits z chunk by chunk and forms
    dz = (e^(z - lse) - onehot(target)) * upstream / kept, then dx = dz @ W, dW = dz^T @ x
    and dbias = the column sums of dz, as Linear's backward does with a whole dz."""

    def forward(self, x, weight, bias, target, reduction, ignore_index):
        n, dtype, device = x.shape[0], x.dtype, x.device
        self.ignore_index, self.has_bias = ignore_index, bias is not None
        losses, lse, kept = backends.launch(
            device, FN, x.as_view(), weight.as_view(), None if bias is None else bias.as_view(),
            target.as_view(), reduction, ignore_index, dtype, out_dtype=dtype)
        # the count ("mean" only) as a bare view, as CrossEntropy keeps it
        self.kept = None if kept is None else backends.View(kept, (), (), 0, dtype)
        lse = Tensor.from_buffer(lse, (n,), dtype, device)
        self.save_for_backward(x, weight, target, lse, *([bias] if self.has_bias else []))
        return Tensor.from_buffer(losses, (n,) if reduction == "none" else (), dtype, device)

    def backward(self, grad):
        x, weight, target, lse, *bias = self.saved_tensors
        bias = bias[0] if bias else None
        needs = (self.needs_input_grad[0], self.needs_input_grad[1],
                 self.has_bias and self.needs_input_grad[2])
        dtype, device = x.dtype, x.device
        dx, dw, db = backends.launch(
            device, FN + "_backward", x.as_view(), weight.as_view(), None if bias is None else bias.as_view(),
            target.as_view(), lse.as_view(), grad.broadcast_view(x.shape[:1]), self.kept,
            self.ignore_index, needs, dtype, out_dtype=dtype)
        grads = [None if b is None else Tensor.from_buffer(b, shape, dtype, device)
                 for b, shape in ((dx, x.shape), (dw, weight.shape), (db, weight.shape[:1]))]
        return (grads[0], grads[1], grads[2], None) if self.has_bias else (grads[0], grads[1], None)

    def release(self):
        super().release()
        self.kept = None


def check(x, weight, target, bias, ignore_index, reduction):
    """Every argument, before anything runs; returns ignore_index as a plain int (or None)."""
    for name, t in (("x", x), ("weight", weight), ("target", target)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{FN}: {name} must be a Tensor, got {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"{FN}: bias must be a Tensor or None, got {type(bias).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{FN}: expected a floating-point x, got {x.dtype.name}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype is not x.dtype:
            raise TypeError(f"{FN}: x and {name} need one dtype, got {x.dtype.name} and {t.dtype.name}")
    if x.ndim != 2 or weight.ndim != 2 or weight.shape[1] != x.shape[1]:
        raise ValueError(f"{FN}: expected x of shape (N, C) and weight of shape (V, C), got x of "
                         f"shape {x.shape} and weight of shape {weight.shape}")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ValueError(f"{FN}: bias must have shape {weight.shape[:1]}, one per class, got {bias.shape}")
    if target.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"{FN}: expected class indices (an int64 tensor of shape {x.shape[:1]}) as "
                        f"target, got a {target.dtype.name} tensor; convert labels with .long()")
    if target.shape != x.shape[:1]:
        raise ValueError(f"{FN}: x of shape {x.shape} needs a target of shape {x.shape[:1]}, "
                         f"one class per row, got {target.shape}")
    for name, t in (("weight", weight), ("target", target), ("bias", bias)):
        if t is not None and t.device != x.device:
            raise RuntimeError(f"{FN}: x is on device {x.device!r} and {name} on {t.device!r}; "
                               "move one with .to(device)")
    check_reduction(reduction, FN)
    return check_ignore_index(ignore_index, FN)


def fused_on(x):
    """Whether x's device runs the loss as its kernel pair (float32 and float64 only)."""
    return x.dtype in (dtypes.float32, dtypes.float64) and backends.get(x.device).has(FN)
