"""The Transformer (Vaswani et al. 2017), PyTorch's nn.Transformer and its pieces, built on
MultiheadAttention (attention.py): an encoder layer is self-attention then a feed-forward
network, each wrapped in a residual connection and a LayerNorm; a decoder layer has a
second attention, over the encoder's output (the "memory"), between the two. The stacks
(TransformerEncoder, TransformerDecoder) are copies of one layer; nn.Transformer is an
encoder and a decoder stack, each ending in a LayerNorm.

Arguments, defaults, parameter names (so state_dict keys) and the order of the operations
are PyTorch's: post-norm ``x = norm(x + block(x))`` by default, pre-norm
``x = x + block(norm(x))`` with ``norm_first=True``; sequence-first (S, N, E) inputs unless
``batch_first=True``; masks as MultiheadAttention reads them (a bool True, or -inf, hides a
key). PyTorch's fast path (nested tensors at inference) computes the same numbers, except
that it zeros padded positions' outputs; here they are computed as in training.
"""
import copy

from ..factories import full
from ..tensor import Tensor
from . import functional as F
from . import init
from .attention import MultiheadAttention
from .layers import Dropout, LayerNorm, Linear
from .modules import Module, ModuleList


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """The causal mask of a sequence of sz: 0.0 where query i may see key j (j <= i),
    -inf above the diagonal (float32 unless ``dtype``), as PyTorch's."""
    if isinstance(sz, bool) or not isinstance(sz, int) or sz < 0:
        raise ValueError(f"generate_square_subsequent_mask: sz must be a non-negative int, got {sz!r}")
    return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _activation(activation, where):
    """"relu" or "gelu" as F's function, or the callable itself (PyTorch's rule)."""
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return F.relu if activation == "relu" else F.gelu
    if not callable(activation):
        raise TypeError(f"{where}: activation must be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__}")
    return activation


