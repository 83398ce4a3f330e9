"""The names dataset and what a character language model reads from it (thesis,
"Bi-gram language modelling" and "Language Modelling using Neural Networks").

``names.txt`` holds 32,033 lowercase first names, one per line. ``load()`` finds it
(``stage4_models.data``: $TRACEGRAD_DATA/names, then ~/.cache/tracegrad/names, else a
download checked against its SHA-256) and checks every line.

* ``Vocabulary``: the characters of the names plus ``.``, the token that marks both the
  start and the end of a name (index 0), so a model also learns how long names are;
* ``split``: a seeded 80/10/10 split of the names into train, dev and test;
* ``windows``: the sliding window of the MLP language model, ``block_size`` characters of
  context (padded with ``.`` at the start) and the character that follows.
"""
import random

import numpy as np

from ..data import DataFile, fetch, read_text

FILE = DataFile("names", "names.txt",
                ("https://raw.githubusercontent.com/karpathy/makemore/master/names.txt",),
                "0a30b5557f192f32ab962680889aac5f6fda0f4cecf40a6d0b5694f58ea8cc4d")
COUNT = 32033
DOT = "."                      # start and end of a name
SPLITS = ("train", "dev", "test")
FRACTIONS = (0.8, 0.1, 0.1)
SEED = 42


def load(download=True):
    """The names of names.txt, in file order (32,033 of them)."""
    path, = fetch([FILE], download=download)
    words = read_names(path)
    if len(words) != COUNT:
        raise ValueError(f"{path}: {len(words)} names, expected {COUNT}")
    return words


def read_names(path):
    """The names of a UTF-8 text file, one a line (a final newline or none). A line that is
    empty or holds a space, ``.`` or an upper-case letter is an error naming the line."""
    lines = read_text(path, "one lowercase name a line").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        bad = sorted({c for c in line if c == DOT or c.isspace() or c != c.lower()})
        if not line or bad:
            what = "an empty line" if not line else f"{line!r} holds {bad}"
            raise ValueError(f"{path}, line {number}: {what}; expected one lowercase name a line")
    return lines


class Vocabulary:
    """Characters <-> token ids: ``.`` is 0, the other characters follow in sorted order
    (for names.txt: a..z are 1..26, 27 tokens in all)."""

    def __init__(self, chars):
        chars = "".join(chars)
        if not chars.startswith(DOT) or len(set(chars)) != len(chars):
            raise ValueError(f"a vocabulary is '.' followed by distinct characters, got {chars!r}")
        self.chars = chars
        self.stoi = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_words(cls, words):
        return cls(DOT + "".join(sorted(set("".join(words)))))

    def __len__(self):
        return len(self.chars)

    def __eq__(self, other):
        return isinstance(other, Vocabulary) and other.chars == self.chars

    def __repr__(self):
        return f"Vocabulary({self.chars!r})"

    def encode(self, text):
        """Token ids of ``text``; characters outside the vocabulary are a ValueError that
        names each of them."""
        unknown = sorted(set(text) - set(self.chars))
        if unknown:
            raise ValueError(f"unknown character(s) {', '.join(map(repr, unknown))} in {text!r}; "
                             f"the vocabulary is {self.chars!r}")
        return [self.stoi[c] for c in text]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


def split(words, seed=SEED, fractions=FRACTIONS):
    """{"train", "dev", "test"}: the names shuffled by ``seed``, then cut 80/10/10 (the
    first two sizes rounded down; the test set takes the rest). Each name lands in exactly
    one split; the same seed gives the same split."""
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) < 0:
        raise ValueError(f"split fractions must be three non-negative numbers summing to 1, got {fractions}")
    shuffled = list(words)
    random.Random(seed).shuffle(shuffled)
    n_train = int(fractions[0] * len(shuffled))
    n_dev = int(fractions[1] * len(shuffled))
    return {"train": shuffled[:n_train], "dev": shuffled[n_train:n_train + n_dev],
            "test": shuffled[n_train + n_dev:]}


def pairs(words, vocab):
    """Every (previous, next) token pair of the names, each name framed by ``.``:
    "emma" gives (., e), (e, m), (m, m), (m, a), (a, .). Two int64 arrays."""
    prev, nxt = [], []
    for word in words:
        ids = vocab.encode(DOT + word + DOT)
        prev += ids[:-1]
        nxt += ids[1:]
    return np.array(prev, dtype=np.int64), np.array(nxt, dtype=np.int64)


def windows(words, vocab, block_size):
    """The MLP language model's examples: X (N, block_size) int64, the ``block_size``
    tokens before each character of a name (``.`` before its start), and Y (N,), that
    character; the name's closing ``.`` is a target too. "emma" with block_size 3:

        ...->e  ..e->m  .em->m  emm->a  mma->.
    """
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    xs, ys = [], []
    for word in words:
        context = [0] * block_size
        for token in vocab.encode(word + DOT):
            xs.append(context)
            ys.append(token)
            context = context[1:] + [token]
    return (np.array(xs, dtype=np.int64).reshape(-1, block_size), np.array(ys, dtype=np.int64))


def context_of(ids, block_size):
    """The window the model sees after the tokens ``ids``: their last ``block_size``,
    padded on the left with ``.`` (id 0)."""
    window = list(ids)[-block_size:] if block_size else []
    return [0] * (block_size - len(window)) + window
