"""The bigram language model (thesis, "Bi-gram language modelling"): the next character
depends on the previous one only.

Training is counting. ``counts[i, j]`` is how often token j follows token i in the
training names (each name framed by ``.``, so row ``.`` counts first letters and column
``.`` last letters). Dividing each row by its sum gives the |V| x |V| matrix

    P[i, j] = P(next = j | previous = i),        each row summing to 1.

A pair never seen in training has probability 0, and a single such pair in a dev name
makes that name infinitely unlikely. Add-k smoothing pretends every pair was seen k more
times: P[i, j] = (counts[i, j] + k) / (row sum + k |V|).

The quality of a model is the average negative log-likelihood of the next character,
over every (previous, next) pair of a set of names: -mean log P[previous, next], in nats.
Uniform guessing among 27 tokens scores ln 27 = 3.30.
"""
import numpy as np

import stage2_tensor as tg

from . import sampling
from .data import pairs


def count_pairs(words, vocab):
    """(|V|, |V|) int64 numpy array: counts[i, j] = how often token j follows token i."""
    counts = np.zeros((len(vocab), len(vocab)), dtype=np.int64)
    np.add.at(counts, pairs(words, vocab), 1)
    return counts


class Bigram:
    """Counts, smoothed by ``smoothing`` (k, 0 for none), normalised by row into ``probs``,
    a float64 (|V|, |V|) tensor on ``device``."""

    def __init__(self, counts, vocab, smoothing=0.0, device="cpu"):
        counts = np.asarray(counts)
        if counts.shape != (len(vocab), len(vocab)):
            raise ValueError(f"counts of shape {counts.shape} for a vocabulary of {len(vocab)} tokens")
        if smoothing < 0:
            raise ValueError(f"smoothing must be at least 0, got {smoothing}")
        self.vocab, self.smoothing, self.device = vocab, smoothing, device
        self.counts = tg.from_numpy(counts, device=device)
        smoothed = self.counts.double() + smoothing
        totals = smoothed.sum(dim=1, keepdim=True)
        if (totals == 0).numpy().any():
            empty = [vocab.chars[i] for i in np.flatnonzero(totals.numpy() == 0)]
            raise ValueError(f"no pair starts with {empty}: their rows cannot be normalised; "
                             "use smoothing > 0")
        self.probs = smoothed / totals
        self._rows = self.probs.tolist()           # for sampling: one Python list per row

    @classmethod
    def fit(cls, words, vocab, smoothing=0.0, device="cpu"):
        return cls(count_pairs(words, vocab), vocab, smoothing, device)

    def nll(self, words):
        """Average negative log-likelihood (nats) of every (previous, next) pair of
        ``words``; inf when one pair has probability 0."""
        prev, nxt = pairs(words, self.vocab)
        flat = tg.from_numpy(prev * len(self.vocab) + nxt, device=self.device)
        return -self.probs.log().reshape(-1)[flat].mean().item()

    def next_probs(self, tokens):
        """The distribution of the next token after ``tokens``: the row of the last one."""
        return self._rows[tokens[-1]]

    def sample(self, n, seed, prompt="", max_length=sampling.MAX_LENGTH):
        """``n`` names drawn with ``random.Random(seed)``, each starting with ``prompt``."""
        return sampling.sample_names(self.next_probs, self.vocab, n, seed, prompt, max_length)
