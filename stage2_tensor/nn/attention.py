"""Multi-head attention (Vaswani et al. 2017), PyTorch's nn.MultiheadAttention, built on
F.attention_weights: each of num_heads heads attends with its own embed_dim / num_heads
slice of learned projections of the queries, keys and values; the heads' outputs are
concatenated and projected back.

Layout, as PyTorch: (L, N, E) queries and (S, N, E) keys and values (sequence first), or
(N, L, E) and (N, S, E) with ``batch_first=True``, or unbatched (L, E) and (S, E). The
masks follow nn.MultiheadAttention's convention, the opposite of
F.scaled_dot_product_attention's for bool masks: True means "may NOT attend".
"""
from .. import dtypes
from ..factories import zeros
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import Linear
from .modules import Module, Parameter


def _additive(mask, name, dtype):
    """A mask as numbers added to the scores: bool True -> -inf (hidden), False -> 0; a
    float mask as is, in the scores' dtype."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"MultiheadAttention: {name} must be a Tensor or None, got "
                        f"{type(mask).__name__}")
    if mask.dtype is dtypes.bool_:
        return zeros(*mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -float("inf"))
    if not mask.dtype.is_floating_point:
        raise TypeError(f"MultiheadAttention: {name} must be a bool or floating-point tensor, "
                        f"got {mask.dtype.name}")
    return mask.to(dtype=dtype)


def multi_head_attention_forward(query, key, value, num_heads, in_proj_weight, in_proj_bias,
                                 out_proj_weight, out_proj_bias, dropout_p=0.0, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 average_attn_weights=True, is_causal=False):
    """The computation of nn.MultiheadAttention (PyTorch's F.multi_head_attention_forward
    without its bias_k/bias_v, add_zero_attn and separate-projection options), on
    sequence-first (L, N, E) / (S, N, E) inputs or unbatched (L, E) / (S, E):

        q, k, v = query W_q^T + b_q, key W_k^T + b_k, value W_v^T + b_v   (W_* rows of
                  in_proj_weight, (3E, E), in that order)
        head h:   softmax(q_h k_h^T / sqrt(E / H) + masks) v_h   (dropout on the weights)
        output:   concat(heads) out_proj_weight^T + out_proj_bias         (L, N, E)

    Returns (output, weights): weights (N, L, S) averaged over the heads, or
    (N, H, L, S) with ``average_attn_weights=False`` (after dropout, as PyTorch), None
    unless ``need_weights``. ``attn_mask``: (L, S) or (N H, L, S); ``key_padding_mask``:
    (N, S) (unbatched: (S,)); bool True or -inf hides a key. ``is_causal`` is, as in
    PyTorch, a hint that ``attn_mask`` is causal: it needs the mask."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(t).__name__}")
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ValueError(f"MultiheadAttention: query, key and value must all be 3-D (batched) "
                         f"or all 2-D (unbatched); got shapes {query.shape}, {key.shape}, {value.shape}")
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None and isinstance(key_padding_mask, Tensor):
            key_padding_mask = key_padding_mask.unsqueeze(0)
    (L, N, E), S = query.shape, key.shape[0]
    if E != in_proj_weight.shape[1] or key.shape != (S, N, E) or value.shape != (S, N, E):
        raise ValueError(f"MultiheadAttention: expected query (L, N, {in_proj_weight.shape[1]}) "
                         f"and key and value of one shape (S, N, {in_proj_weight.shape[1]}); got "
                         f"{query.shape}, {key.shape} and {value.shape} (sequence first unless "
                         f"batch_first=True)")
    H = num_heads
    hd = E // H
    if is_causal and attn_mask is None:
        raise RuntimeError("MultiheadAttention: is_causal is a hint that attn_mask is the "
                           "causal mask; pass attn_mask too")
    mask = None
    if attn_mask is not None:
        mask = _additive(attn_mask, "attn_mask", query.dtype)
        if mask.shape == (N * H, L, S):
            mask = mask.reshape(N, H, L, S)
        elif mask.shape != (L, S):
            raise ValueError(f"MultiheadAttention: attn_mask must be of shape ({L}, {S}) or "
                             f"({N * H}, {L}, {S}) (batch * heads, L, S), got {attn_mask.shape}")
    if key_padding_mask is not None:
        pad = _additive(key_padding_mask, "key_padding_mask", query.dtype)
        if pad.shape != (N, S):
            raise ValueError(f"MultiheadAttention: key_padding_mask must be of shape ({N}, {S}) "
                             f"(batch, S), got {key_padding_mask.shape}")
        pad = pad.reshape(N, 1, 1, S)
        mask = pad if mask is None else mask + pad

    def heads(x, w, b, length):                  # (length, N, E) -> (N, H, length, hd)
        return F.linear(x, w, b).reshape(length, N, H, hd).permute(1, 2, 0, 3)

    bias = [None] * 3 if in_proj_bias is None else [in_proj_bias[i * E:(i + 1) * E] for i in range(3)]
    q = heads(query, in_proj_weight[:E], bias[0], L)
    k = heads(key, in_proj_weight[E:2 * E], bias[1], S)
    v = heads(value, in_proj_weight[2 * E:], bias[2], S)
    weights = F.dropout(F.attention_weights(q, k, mask), dropout_p, training)   # (N, H, L, S)
    out = (weights @ v).permute(2, 0, 1, 3).reshape(L, N, E)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    if need_weights:
        weights = weights.mean(dim=1) if average_attn_weights else weights
        weights = weights if batched else weights.squeeze(0)
    return (out if batched else out.squeeze(1)), (weights if need_weights else None)


def _check_flag(value, name):
    if value:
        raise ValueError(f"MultiheadAttention: {name} is not supported here; leave it at its default")


class MultiheadAttention(Module):
    """PyTorch's nn.MultiheadAttention(embed_dim, num_heads, dropout, bias, ...,
    batch_first): parameters ``in_proj_weight`` (3E, E), Xavier-uniform, ``in_proj_bias``
    (3E,), zeros, and ``out_proj``, a Linear(E, E) with PyTorch's Linear initialisation
    and a zero bias; ``forward`` as ``multi_head_attention_forward`` (above), returning
    (output, weights). ``dropout`` drops attention weights in training. PyTorch's
    add_bias_kv, add_zero_attn and key or value sizes other than embed_dim (kdim, vdim)
    are not offered."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        for name, n in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"MultiheadAttention: {name} must be a positive int, got {n!r}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"MultiheadAttention: dropout must be a probability in [0, 1], got {dropout!r}")
        _check_flag(add_bias_kv, "add_bias_kv")
        _check_flag(add_zero_attn, "add_zero_attn")
        if kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            raise ValueError(f"MultiheadAttention: kdim and vdim other than embed_dim "
                             f"({embed_dim}) are not supported; got kdim={kdim}, vdim={vdim}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.dropout, self.batch_first = dropout, batch_first
        self.kdim = self.vdim = embed_dim
        self.in_proj_weight = Parameter(zeros(3 * embed_dim, embed_dim, dtype=dtype, device=device))
        self.in_proj_bias = Parameter(zeros(3 * embed_dim, dtype=dtype, device=device)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        init.xavier_uniform_(self.in_proj_weight)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if self.batch_first and isinstance(query, Tensor) and query.ndim == 3:
            query, key, value = (t.transpose(0, 1) if isinstance(t, Tensor) else t
                                 for t in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.out_proj.weight, self.out_proj.bias, self.dropout, self.training,
            key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal)
        if self.batch_first and out.ndim == 3:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, "
                f"batch_first={self.batch_first}")
