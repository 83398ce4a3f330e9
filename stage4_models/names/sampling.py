"""Sampling names from a character language model (thesis, "Bi-gram language modelling"
and the MLP language model's inference): start from ``.``, draw the next character from
the model's distribution, append it, repeat until the model draws ``.`` again.

Both models sample through ``generate``; they differ only in ``next_probs``, which maps
the tokens so far to the distribution of the next one (the bigram looks at the last token,
the MLP at the last ``block_size``). A prompt fixes the first characters of the name.
"""
import random

from .data import DOT

MAX_LENGTH = 50                # a name is cut here if the model never draws '.'


def draw(probs, rng):
    """A token drawn from ``probs`` (non-negative, summing to 1): u uniform in [0, 1), then
    the first token whose cumulative probability exceeds u."""
    u = rng.random()
    total = 0.0
    for token, p in enumerate(probs):
        total += p
        if u < total:
            return token
    return max(t for t, p in enumerate(probs) if p > 0)     # u beyond a sum rounded below 1


def generate(next_probs, vocab, rng, prompt="", max_length=MAX_LENGTH):
    """One name: the prompt (checked against the vocabulary; an unknown character is a
    ValueError naming it), then characters drawn from ``next_probs(tokens)`` until ``.``
    or ``max_length`` characters. ``tokens`` starts with the ``.`` that opens every name."""
    tokens = [0] + vocab.encode(prompt)
    while len(tokens) - 1 < max_length:
        token = draw(next_probs(tokens), rng)
        if token == 0:
            break
        tokens.append(token)
    return vocab.decode(tokens[1:])


def sample_names(next_probs, vocab, n, seed, prompt="", max_length=MAX_LENGTH):
    """``n`` names drawn with a ``random.Random(seed)``: the same seed, the same names."""
    if DOT in prompt:
        raise ValueError(f"the prompt {prompt!r} holds '.', which marks the end of a name")
    vocab.encode(prompt)                         # unknown characters: an error before any work
    rng = random.Random(seed)
    return [generate(next_probs, vocab, rng, prompt, max_length) for _ in range(n)]