def _is_causal(mask, is_causal, size):
    """PyTorch's reading of an ``is_causal`` of None: whether ``mask`` is the causal mask
    of ``size`` (a hint only: the mask is what attention applies here)."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    causal = generate_square_subsequent_mask(size, device=mask.device, dtype=mask.dtype)
    return mask.shape == causal.shape and bool((mask == causal).all())


def _length(x, batch_first):
    """The sequence length of a (S, E), (S, N, E) or, batch first, (N, S, E) input."""
    return x.shape[0] if x.ndim == 2 or not batch_first else x.shape[1]


class _Layer(Module):
    """What both layers share: the feed-forward network, its dropouts and activation."""

    def _feed_forward_parts(self, d_model, dim_feedforward, dropout, activation, bias, device, dtype):
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.activation = _activation(activation, type(self).__name__)

    def _norm(self, d_model, eps, bias, device, dtype):
        return LayerNorm(d_model, eps=eps, bias=bias, device=device, dtype=dtype)

    def _ff_block(self, x, dropout):
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    @staticmethod
    def _attend(attention, x, memory, mask, padding, is_causal, dropout):
        return dropout(attention(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                                 need_weights=False, is_causal=is_causal)[0])


class TransformerEncoderLayer(_Layer):
    """Self-attention and a feed-forward network (linear1, activation, dropout, linear2),
    each in a residual connection with a LayerNorm (norm1, norm2), dropout on each
    block's output (dropout1, dropout2); PyTorch's nn.TransformerEncoderLayer."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device, dtype=dtype)
        self._feed_forward_parts(d_model, dim_feedforward, dropout, activation, bias, device, dtype)
        self.norm_first = norm_first
        self.norm1 = self._norm(d_model, layer_norm_eps, bias, device, dtype)
        self.norm2 = self._norm(d_model, layer_norm_eps, bias, device, dtype)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src

        def attend(y):
            return self._attend(self.self_attn, y, y, src_mask, src_key_padding_mask, is_causal,
                                self.dropout1)
        if self.norm_first:
            x = x + attend(self.norm1(x))
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + attend(x))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_Layer):
    """Self-attention over the target (self_attn), attention from the target to the
    encoder's output (multihead_attn), then the feed-forward network, each in a residual
    connection with a LayerNorm (norm1, norm2, norm3) and dropout (dropout1, 2, 3);
    PyTorch's nn.TransformerDecoderLayer."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, device=device, dtype=dtype)
        self._feed_forward_parts(d_model, dim_feedforward, dropout, activation, bias, device, dtype)
        self.norm_first = norm_first
        self.norm1 = self._norm(d_model, layer_norm_eps, bias, device, dtype)
        self.norm2 = self._norm(d_model, layer_norm_eps, bias, device, dtype)
        self.norm3 = self._norm(d_model, layer_norm_eps, bias, device, dtype)
        self.dropout1, self.dropout2, self.dropout3 = Dropout(dropout), Dropout(dropout), Dropout(dropout)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt

        def attend_self(y):
            return self._attend(self.self_attn, y, y, tgt_mask, tgt_key_padding_mask,
                                tgt_is_causal, self.dropout1)

        def attend_memory(y):
            return self._attend(self.multihead_attn, y, memory, memory_mask,
                                memory_key_padding_mask, memory_is_causal, self.dropout2)
        if self.norm_first:
            x = x + attend_self(self.norm1(x))
            x = x + attend_memory(self.norm2(x))
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + attend_self(x))
        x = self.norm2(x + attend_memory(x))
        return self.norm3(x + self._ff_block(x, self.dropout3))


def _clones(layer, num_layers, where):
    if not isinstance(layer, Module):
        raise TypeError(f"{where}: expected a layer (a Module) to copy, got {type(layer).__name__}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, int) or num_layers < 1:
        raise ValueError(f"{where}: num_layers must be a positive int, got {num_layers!r}")
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


class TransformerEncoder(Module):
    """num_layers copies of ``encoder_layer`` (each with its own parameters, starting
    equal), applied in turn, then ``norm`` when given; PyTorch's nn.TransformerEncoder.
    ``is_causal`` None: whether ``mask`` is the causal mask, passed to the layers as
    their hint."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers, "TransformerEncoder")
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        _check_input(src, "TransformerEncoder", "src")
        is_causal = _is_causal(mask, is_causal, _length(src, self.layers[0].self_attn.batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=is_causal)
        return self.norm(output) if self.norm is not None else output


class TransformerDecoder(Module):
    """num_layers copies of ``decoder_layer``, each reading the encoder's output, then
    ``norm`` when given; PyTorch's nn.TransformerDecoder."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers, "TransformerDecoder")
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        _check_input(tgt, "TransformerDecoder", "tgt")
        batch_first = self.layers[0].self_attn.batch_first
        tgt_is_causal = _is_causal(tgt_mask, tgt_is_causal, _length(tgt, batch_first))
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self.norm(output) if self.norm is not None else output


def _check_input(x, where, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{where}: {name} must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3):
        raise ValueError(f"{where}: {name} must be (S, E) unbatched or (S, N, E) / (N, S, E) "
                         f"batched, got shape {x.shape}")


class Transformer(Module):
    """An encoder stack and a decoder stack, each ending in a LayerNorm, every matrix
    Xavier-uniform initialised; PyTorch's nn.Transformer. ``forward(src, tgt)``: the
    encoder reads src, the decoder tgt and the encoder's output; the result has tgt's
    shape. ``custom_encoder`` / ``custom_decoder`` replace the stacks."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        layer = dict(d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward, dropout=dropout,
                     activation=activation, layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                     norm_first=norm_first, bias=bias, device=device, dtype=dtype)
        norm = dict(eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(**layer), num_encoder_layers, LayerNorm(d_model, **norm))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(**layer), num_decoder_layers, LayerNorm(d_model, **norm))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
                src_is_causal=None, tgt_is_causal=None, memory_is_causal=False):
        _check_input(src, "Transformer", "src")
        _check_input(tgt, "Transformer", "tgt")
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and (tgt.ndim != 3 or src.shape[batch] != tgt.shape[batch]):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
