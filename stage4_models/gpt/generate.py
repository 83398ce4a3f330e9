"""Generating text with a GPT (thesis, "Training a GPT-like model": generateText): feed the
tokens so far, turn the last position's logits into a distribution, draw the next token,
append it, repeat.

- ``temperature`` divides the logits before the softmax: below 1 the distribution sharpens
  toward the most likely token, above 1 it flattens.
- ``top_k`` keeps only the k most likely tokens (the rest get probability 0).
- ``greedy`` takes the most likely token every time (the thesis's ``top1``); the output is
  then fixed by the prompt.
- ``stop``: a token id that ends generation once every row has produced it (the chatbot
  stops at the newline that ends its turn); the result is then shorter.
- ``seed`` makes sampling repeat: draws come from ``random.Random(seed)``, or from the
  package's generator (``tracegrad.seed``) when seed is None.

The model reads at most ``block_size`` tokens, so the context is cropped to the last
``block_size``. With ``use_cache`` (see kv_cache.py) the prompt is read once and every new
token costs one position, until the context fills the block; from then on each step
re-reads the cropped window, as without a cache, because the positions of the tokens kept
shift by one and their cached keys and values (made with the old positions) no longer hold.
"""
import random

import numpy as np

import stage2_tensor as tg
from stage2_tensor.factories import generator

from .kv_cache import KVCache


def next_token_distribution(logits, temperature=1.0, top_k=None):
    """Probabilities (float64 numpy, one row per batch element) from last-position logits
    (B, vocab): divided by the temperature, all but the top_k set to -inf, softmaxed."""
    z = np.array(logits.numpy(), dtype=np.float64) / temperature
    if top_k is not None and top_k < z.shape[-1]:
        kth = np.partition(z, -top_k, axis=-1)[:, -top_k, None]    # the k-th largest per row
        z = np.where(z < kth, -np.inf, z)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def draw(probs, rng):
    """One token per row of probs: the first whose cumulative probability exceeds u ~ U[0, 1)."""
    cumulative = np.cumsum(probs, axis=-1)
    u = np.array([[rng.random()] for _ in range(len(probs))]) * cumulative[:, -1:]
    return np.minimum((cumulative <= u).sum(axis=-1), probs.shape[-1] - 1)


def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, greedy=False, seed=None,
             use_cache=True, stop=None):
    """idx: int64 tensor (B, T) of prompt tokens (T >= 1). Returns (B, T + max_new_tokens),
    or fewer columns when every row has produced ``stop``."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature} (for the most likely "
                         f"token every time, pass greedy=True)")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1 (or None for all tokens), got {top_k}")
    if idx.ndim != 2 or idx.shape[1] < 1:
        raise ValueError(f"generate() needs token indices of shape (batch, length >= 1), got {idx.shape}")
    rng = random.Random(seed) if seed is not None else generator()
    block = model.config.block_size
    tokens = np.array(idx.tolist(), dtype=np.int64)
    cache = KVCache(block) if use_cache else None        # room for a whole block, allocated once
    was_training = model.training
    model.eval()
    try:
        with tg.no_grad():
            for _ in range(max_new_tokens):
                logits = _last_logits(model, tokens, block, cache, idx.device)
                if greedy:
                    nxt = np.array(logits.argmax(dim=-1).tolist())
                else:
                    nxt = draw(next_token_distribution(logits, temperature, top_k), rng)
                tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
                if stop is not None and (tokens[:, idx.shape[1]:] == stop).any(axis=1).all():
                    break
    finally:
        model.train(was_training)
    return tg.from_numpy(tokens, device=idx.device)


def _last_logits(model, tokens, block, cache, device):
    """The logits (B, vocab) after the last token: from the new tokens alone when the cache
    holds the rest, else from the whole (cropped) context."""
    if cache is not None and 0 < cache.length() < block and cache.length() + 1 == tokens.shape[1]:
        feed = tokens[:, -1:]                    # one new position; the cache has the others
    else:
        if cache is not None:
            cache.clear()                        # first step, or the window has slid
        feed = tokens[:, -block:]
    logits = model(tg.from_numpy(np.ascontiguousarray(feed), device=device), cache=cache)
    return logits[:, -1]
