"""GPT, the decoder-only transformer of GPT-2 (thesis, section "GPT"), on stage2's tensors:
token and position embeddings, n_layer pre-LayerNorm blocks of causal self-attention and an
MLP, a final LayerNorm and a language-model head that shares the token embedding's weight.

Parameter names are GPT-2's (``transformer.wte.weight``, ``transformer.h.0.attn.c_attn.weight``,
...), so Hugging Face checkpoints map onto them one to one (their Conv1D weights transposed).

    model = GPT(GPTConfig(vocab_size=65, block_size=128, n_layer=4, n_head=4, n_embd=128))
    model.to("cpu")                        # stage3's native kernels
    logits, loss = model(idx, targets)     # idx, targets: int64 (B, T)
    loss = model.loss(idx, targets)        # the same loss without the logits (training)
"""
import math
from dataclasses import dataclass

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
from stage2_tensor import fused_attention

SIZES = ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")     # GPTConfig's shape fields


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int            # the longest sequence the model reads (positions 0..block_size-1)
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0
    bias: bool = True          # biases in the Linear layers (GPT-2 has them)

    def __post_init__(self):
        # Checked here, where every GPT's shape is set (a config.json's values come straight
        # in): n_head 0 would otherwise surface as a ZeroDivisionError deep in a layer.
        for name in SIZES:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"GPTConfig: {name} must be an int, got {value!r}")
            if value < 1:
                raise ValueError(f"GPTConfig: {name} must be at least 1, got {value}")
        if self.n_embd % self.n_head:
            raise ValueError(f"GPTConfig: n_embd ({self.n_embd}) must be a multiple of n_head "
                             f"({self.n_head}), each head taking n_embd / n_head of it")


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t attends to positions 0..t only
    (thesis, section "Self-attention"). One Linear, ``c_attn``, makes queries, keys and values
    for every head at once; scores q.k / sqrt(head_dim) above the diagonal get -inf, so after
    the softmax the future has weight 0; ``c_proj`` mixes the heads' outputs."""

    def __init__(self, config):
        super().__init__()
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self._masks = {}       # (T, past, device, dtype) -> additive causal mask; not a parameter
        self.keep_attention = False   # set True to keep the last weights (the attention figure)
        self.last_attention = None

    def causal_mask(self, T, past, device, dtype):
        """(T, past + T): row i is query position past + i, which may see keys 0..past + i;
        0 there and -inf beyond. Adding it to the scores does what masked_fill does, in one
        operation whose gradient is the identity."""
        key = (T, past, device, dtype)
        if key not in self._masks:
            future = tg.arange(T, device=device).unsqueeze(-1) + past < tg.arange(past + T, device=device)
            self._masks[key] = tg.zeros(T, past + T, dtype=dtype, device=device).masked_fill(future, -math.inf)
        return self._masks[key]

    def fused(self, q, k, v):
        """Whether the device's fused attention runs: nothing asks for the weights (the
        attention figure's keep_attention, active dropout on them) and the device has the
        kernels. Otherwise the explicit path, which the chapter shows."""
        dropping = self.attn_dropout.p > 0 and self.training
        return not self.keep_attention and not dropping and fused_attention.fused(q, k, v)

    def forward(self, x, cache=None):
        """x: (B, T, C). With a KVCache (generation), x holds only the new positions: their
        keys and values are appended to the cache and their queries attend to all of it."""
        B, T, C = x.shape
        H, hd = self.n_head, C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)                 # three (B, T, C) views
        q, k, v = (t.view(B, T, H, hd).transpose(1, 2) for t in (q, k, v))   # (B, H, T, hd)
        past = 0
        if cache is not None:
            past = cache.length(self)
            k, v = cache.append(self, k, v)                      # (B, H, past + T, hd)
        if self.fused(q, k, v):
            # The same computation as below in one kernel each way, which never keeps the
            # (T, T) weights of a head (stage2_tensor/fused_attention.py). New positions
            # past..past+T-1: query i sees keys 0..past+i; one new query sees every key.
            y = fused_attention.attention(q, k, v, causal=past if T > 1 else None)
            self.last_attention = None
        else:
            # One new query (generation) may see every key; otherwise the future is masked.
            mask = self.causal_mask(T, past, x.device, x.dtype) if T > 1 else None
            att = F.attention_weights(q, k, mask)                # (B, H, T, past + T)
            self.last_attention = att if self.keep_attention else None
            y = self.attn_dropout(att) @ v                       # (B, H, T, hd)
        y = y.transpose(1, 2).reshape(B, T, C)                   # the heads side by side
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward network: widen 4x, GELU, project back. The GELU is GPT-2's
    tanh approximation (Hugging Face's "gelu_new", PyTorch's approximate="tanh"), so that
    GPT-2's released weights compute exactly what they were trained with."""

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """One transformer block, pre-LayerNorm: x + attn(ln_1(x)), then + mlp(ln_2(x)). The
    residual path is never normalised, so gradients reach early layers undiminished."""

    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class Modules(nn.Module):
    """Named sub-modules as attributes, PyTorch's ModuleDict: gives ``transformer.wte``."""

    def __init__(self, **modules):
        super().__init__()
        vars(self).update(modules)


