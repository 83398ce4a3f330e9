"""The functions behind the layers and losses (thesis chapter 2), PyTorch's
``torch.nn.functional``: ``import stage2_tensor.nn.functional as F``.

Nearly all of them are compositions of differentiable tensor operations, so autograd
differentiates them; cross_entropy, mse_loss, linear, layer_norm and dropout are fused
kernels with their backward written out (``CrossEntropy``, ``MSELoss``, ``Linear``,
``LayerNorm``, ``Dropout``), as are softmax and log_softmax (``softmax.py``) and, where
the device has the kernels, scaled_dot_product_attention (``fused_attention.py``). Some
live in files of their own and are re-exported here: convolution and pooling
(``convolution.py``), pad and interpolate (``resampling.py``), batch, instance, group and
RMS normalization (``normalization_functions.py``), the binary cross-entropies, l1 and
smooth l1 (``loss_functions.py``), and linear_cross_entropy's fused path, a linear layer
and cross_entropy without the logits (``linear_cross_entropy.py``). (nn/'s modules of
the same subject, ``nn/loss.py``, ``nn/normalization.py``, ``nn/attention.py``, hold the
layers: Modules around these functions.)
"""
import warnings

from .. import backend as backends
from .. import composites, fused_attention, inplace as in_place, loss_functions
from .. import linear_cross_entropy as lce
from .. import dtypes
from ..broadcast import broadcast_shapes
from ..convolution import (adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool1d,  # noqa: F401  (F.conv2d, ...)
                           avg_pool2d, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, fold,
                           max_pool1d, max_pool2d, unfold)
from ..resampling import interpolate, pad  # noqa: F401  (F.pad, F.interpolate)
from ..channel_dropout import dropout1d, dropout2d, dropout3d  # noqa: F401  (F.dropout2d, ...)
from ..loss_functions import (binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss,  # noqa: F401  (F.l1_loss, ...)
                      l1_loss, smooth_l1_loss)
from ..normalization_functions import batch_norm, group_norm, instance_norm, rms_norm  # noqa: F401  (F.batch_norm, ...)
from ..pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: F401  (F.pixel_shuffle, ...)
from ..elementwise import unary, where
from ..factories import arange, generator, random_bits
from ..gradient_function import GradientFunction
from ..grad_mode import no_grad
from ..tensor import Tensor
from ..views import out_of_range
from ..data_checks import no_negatives, outside, raise_if_any
from ..softmax import log_softmax, softmax  # noqa: F401  (re-exported, F.softmax)
from ..strides import numel


def relu(x, inplace=False):
    """max(x, 0); with ``inplace=True`` written into x (inplace.py says when)."""
    return in_place.into(x, x.relu(), "relu") if inplace else x.relu()


def gelu(x, approximate="none"):
    """GELU, exact (x * Phi(x)) or with approximate="tanh" GPT-2's
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as in PyTorch."""
    return x.gelu(approximate)


