"""A character-level recurrent language model:

    tokens (B, T) -> Embedding -> (B, T, n_embd) -> RNN | LSTM | GRU, n_layer layers of
    ``hidden`` units -> (B, T, hidden) -> Linear -> logits (B, T, vocab)

Unlike the GPT, whose every position reads the whole window at once, the recurrent layers
read one token at a time and carry what they have read in their state (h, and the LSTM's
cell c): position t cannot start before t - 1 is done. Generation passes the state on, so
each new token costs one step whatever the length of the text so far.
"""
import random

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
from stage2_tensor.factories import generator

from ..gpt.generate import draw, next_token_distribution

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
GATES = {"rnn": 1, "lstm": 4, "gru": 3}      # rows of weight_ih / weight_hh per hidden unit


class CharRNN(nn.Module):
    def __init__(self, vocab_size, cell="lstm", n_embd=64, hidden=256, n_layer=2, dropout=0.0, device=None):
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"unknown cell {cell!r}; expected one of {sorted(CELLS)}")
        self.cell = cell
        self.embedding = nn.Embedding(vocab_size, n_embd, device=device)
        self.rnn = CELLS[cell](n_embd, hidden, n_layer, batch_first=True, dropout=dropout, device=device)
        self.head = nn.Linear(hidden, vocab_size, device=device)

    def forward(self, idx, state=None):
        """(logits (B, T, vocab), the state after the last token) of tokens idx (B, T)
        read from ``state`` (None: zeros)."""
        out, state = self.rnn(self.embedding(idx), state)
        return self.head(out), state

    def loss(self, idx, targets):
        """Mean next-token cross-entropy over the window (targets -1 are left out)."""
        logits, _ = self(idx)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())

    @tg.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, greedy=False, seed=None):
        """idx (B, T) continued by ``max_new_tokens`` drawn tokens: the prompt is read once,
        then each token is one step from the state (as generate.py draws for the GPT)."""
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature} (for the most likely "
                             "token every time, pass greedy=True)")
        if idx.ndim != 2 or idx.shape[1] < 1:
            raise ValueError(f"generate() needs token indices of shape (batch, length >= 1), got {idx.shape}")
        rng = random.Random(seed) if seed is not None else generator()
        was_training = self.training
        self.eval()
        logits, state = self(idx)
        tokens = [idx]
        for _ in range(max_new_tokens):
            last = logits[:, -1, :]
            if greedy:
                nxt = last.argmax(dim=-1, keepdim=True)
            else:
                probs = next_token_distribution(last, temperature, top_k)
                nxt = tg.tensor(draw(probs, rng)[:, None], dtype=tg.int64, device=idx.device)
            tokens.append(nxt)
            logits, state = self(nxt, state)
        self.train(was_training)
        return tg.cat(tokens, dim=1)
