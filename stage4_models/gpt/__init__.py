"""GPT (thesis, section "GPT"): the decoder-only transformer of GPT-2 on stage2's tensors,
with GPT-2's parameter names. ``model.py`` holds it, one class per idea:
CausalSelfAttention, MLP, Block, GPT; ``pretrained.py`` loads GPT-2's released weights
(``GPT.from_pretrained``) from the safetensors files that ``safetensors.py`` reads."""
from .model import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig"]