def silu(x, inplace=False):
    """SiLU (swish), x * sigmoid(x), as in PyTorch: a composite of two primitives, so every
    device runs it and autograd differentiates it with no code of its own."""
    out = x * x.sigmoid()
    return in_place.into(x, out, "silu") if inplace else out


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(beta x)) / beta, and x itself where beta x > threshold, as in PyTorch. The
    primitive (stage2_tensor/ops.py) is beta 1, threshold 20; other values scale around it."""
    y = unary("softplus", x) if beta == 1 else unary("softplus", x * beta) / beta
    return y if threshold == 20 else where(x * beta > threshold, x, y)


def _check_number(value, name, fn):
    """A real number argument (a bool or a tensor is a mistake here, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x, as PyTorch (whose gradient at 0 is
    negative_slope, as here). A composite: where and a product."""
    _check_number(negative_slope, "negative_slope", "leaky_relu")
    out = where(input > 0, input, input * negative_slope)
    return in_place.into(input, out, "leaky_relu") if inplace else out


def prelu(input, weight):
    """x where x > 0, else weight * x, with a learned slope per channel (dimension 1; one
    slope for all when weight has one element, or the input fewer than 2 dimensions), as
    PyTorch's F.prelu. A composite, so the slope gets its gradient: the sum of x over
    the negative elements of its channel."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise TypeError(f"prelu: input and weight must be Tensors, got {type(input).__name__} and "
                        f"{type(weight).__name__}")
    if weight.ndim > 1:
        raise ValueError(f"prelu: weight must be 1-D (one slope per channel), got shape {weight.shape}")
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if n != channels:
            raise ValueError(f"prelu: mismatch of parameter numbers and input channel size: weight has "
                             f"{n} slopes, the input of shape {input.shape} has {channels} channels")
        weight = weight.reshape(n, *[1] * (input.ndim - 2))
    return where(input > 0, input, input * weight)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (e^x - 1), as PyTorch. A composite: the exponential is
    taken of min(x, 0), so a large positive x gives no inf that where's backward would
    turn into 0 * inf = nan."""
    _check_number(alpha, "alpha", "elu")
    out = where(input > 0, input, (input.minimum(0.0).exp() - 1) * alpha)
    return in_place.into(input, out, "elu") if inplace else out


def tanh(x):
    return x.tanh()


def sigmoid(x):
    return x.sigmoid()


def linear(x, weight, bias=None):
    """x @ weight^T + bias with weight of shape (out_features, in_features). The transpose
    is a flag of the matmul, not a copy; the bias is added by the same kernel (``Linear``)."""
    if bias is None:
        return x.matmul(weight, transpose_b=True)
    return Linear.apply(x, weight, bias)


class Linear(GradientFunction):
    """x @ weight^T + bias in one kernel call: the matmul adds the bias as it writes each
    output row, instead of a second pass over the output (the performance chapter). Leading
    dimensions of x are flattened into rows, so (B, T, C) inputs are one matrix product.
    Gradients, with x as rows X and upstream G as rows: dX = G @ W, dW = G^T @ X,
    db = the column sums of G."""

    def forward(self, x, weight, bias):
        if not x.dtype is weight.dtype is bias.dtype:
            raise TypeError(f"linear: input, weight and bias need one dtype, got {x.dtype}, "
                            f"{weight.dtype} and {bias.dtype}")
        if x.ndim == 0 or weight.ndim != 2 or x.shape[-1] != weight.shape[1] or bias.shape != weight.shape[:1]:
            raise ValueError(f"linear: input of shape {x.shape}, weight of shape {weight.shape} "
                             f"and bias of shape {bias.shape} do not fit; expected weight "
                             f"(out_features, {x.shape[-1] if x.shape else 'in_features'}) and bias (out_features,)")
        self.save_for_backward(x, weight)
        out = _product(x, self.rows(x).as_view(), _transposed(weight), bias)
        return out if x.ndim == 2 else out.view_of(x.shape[:-1] + weight.shape[:1], None, 0)

    @staticmethod
    def rows(t):
        """t as a matrix: its leading dimensions flattened (a view when t is contiguous)."""
        if t.ndim == 2:
            return t
        with no_grad():
            return t.reshape(-1, t.shape[-1])

    def backward(self, grad):
        x, weight = self.saved_tensors
        g = self.rows(grad)
        dx = dw = db = None
        if self.needs_input_grad[0]:
            dx = _product(g, g.as_view(), weight.as_view())
            dx = dx if x.ndim == 2 else dx.view_of(x.shape, None, 0)
        if self.needs_input_grad[1]:
            dw = _product(g, _transposed(g), self.rows(x).as_view())
        if self.needs_input_grad[2]:
            db = g.launch("reduce", "sum", g.as_view(), (0,), g.dtype, shape=weight.shape[:1], dtype=g.dtype)
        return dx, dw, db


def _transposed(m):
    """The matrix m transposed, as the View a kernel reads: its shape and strides reversed
    (no tensor is made for it: the product only reads it)."""
    return backends.View(m.storage.buffer, m.shape[::-1], m.strides[::-1], m.offset, m.dtype)


def _product(t, a, b, bias=None):
    """a @ b (+ bias on every row) for matrices given as Views, on the device and dtype of
    the tensor t, straight from the device's matmul kernel: Linear records its own
    gradient, so the product needs no GradientFunction of its own."""
    extra = () if bias is None else (bias.as_view(),)
    return t.launch("matmul", a, b, t.dtype, *extra, shape=(a.shape[0], b.shape[1]), dtype=t.dtype)


def dropout(x, p=0.5, training=True, inplace=False):
    """Inverted dropout: in training, zero each element with probability p and scale the
    survivors by 1/(1-p), so the expected value is unchanged and evaluation needs no
    rescaling; outside training, x itself. One fused kernel each way (``Dropout``), its mask
    decided by a 64-bit seed drawn from the package's generator, so ``seed`` makes it
    repeat. Integer tensors are dropped out as float32. ``inplace=True`` writes the result
    into x (inplace.py says when)."""
    if inplace:
        return in_place.into(x, dropout(x, p, training), "dropout")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0
    if not x.dtype.is_floating_point:
        x = x.to(dtype=dtypes.float32)
    return Dropout.apply(x, p)


class Dropout(GradientFunction):
    """Forward: one 64-bit seed is drawn from the package's generator (the one ``seed``
    seeds; each call draws a new one), and the device's ``dropout`` kernel keeps element i
    (row-major) iff a counter-based hash of (seed, i), SplitMix64's output i as a uniform
    in [0, 1), is >= p, giving y = x * keep / (1 - p). Only the seed is saved, not a mask:
    backward runs the same kernel on the upstream gradient, which regenerates the mask,
    dx = dy * keep / (1 - p). Every device computes the same hash (the backend's
    ``dropout``, backend.py), so they drop the same elements for the same seed. The composition it replaces (``rand``, a
    comparison, a cast, two products) drew one Python random number per element."""

    def forward(self, x, p):
        self.seed, self.p = random_bits(generator(), 64), p
        return x.launch("dropout", x.as_view(), self.seed, p, x.dtype, shape=x.shape, dtype=x.dtype)

    def backward(self, grad):
        return (grad.launch("dropout", grad.as_view(), self.seed, self.p, grad.dtype,
                            shape=grad.shape, dtype=grad.dtype),)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape)
    dimensions; var is the biased (divide by n) variance, as in PyTorch. Over the last
    dimension alone (the transformer's case) it is one fused kernel each way (``LayerNorm``);
    over several, a composition of tensor operations that autograd differentiates."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if x.shape[x.ndim - len(shape):] != shape:
        raise ValueError(f"layer_norm: normalized_shape {shape} does not match the last "
                         f"dimensions of the input of shape {x.shape}")
    if len(shape) == 1 and x.dtype.is_floating_point and all(
            p is None or (p.shape == shape and p.dtype is x.dtype and p.device == x.device)
            for p in (weight, bias)):
        return LayerNorm.apply(x, weight, bias, eps)
    return layer_norm_composite(x, shape, weight, bias, eps)


def layer_norm_composite(x, shape, weight=None, bias=None, eps=1e-5):
    """layer_norm as a composition of tensor operations (about 11 kernel launches forward,
    25 in autograd's backward pass): how it reads, and what it costs without a fused
    kernel. Also the path for several normalized dimensions, and for a weight or bias of
    another dtype or shape, which broadcasting and type promotion handle."""
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    centered = x - x.mean(dim=dims, keepdim=True)
    var = (centered * centered).mean(dim=dims, keepdim=True)
    out = centered / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


class LayerNorm(GradientFunction):
    """Layer normalization over the last dimension, as two kernel calls instead of ~11
    tensor operations forward and ~25 backward (the performance chapter): the device's
    ``layer_norm`` normalizes each row in one pass and keeps its mean and rstd =
    1/sqrt(var + eps); ``layer_norm_backward`` turns them and the upstream gradient g
    into, per row with xhat = (x - mean) * rstd and gw = g * weight,

        dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),

    and the parameters' gradients, sums over the rows: dweight = sum g * xhat,
    dbias = sum g. weight and bias may each be None (then they are not inputs)."""

    def forward(self, x, weight, bias, eps):
        self.has_weight, self.has_bias = weight is not None, bias is not None
        rows, dtype = numel(x.shape[:-1]), x.dtype
        out, mean, rstd = backends.launch(
            x.device, "layer_norm", x.as_view(), None if weight is None else weight.as_view(),
            None if bias is None else bias.as_view(), eps, dtype, out_dtype=dtype)
        stats = [Tensor.from_buffer(b, (rows,), dtype, x.device) for b in (mean, rstd)]
        self.save_for_backward(x, *stats, *([weight] if self.has_weight else []))
        return Tensor.from_buffer(out, x.shape, dtype, x.device)

    def backward(self, grad):
        x, mean, rstd, *weight = self.saved_tensors
        weight = weight[0] if weight else None
        dx, dweight, dbias = backends.launch(
            x.device, "layer_norm_backward", grad.as_view(), x.as_view(), mean.as_view(),
            rstd.as_view(), None if weight is None else weight.as_view(), x.dtype, out_dtype=x.dtype)
        n = x.shape[-1]
        grads = [Tensor.from_buffer(dx, x.shape, x.dtype, x.device)]
        if self.has_weight:
            grads.append(Tensor.from_buffer(dweight, (n,), x.dtype, x.device))
        if self.has_bias:                     # without weight the kernel skips the sums
            grads.append(Tensor.from_buffer(dbias, (n,), x.dtype, x.device) if dbias is not None
                         else grad.reshape(-1, n).sum(0))
        return tuple(grads)


class MSELoss(GradientFunction):
    """Forward: the device's ``mse_loss`` kernel gives the squared differences (or their sum
    or mean) and keeps diff = input - target. Backward: d loss / d input = 2 diff times the
    upstream gradient (divided by the element count for the mean), one ``mse_loss_backward``
    kernel; the target's gradient is its negative. The same numbers as
    ``((input - target) ** 2).sum()``, in one kernel each way instead of three."""

    def forward(self, input, target, reduction):
        shape = broadcast_shapes(input.shape, target.shape)
        self.reduction, dtype, device = reduction, input.dtype, input.device
        losses, diff = backends.launch(device, "mse_loss", input.broadcast_view(shape),
                                       target.broadcast_view(shape), reduction, dtype, out_dtype=dtype)
        self.save_for_backward(Tensor.from_buffer(diff, shape, dtype, device))
        return Tensor.from_buffer(losses, shape if reduction == "none" else (), dtype, device)

    def backward(self, grad):
        (diff,) = self.saved_tensors
        n = diff.numel()                               # 0: an empty gradient, any factor
        factor = 1 / n if self.reduction == "mean" and n else 1.0
        out = backends.launch(diff.device, "mse_loss_backward", diff.as_view(),
                              grad.broadcast_view(diff.shape), factor, diff.dtype, out_dtype=diff.dtype)
        d_input = Tensor.from_buffer(out, diff.shape, diff.dtype, diff.device)
        needs_input, needs_target = self.needs_input_grad
        return d_input if needs_input else None, -d_input if needs_target else None


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum, or with reduction="none" each) of the squared differences: one fused
    kernel each way (``MSELoss``) where the device has one, else the composite
    (composites.mse_loss). Like PyTorch, different shapes broadcast with a warning:
    (N, 1) against (N,) gives an (N, N) loss, a classic silent bug."""
    if tuple(target.shape) != input.shape:
        warnings.warn(f"mse_loss: target size {tuple(target.shape)} is different from input "
                      f"size {input.shape}; they broadcast, which is likely wrong", stacklevel=2)
    loss_functions.check_reduction(reduction, "mse_loss")
    if input.device != target.device:
        raise RuntimeError(f"mse_loss: input is on device {input.device!r} and target on "
                           f"{target.device!r}; move one with .to(device)")
    dtype = dtypes.promote(input.dtype, target.dtype)
    if not dtype.is_floating_point:
        dtype = dtypes.float32                         # the mean of integers is a fraction
    input, target = input.to(dtype=dtype), target.to(dtype=dtype)
    if not backends.get(input.device).has("mse_loss"):
        shape = broadcast_shapes(input.shape, target.shape)
        return composites.mse_loss(input.broadcast_to(shape), target.broadcast_to(shape), reduction)
    return MSELoss.apply(input, target, reduction)


