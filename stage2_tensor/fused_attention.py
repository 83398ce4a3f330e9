"""Scaled dot-product attention as one fused kernel each way (thesis, "Self-attention";
the chapter on language models shows the plain version, nn.functional.attention_weights
then @ v, which every device runs).

The plain version makes each head's (T, S) scores, masks them, takes their softmax and
keeps that (T, S) matrix for the backward pass: per layer and step, B * H of them, written
and read back by one kernel after the other. A device with the optional ``attention``
kernels (backend.py; device "cpu": csrc/attention.c) computes the same thing block by block
with an online softmax, flash-attention style, and keeps only the output and one number
per query, lse_i = log sum_j e^(x_ij) (x_ij = scale q_i . k_j); the backward pass
recomputes the weights p_ij = e^(x_ij - lse_i) from q, k and lse, block by block:

    D_i = sum_c dout_ic out_ic,   dv_j = sum_i p_ij dout_i,   dp_ij = dout_i . v_j,
    ds_ij = p_ij (dp_ij - D_i),   dq_i = scale sum_j ds_ij k_j,   dk_j = scale sum_i ds_ij q_i

(ds is the softmax's backward, dx = y * (g - sum(g * y)), with sum_j p_ij dp_ij = D_i.)
"""
from . import backend as backends
from . import dtypes
from .gradient_function import GradientFunction
from .strides import numel
from .tensor import Tensor


def fused(q, k, v):
    """Whether attention over q, k, v runs as the device's fused kernels: float32 or float64
    tensors of one dtype on one device that has both kernels, with one batch shape and
    nothing empty. The one place where the choice is made (the masks and dropout, which
    the kernels do not take, are the caller's: scaled_dot_product_attention)."""
    dtype = q.dtype
    if dtype not in (dtypes.float32, dtypes.float64) or k.dtype is not dtype or v.dtype is not dtype:
        return False
    if not (q.device == k.device == v.device) or q.ndim < 2 or not (q.ndim == k.ndim == v.ndim):
        return False
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]) or not (numel(q.shape) and numel(k.shape)
                                                                 and numel(v.shape)):
        return False
    be = backends.get(q.device)
    return be.has("attention") and be.has("attention_backward")


class Attention(GradientFunction):
    """softmax(scale q k^T + causal mask) v as the device's ``attention`` kernel, its
    gradient as ``attention_backward`` (the formulas above). ``causal``: None (every key),
    or an offset >= 0: query i sees keys 0 .. i + offset (0: PyTorch's is_causal)."""

    def forward(self, q, k, v, causal, scale):
        self.causal, self.scale, dtype = causal, scale, q.dtype
        out, lse = backends.launch(q.device, "attention", q.as_view(), k.as_view(), v.as_view(),
                                   causal, scale, dtype, out_dtype=dtype)
        out = _heads(out, q.shape[:-1] + v.shape[-1:], q)
        self.save_for_backward(q, k, v, out, Tensor.from_buffer(lse, q.shape[:-1], dtype, q.device))
        return out

    def backward(self, grad):
        q, k, v, out, lse = self.saved_tensors
        dq, dk, dv = backends.launch(q.device, "attention_backward", grad.as_view(), q.as_view(),
                                     k.as_view(), v.as_view(), out.as_view(), lse.as_view(),
                                     self.causal, self.scale, q.dtype, out_dtype=q.dtype)
        grads = [_heads(b, t.shape, q) if needed else None
                 for b, t, needed in zip((dq, dk, dv), (q, k, v), self.needs_input_grad)]
        return tuple(grads)


def _heads(buffer, shape, q):
    """A kernel's output of ``shape`` (..., rows, cols): for (B, H, rows, cols) its buffer
    holds (B, rows, H, cols) (backend.attention_heads), so the tensor is that transposed:
    putting the heads side by side again, y.transpose(1, 2).reshape(B, rows, H * cols), is
    then a view."""
    if backends.attention_heads(shape) == 1:
        return Tensor.from_buffer(buffer, shape, q.dtype, q.device)
    b, h, rows, cols = shape
    return Tensor.from_buffer(buffer, (b, rows, h, cols), q.dtype, q.device).transpose(1, 2)


def attention(q, k, v, causal=None, scale=None):
    """The fused attention of q (..., T, d), k (..., S, d), v (..., S, e) -> (..., T, e);
    ``fused(q, k, v)`` must hold. scale None: 1 / sqrt(d)."""
    return Attention.apply(q, k, v, causal, 1.0 / q.shape[-1] ** 0.5 if scale is None else float(scale))