class GPT(nn.Module):
    """The language model (thesis, section "GPT"): ``model(idx)`` gives logits (B, T,
    vocab_size) for int64 token indices idx (B, T); ``model(idx, targets)`` gives (logits,
    loss), the mean cross-entropy of predicting targets[b, t] at every position (positions
    whose target is -1 are left out); ``model.loss(idx, targets)`` that loss alone, without
    forming the logits (training).

    Initialisation is GPT-2's: weights N(0, 0.02), biases 0, LayerNorms 1 and 0, and the two
    projections that add into the residual stream (``attn.c_proj``, ``mlp.c_proj``) N(0,
    0.02 / sqrt(2 n_layer)), so the stream's variance does not grow with depth."""

    def __init__(self, config, device=None, dtype=None):
        super().__init__()
        self.config = config
        self.transformer = Modules(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList(Block(config) for _ in range(config.n_layer)),
            ln_f=nn.LayerNorm(config.n_embd))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight       # tied: one Parameter, two names
        self._init_weights(0.02, 0.02 / math.sqrt(2 * config.n_layer))
        if device is not None or dtype is not None:
            self.to(device, dtype)

    def _init_weights(self, std, residual_std):
        with tg.no_grad():
            for name, m in self.named_modules():
                if isinstance(m, (nn.Linear, nn.Embedding)) and m is not self.lm_head:  # tied
                    s = residual_std if name.endswith("c_proj") else std
                    m.weight.copy_(tg.normal(m.weight.shape, 0.0, s, dtype=m.weight.dtype,
                                             device=m.weight.device))
                if isinstance(m, nn.Linear) and m.bias is not None:
                    m.bias.zero_()

    def num_parameters(self):
        """Trainable numbers; the tied LM head counts once (it is the token embedding)."""
        return sum(p.numel() for p in self.parameters())

    @classmethod
    def from_pretrained(cls, folder, device=None, dtype=None):
        """GPT-2's released weights from a Hugging Face folder (pretrained.py says how)."""
        from .pretrained import from_pretrained     # imported here: pretrained.py imports GPT
        return from_pretrained(folder, device, dtype)

    def features(self, idx, cache=None):
        """The last LayerNorm's output (B, T, n_embd) for idx: int64 (B, T), what the LM head
        reads. With a KVCache holding P earlier positions, idx holds the next T tokens, at
        positions P..P+T-1 (see generate.py)."""
        B, T = idx.shape
        past = cache.length() if cache is not None else 0
        if past + T > self.config.block_size:
            raise ValueError(f"cannot forward a sequence of length {past + T}: the block size "
                             f"(the longest sequence the model reads) is {self.config.block_size}")
        t = self.transformer
        # The positions are past..past+T-1, so their embeddings are rows of the table: a view.
        x = t.drop(t.wte(idx) + t.wpe.weight[past:past + T])     # (B, T, n_embd)
        for block in t.h:
            x = block(x, cache)
        return t.ln_f(x)

    def forward(self, idx, targets=None, cache=None):
        """idx: int64 (B, T): the logits (B, T, vocab_size), and with targets (B, T) the loss
        as well, (logits, loss). Training needs only the loss: ``loss`` computes it without
        the logits."""
        logits = self.lm_head(self.features(idx, cache))          # (B, T, vocab_size)
        if targets is None:
            return logits
        B, T = idx.shape
        # A target of -1 is not scored (fine-tuning a chatbot scores its answers only).
        loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T), ignore_index=-1)
        return logits, loss

    def loss(self, idx, targets):
        """``model(idx, targets)[1]``, the mean cross-entropy (targets of -1 left out), without
        the (B, T, vocab_size) logits: F.linear_cross_entropy takes the LM head and the loss
        together, over chunks of the vocabulary where the device has the kernel (the
        performance chapter). The same value and gradients within float rounding."""
        if not isinstance(targets, tg.Tensor) or targets.shape != idx.shape:
            raise ValueError(f"GPT.loss: targets must be a tensor of idx's shape {idx.shape}, one "
                             f"next token per position, got {getattr(targets, 'shape', type(targets).__name__)}")
        B, T = idx.shape
        x = self.features(idx).reshape(B * T, -1)
        return F.linear_cross_entropy(x, self.lm_head.weight, targets.reshape(B * T), bias=self.lm_head.bias,
                                      ignore_index=-1)

    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, greedy=False, seed=None,
                 use_cache=True, stop=None):
        """idx (B, T) followed by max_new_tokens sampled tokens (see generate.py)."""
        from .generate import generate
        return generate(self, idx, max_new_tokens, temperature, top_k, greedy, seed, use_cache, stop)