class CrossEntropy(GradientFunction):
    """Forward: the device's ``cross_entropy`` kernel gives the loss (per row, or reduced)
    and each row's softmax p, the row max subtracted first, so large logits do not overflow;
    a row whose target is ``ignore_index`` adds 0, and for "mean" the kernel also returns
    how many rows it kept (on the device: nothing is read here, so a lazy device records
    and a GPU does not wait). Backward: d loss_i / d logits_i = p_i - onehot(target_i),
    times the upstream gradient of row i (divided by the count kept for the mean; 0 for
    an ignored row): one ``cross_entropy_backward`` kernel. For a half dtype the count is
    stored in it, as PyTorch's total_weight is."""

    def forward(self, logits, target, reduction, ignore_index):
        n, c = logits.shape
        self.ignore_index, dtype = ignore_index, logits.dtype
        target = target.to(device=logits.device, dtype=dtypes.int64)
        losses, probs, kept = backends.launch(logits.device, "cross_entropy", logits.as_view(), target.as_view(),
                                              reduction, ignore_index, dtype, out_dtype=dtype)
        # the count ("mean" only) as a bare view: no tensor ever sees it, so nothing can change it
        self.kept = None if kept is None else backends.View(kept, (), (), 0, dtype)
        self.save_for_backward(Tensor.from_buffer(probs, (n, c), dtype, logits.device), target)
        return Tensor.from_buffer(losses, (n,) if reduction == "none" else (), dtype, logits.device)

    def backward(self, grad):
        probs, target = self.saved_tensors
        scale = grad.broadcast_view((probs.shape[0],))      # one upstream value per row
        out = backends.launch(probs.device, "cross_entropy_backward", probs.as_view(), target.as_view(), scale,
                              self.kept, self.ignore_index, probs.dtype, out_dtype=probs.dtype)
        return Tensor.from_buffer(out, probs.shape, probs.dtype, probs.device), None

    def release(self):
        super().release()
        self.kept = None                                 # freed with the saved tensors


