"""Products of matrices: matmul, and attention, which multiplies three without keeping the
(T, S) matrix between them."""
import math

from .. import dtypes
from ..contracts import differ
from . import kernel


@kernel(float_only=True)
def matmul(a: "view", b: "view", dtype: "dtype", bias: "view?" = None):
    """Batched a (..., m, k) @ b (..., k, n), batch dimensions already broadcast (a transpose
    is just strides), plus bias (n values, or None) on every row: Linear's fused epilogue."""
    sa, sb = a.shape, b.shape
    fits = len(sa) >= 2 and len(sb) == len(sa) and sa[-1] == sb[-2]
    if fits and len(sa) > 2:                    # batched: the same batch dimensions
        fits = tuple(sa[:-2]) == tuple(sb[:-2])
    if not fits:
        raise ValueError(f"matmul: expected a (..., m, k) and b (..., k, n) with the same "
                         f"batch dimensions, got shapes {tuple(sa)} and {tuple(sb)}")
    if bias is not None and tuple(bias.shape) != tuple(sb[-1:]):
        raise ValueError(f"matmul: bias must have shape ({sb[-1]},), got {tuple(bias.shape)}")
    return [(tuple(sa[:-1]) + (sb[-1],), dtype)]


def _inputs(kernel_name, q, k, v, causal, scale, dtype):
    """q (..., T, d), k (..., S, d), v (..., S, e) with one batch shape, S >= 1; causal None
    or an int offset >= 0 (query i sees keys 0 .. i + offset); scale a finite number; dtype
    float32 or float64 (a half one reaches the kernels as float32)."""
    fits = len(q.shape) >= 2 and len(k.shape) == len(q.shape) == len(v.shape)
    if fits:
        fits = (tuple(q.shape[:-2]) == tuple(k.shape[:-2]) == tuple(v.shape[:-2])
                and q.shape[-1] == k.shape[-1] and k.shape[-2] == v.shape[-2] and k.shape[-2] >= 1)
    if not fits:
        raise ValueError(f"{kernel_name}: expected q (..., T, d), k (..., S, d) and v (..., S, e) with "
                         f"the same batch dimensions and S >= 1, got shapes {tuple(q.shape)}, "
                         f"{tuple(k.shape)} and {tuple(v.shape)}")
    if causal is not None and not (type(causal) is int and causal >= 0):
        raise ValueError(f"{kernel_name}: causal must be None (no mask) or an int offset >= 0 (query i "
                         f"sees keys 0 .. i + offset), got {causal!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise ValueError(f"{kernel_name}: scale must be a finite number, got {scale!r}")
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"{kernel_name}: the kernels compute in float32 or float64, got {dtype!r}")


@kernel("out, lse", optional=True)
def attention(q: "view", k: "view", v: "view", causal: "int?", scale: "float", dtype: "dtype"):
    """Scaled dot-product attention (nn.functional's composite without the (T, S) matrix):
    out (..., T, e) row i = sum_j p_ij v_j, p_ij = e^(x_ij - lse_i), x_ij = scale q_i . k_j,
    lse (..., T) = log sum_j e^(x_ij), over the keys query i sees: all (causal None), or
    0 .. i + causal (0 is PyTorch's is_causal). For 4-d (B, H, T, d) queries out's buffer
    holds (B, T, H, e), heads interleaved (backend.attention_heads), as PyTorch's CPU kernel:
    their concatenation is then a view."""
    _inputs("attention", q, k, v, causal, scale, dtype)
    rows = tuple(q.shape[:-1])
    return [(rows + (v.shape[-1],), dtype), (rows, dtype)]


@kernel("dq, dk, dv", optional=True)
def attention_backward(grad: "view", q: "view", k: "view", v: "view", out: "view", lse: "view", causal: "int?",
                       scale: "float", dtype: "dtype"):
    """Attention's gradients, each laid out as out, from the forward's out and lse, p_ij
    recomputed: ds_ij = p_ij (grad_i . v_j - grad_i . out_i), dq_i = scale sum_j ds_ij k_j,
    dk_j = scale sum_i ds_ij q_i, dv_j = sum_i p_ij grad_i."""
    _inputs("attention_backward", q, k, v, causal, scale, dtype)
    rows = tuple(q.shape[:-1])
    for what, view, expected in (("out", out, rows + (v.shape[-1],)), ("grad", grad, rows + (v.shape[-1],)),
                                 ("lse", lse, rows)):
        if tuple(view.shape) != expected:
            differ("attention_backward", what, view.shape, expected)
    return [(tuple(t.shape), dtype) for t in (q, k, v)]
