"""GPT (thesis, section "GPT"): the decoder-only transformer of GPT-2 on stage2's tensors,
with GPT-2's parameter names. ``model.py`` holds it, one class per idea:
CausalSelfAttention, MLP, Block, GPT."""
from .model import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig"]