def _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing):
    """cross_entropy's second form, a target of class probabilities (checked here)."""
    _check_number(label_smoothing, "label_smoothing", "cross_entropy")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}")
    loss_functions.check_reduction(reduction, "cross_entropy")
    if input.ndim == 1:                               # one sample
        return _cross_entropy_probabilities(input.unsqueeze(0), target.unsqueeze(0), weight, reduction,
                                            label_smoothing).reshape(())
    _check_class_weight(weight, input.shape[1], "cross_entropy")
    if weight is not None:
        weight = weight.to(device=input.device)
    return loss_functions.cross_entropy_probabilities(input, target.to(device=input.device), weight, reduction,
                                              label_smoothing)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """-log softmax(input)[target] per sample, PyTorch's F.cross_entropy, for logits
    ``input`` of shape (N, C), (C,) or (N, C, d1, ...) and class indices ``target`` of shape
    (N,), () or (N, d1, ...). (N, C) logits without weight or label smoothing take one
    fused kernel (``CrossEntropy``) where the device has one, else the composite
    (composites.cross_entropy); both subtract the row max, so large logits do not overflow. Samples whose target is ``ignore_index`` (-100 by default, as in PyTorch;
    None: every target must be a class) count for nothing: they add 0 and the mean is over
    the others (none left: nan, as in PyTorch). The kernel skips them itself, so the
    targets are never read on the host.

    ``weight`` (C,) scales class c's losses by weight[c], and "mean" then divides by the
    sum of the weights of the targets; ``label_smoothing`` s in [0, 1] mixes in the uniform
    distribution, (1 - s) nll + (s / C) sum_c -weight[c] log p_c. Both, and (N, C, d...)
    logits, go through log_softmax and nll_loss (loss_functions.cross_entropy_composite), PyTorch's
    formula."""
    loss_functions._no_legacy(size_average, reduce, "cross_entropy")
    if isinstance(weight, str):
        raise TypeError(f"cross_entropy: weight must be a tensor of class weights, got the "
                        f"string {weight!r}; pass reduction={weight!r} by keyword")
    if isinstance(target, Tensor) and target.dtype.is_floating_point and input.ndim >= 1 and \
            target.shape == input.shape:              # class probabilities, one row per sample
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    if not isinstance(target, Tensor) or target.dtype not in (dtypes.int64, dtypes.int32):
        got = (f"a {target.dtype.name} tensor of shape {target.shape}" if isinstance(target, Tensor)
               else type(target).__name__)
        raise TypeError(f"cross_entropy: expected class indices (an int64 tensor of shape "
                        f"{input.shape[:1]}) as target, got {got}; convert labels with .long()")
    if input.ndim == 0 or target.shape != input.shape[:1] * (input.ndim > 1) + input.shape[2:]:
        raise ValueError(f"cross_entropy: logits of shape (N, C) need a target of shape (N,), "
                         f"(N, C, d...) a target of shape (N, d...); got logits of shape "
                         f"{input.shape} and target of shape {target.shape}")
    _check_number(label_smoothing, "label_smoothing", "cross_entropy")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got "
                         f"{label_smoothing}")
    ignore_index = loss_functions.check_ignore_index(ignore_index, "cross_entropy")
    c = input.shape[0 if input.ndim == 1 else 1]
    _check_class_weight(weight, c, "cross_entropy")
    if input.ndim == 1:                               # one sample
        return cross_entropy(input.unsqueeze(0), target.reshape(1), weight, None, ignore_index,
                             None, reduction, label_smoothing).reshape(())
    loss_functions.check_reduction(reduction, "cross_entropy")
    target = target.to(device=input.device, dtype=dtypes.int64)
    if weight is not None or label_smoothing or input.ndim > 2:
        if weight is not None:
            weight = weight.to(device=input.device)
        return loss_functions.cross_entropy_composite(input, target, weight, ignore_index, reduction,
                                              label_smoothing, nll_loss)
    if not backends.get(input.device).has("cross_entropy"):
        return composites.cross_entropy(input, target, reduction, ignore_index)
    return CrossEntropy.apply(input, target, reduction, ignore_index)


def linear_cross_entropy(x, weight, target, bias=None, ignore_index=-100, reduction="mean"):
    """cross_entropy(linear(x, weight, bias), target, ignore_index=ignore_index,
    reduction=reduction) for x (N, C), weight (V, C), bias (V,) or None and int64 class
    indices target (N,): the same value and gradients for x, weight and bias. Where the
    device has the kernel pair (float32, float64) it never holds the (N, V) logits
    (``linear_cross_entropy.py``); elsewhere it is that composite. A target neither a class
    (0 to V - 1) nor ignore_index is an IndexError, as in cross_entropy."""
    ignore_index = lce.check(x, weight, target, bias, ignore_index, reduction)
    if not lce.fused_on(x):
        return cross_entropy(linear(x, weight, bias), target, ignore_index=ignore_index, reduction=reduction)
    return lce.LinearCrossEntropy.apply(x, weight, bias, target.to(dtype=dtypes.int64), reduction, ignore_index)


def _check_class_weight(weight, c, fn):
    """A loss's class weights: None, or a tensor of shape (C,)."""
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != (c,)):
        raise ValueError(f"{fn}: weight must be a tensor of shape ({c},), one per class, "
                         f"got {getattr(weight, 'shape', type(weight).__name__)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """The negative log likelihood of log-probabilities ``input``: -weight[t] * input[i, t]
    for sample i of class t, as PyTorch's F.nll_loss. Shapes: input (N, C) with target (N,),
    (C,) with (), or (N, C, d1, ...) with (N, d1, ...). Samples whose target is
    ``ignore_index`` (-100 by default, as in PyTorch) add 0; "mean" divides by the sum of
    the weights of the other samples (their count without ``weight``), so a mean over only
    ignored samples is nan, as in PyTorch. (size_average and reduce, deprecated in PyTorch,
    hold their places in its signature; use reduction.)"""
    loss_functions._no_legacy(size_average, reduce, "nll_loss")
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise TypeError(f"nll_loss: expected tensors, got {type(input).__name__} and "
                        f"{type(target).__name__}")
    if target.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"nll_loss: expected class indices (an int64 tensor) as target, got a "
                        f"{target.dtype.name} tensor; convert labels with .long()")
    if input.ndim == 0 or target.shape != input.shape[:1] * (input.ndim > 1) + input.shape[2:]:
        raise ValueError(f"nll_loss: log-probabilities of shape (N, C, ...) need a target of "
                         f"shape (N, ...), (C,) a target of shape (); got input of shape "
                         f"{input.shape} and target of shape {target.shape}")
    loss_functions.check_reduction(reduction, "nll_loss")
    c = input.shape[0 if input.ndim == 1 else 1]
    _check_class_weight(weight, c, "nll_loss")
    # Every layout as rows of C: (N, C, d...) moves C last, so one gather serves all.
    rows = input.reshape(1, c) if input.ndim == 1 else input
    if input.ndim > 2:
        rows = input.permute(0, *range(2, input.ndim), 1).reshape(-1, c)
    flat = target.reshape(-1).to(device=input.device, dtype=dtypes.int64)
    kept = flat != ignore_index
    picked = flat.masked_fill(kept == False, 0)  # noqa: E712  (ignored rows read class 0, weighted 0)
    # The index kernel checks the targets as it reads them (data_checks.py)
    try:
        chosen = rows[arange(rows.shape[0], device=input.device), no_negatives(picked, c)]
    except IndexError:
        position, value = out_of_range(picked, c)
        raise IndexError(f"nll_loss: target {value} at position {position} "
                         f"is not a class index: the input has {c} classes (0 to {c - 1})") from None
    w = kept.to(dtype=input.dtype)
    if weight is not None:
        w = w * weight.to(device=input.device, dtype=input.dtype)[picked]
    per_sample = -chosen * w
    if reduction == "none":
        return per_sample.reshape(target.shape)
    return per_sample.sum() if reduction == "sum" else per_sample.sum() / w.sum()


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p, eps) along ``dim``, as PyTorch's F.normalize: unit vectors,
    and a zero vector stays zero. The clamp is taken before the root (max(s, eps^p)^(1/p),
    the same value), so a zero vector's gradient is 0, not the nan of sqrt'(0)."""
    _check_number(p, "p", "normalize")
    if not p > 0:
        raise ValueError(f"normalize: p must be positive (2 for the Euclidean norm), got {p}")
    _check_number(eps, "eps", "normalize")
    if p == float("inf"):
        norm = input.abs().max(dim=dim, keepdim=True)[0].maximum(eps)
    else:
        powers = input * input if p == 2 else input.abs() ** p
        norm = powers.sum(dim=dim, keepdim=True).maximum(eps ** p) ** (1 / p)
    return input / norm


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows ``weight[input]``: (*input.shape, embedding_dim), as PyTorch's F.embedding. The
    gradient adds up for a row picked several times; with ``padding_idx`` that row gets no
    gradient (its output is taken detached), as in PyTorch. PyTorch's other options
    (max_norm's in-place renormalisation, scaled or sparse gradients) are not offered."""
    if max_norm is not None or norm_type != 2.0 or scale_grad_by_freq or sparse:
        raise ValueError("embedding: max_norm, norm_type, scale_grad_by_freq and sparse are "
                         "not supported here; leave them at their defaults")
    if not isinstance(input, Tensor) or input.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"embedding: expected row numbers (an int64 tensor) as input, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError(f"embedding: weight must be a 2-D tensor (num_embeddings, "
                         f"embedding_dim), got {getattr(weight, 'shape', type(weight).__name__)}")
    n = weight.shape[0]
    if padding_idx is not None:
        if not isinstance(padding_idx, int) or not -n <= padding_idx < n:
            raise ValueError(f"embedding: padding_idx must be an int in [-{n}, {n}), got {padding_idx!r}")
        padding_idx %= n
    try:                                # the index kernel checks the rows (data_checks.py)
        out = weight[no_negatives(input, n)]
    except IndexError:
        raise IndexError(f"embedding: index {out_of_range(input, n)[1]} is out of range for a table "
                         f"of {n} rows") from None
    if padding_idx is None:
        return out
    return where((input == padding_idx).unsqueeze(-1), out.detach(), out)


def _check_scale(scale):
    """Attention's scale: None (1 / sqrt(d)) or a number."""
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise TypeError(f"scaled_dot_product_attention: scale must be a number or None, got {type(scale).__name__}")


def attention_weights(q, k, attn_mask=None, is_causal=False, scale=None):
    """softmax(q k^T / sqrt(d) + mask) over the keys (thesis, "Self-attention"): for each
    query, how much of each value to take. q: (..., T, d), k: (..., S, d) -> (..., T, S).
    ``attn_mask`` is added to the scores (-inf where a query must not look; a bool mask:
    False there); ``is_causal`` hides key j from query i when j > i (PyTorch's alignment,
    from the top left). ``scale`` replaces 1/sqrt(d) when given."""
    d = q.shape[-1]
    # Scaling q (T x d numbers) instead of the scores (T x S) gives the same result with
    # less work. The 1/sqrt(d) keeps the scores' spread independent of d, so the softmax
    # does not saturate and its gradient does not vanish in wide heads.
    _check_scale(scale)
    scores = (q * (1.0 / d ** 0.5 if scale is None else float(scale))) @ k.transpose(-2, -1)
    T, S = scores.shape[-2:]
    if is_causal:
        if attn_mask is not None:
            raise ValueError("pass either attn_mask or is_causal=True, not both")
        attn_mask = arange(T, device=q.device).unsqueeze(-1) >= arange(S, device=q.device)
    if attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = scores.masked_fill(attn_mask == False, -float("inf"))  # noqa: E712
        else:
            scores = scores + attn_mask
    return scores.softmax(dim=-1)


def _check_attention(q, k, v):
    """Three tensors of one floating dtype, q (..., T, d), k (..., S, d), v (..., S, e)."""
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention: {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise ValueError(f"scaled_dot_product_attention: {name} must be (..., length, features), "
                             f"at least 2-D, got shape {t.shape}")
    if not (q.dtype is k.dtype is v.dtype) or not q.dtype.is_floating_point:
        raise TypeError(f"scaled_dot_product_attention: query, key and value must have one floating "
                        f"dtype, got {q.dtype.name}, {k.dtype.name} and {v.dtype.name}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: expected query (..., T, d), key (..., S, d) "
                         f"and value (..., S, e), got shapes {q.shape}, {k.shape} and {v.shape}")


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, training=True, *,
                                 scale=None):
    """PyTorch's F.scaled_dot_product_attention: dropout(attention_weights(q, k)) @ v,
    (..., T, d) queries over (..., S, d) keys and (..., S, e) values -> (..., T, e);
    ``scale``, when given, replaces 1/sqrt(d). Without a mask or active dropout, on a
    device with the fused kernels (fused_attention.py's ``fused``), one kernel each way that never
    keeps the (T, S) weights; otherwise the plain composite."""
    _check_attention(q, k, v)
    _check_scale(scale)
    if attn_mask is None and (dropout_p == 0 or not training) and fused_attention.fused(q, k, v):
        return fused_attention.attention(q, k, v, 0 if is_causal else None, scale)
    weights = attention_weights(q, k, attn_mask, is_causal, scale)
    return dropout(weights, dropout_p, training) @ v


def one_hot(tensor, num_classes=-1):
    """int64 (..., num_classes) with a 1 at each index; -1 means max index + 1. As in
    PyTorch, an index outside [0, num_classes) is an error, not a row of zeros."""
    if tensor.dtype not in (dtypes.int64, dtypes.int32):
        raise TypeError(f"one_hot: expected a tensor of class indices (int64), got dtype "
                        f"{tensor.dtype.name}; convert labels with .long()")
    if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < -1:
        raise ValueError(f"one_hot: num_classes must be a non-negative int, or -1 to infer "
                         f"it, got {num_classes!r}")
    if num_classes == -1:
        if not tensor.numel():
            raise RuntimeError("one_hot: cannot infer the number of classes from an empty "
                               "tensor; pass num_classes")
        num_classes = max(int(tensor.max().item()) + 1, 0)     # the output's shape: a read
    raise_if_any(outside(tensor, num_classes), lambda: _bad_class(tensor, num_classes))
    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).long()


def _bad_class(tensor, num_classes):
    low, high = tensor.min().item(), tensor.max().item()
    if low < 0:
        return RuntimeError(f"one_hot: class values must be non-negative, got {low}")
    return RuntimeError(f"one_hot: class values must be smaller than num_classes ({num_classes}), got {high}")


__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
           "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "unfold", "fold", "pad",
           "interpolate", "relu", "gelu", "silu", "softplus", "leaky_relu", "prelu", "elu", "tanh", "sigmoid", "softmax",
           "log_softmax", "linear", "dropout", "dropout1d", "dropout2d", "dropout3d", "layer_norm",
           "batch_norm", "group_norm", "instance_norm", "rms_norm", "mse_loss", "cross_entropy", "nll_loss",
           "linear_cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss", "smooth_l1_loss", "huber_loss",
           "normalize", "embedding", "one_hot", "attention_weights", "scaled_dot_product_attention",
           "pixel_shuffle", "pixel_unshuffle"]

# ---- more of PyTorch's F: activations, losses, distances (files of their own, re-exported) ----
from ..activation_functions import (alpha_dropout, celu, celu_, elu_, feature_alpha_dropout,  # noqa: E402, F401
                                    glu, gumbel_softmax, hardshrink, hardsigmoid, hardswish, hardtanh,
                                    hardtanh_, leaky_relu_, local_response_norm, logsigmoid, mish, relu6,
                                    relu_, rrelu, rrelu_, selu, selu_, softmin, softshrink, softsign,
                                    tanhshrink, threshold, threshold_)
from ..distances import cosine_similarity, pairwise_distance, pdist  # noqa: E402, F401
from ..likelihood_losses import gaussian_nll_loss, kl_div, poisson_nll_loss  # noqa: E402, F401
from ..margin_losses import (cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss,  # noqa: E402, F401
                             multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
                             soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)

__all__ += ["alpha_dropout", "celu", "celu_", "elu_", "feature_alpha_dropout", "glu", "gumbel_softmax",
            "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu_",
            "local_response_norm", "logsigmoid", "mish", "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_",
            "softmin", "softshrink", "softsign", "tanhshrink", "threshold", "threshold_",
            "cosine_similarity", "pairwise_distance", "pdist", "gaussian_nll_loss", "kl_div", "poisson_nll_loss",
            "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
            "multilabel_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss",
            "triplet_margin_with_distance_loss"]
from ..affine_grid import affine_grid  # noqa: E402, F401
from ..bilinear import bilinear  # noqa: E402, F401
from ..channel_shuffle import channel_shuffle, native_channel_shuffle  # noqa: E402, F401
from ..convolution import conv_transpose3d  # noqa: E402, F401
from ..ctc_loss import ctc_loss  # noqa: E402, F401
from ..embedding_bag import embedding_bag  # noqa: E402, F401
from ..grid_sample import grid_sample  # noqa: E402, F401
from ..pool_variants import (adaptive_avg_pool1d, adaptive_avg_pool3d, adaptive_max_pool1d,  # noqa: E402, F401
                             adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
                             adaptive_max_pool3d_with_indices, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                             max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d, max_pool3d_with_indices,
                             max_unpool1d, max_unpool2d, max_unpool3d)
from ..upsample_aliases import upsample, upsample_bilinear, upsample_nearest  # noqa: E402, F401


__all__ += ["affine_grid", "bilinear", "channel_shuffle", "native_channel_shuffle", "ctc_loss", "embedding_bag",
            "grid_sample",
            "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
            "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
            "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices",
            "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
            "max_unpool3d", "upsample", "upsample_bilinear", "upsample_nearest", "conv_transpose3d"]
