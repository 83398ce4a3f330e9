"""Learning BPE merges from a corpus (thesis, "Tokenization": where vocab.bpe comes from),
and saving them in GPT-2's two files, so a reader can build a vocabulary for their own text.

Training is the tokenizer run backwards. Cut the corpus into GPT-2's pieces, count each
distinct piece once, and write it as bytes. Then repeat: count every adjacent pair of
symbols over all pieces (weighted by how often the piece occurs), merge the most frequent
pair everywhere, and record it as the next line of vocab.bpe, until the vocabulary has
the size asked for. The first merges are the commonest pairs (``Ġ t``, ``h e`` in GPT-2),
which is exactly the order the tokenizer applies them in.

Ties go to the smallest pair in byte order, so training is deterministic. Pair counts are
updated incrementally: a merge only touches the pieces that contain the pair (an index
from pair to pieces finds them), so each step costs what it changes, not the corpus.

``save`` writes vocab.bpe (``#version: 0.2``, then one merge per line) and encoder.json
(the 256 bytes, each merge's token, then ``<|endoftext|>``), in the formats GPT-2 and
tiktoken read; ``GPT2Tokenizer.from_files`` loads them back.
"""
import json
from collections import Counter, defaultdict
from pathlib import Path

from stage2_tensor.atomic import atomic_write_text

from . import byte_unicode
from .gpt2 import ENDOFTEXT, GPT2Tokenizer
from .pretokenize import pretokenize


def train(corpus, vocab_size, verbose=False):
    """The merges (list of (left, right) token strings, in rank order) that give a
    vocabulary of ``vocab_size`` tokens: 256 bytes + the merges + ``<|endoftext|>``.
    ``corpus``: a str, or a list of str (documents; no merge crosses from one to the next).
    Fewer merges come back when the corpus runs out of pairs."""
    if not isinstance(vocab_size, int) or vocab_size < 257:
        raise ValueError(f"vocab_size must be an int >= 257 (256 bytes + <|endoftext|>), got {vocab_size!r}")
    documents = [corpus] if isinstance(corpus, str) else list(corpus)
    piece_counts = Counter(p for doc in documents for p in pretokenize(doc))
    # Each distinct piece once, as its byte characters, with how often it occurs.
    words = [list(byte_unicode.encode(p.encode("utf-8"))) for p in piece_counts]
    counts = list(piece_counts.values())
    pair_counts, where = Counter(), defaultdict(set)
    for w, (word, n) in enumerate(zip(words, counts)):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += n
            where[pair].add(w)

    vocab = set(byte_unicode.BYTE_ENCODER.values())
    merges = []
    while len(vocab) + 1 < vocab_size and pair_counts:
        pair = _most_frequent(pair_counts)
        for w in sorted(where.pop(pair)):
            _merge_word(w, words, counts[w], pair, pair_counts, where)
        token = pair[0] + pair[1]
        # A token can be reached by two splits ("ab"+"c", "a"+"bc"); the tokenizer ranks
        # a pair by its token, so the second split needs no line of its own.
        if token not in vocab:
            vocab.add(token)
            merges.append(pair)
            if verbose and len(merges) % 100 == 0:
                print(f"{len(merges)} merges, last {pair} ({len(pair_counts)} distinct pairs)")
    return merges


def _most_frequent(pair_counts):
    """The pair with the highest count; among equals, the smallest in byte order."""
    best = max(pair_counts.values())
    tied = [p for p, n in pair_counts.items() if n == best]
    return min(tied, key=lambda p: (byte_unicode.decode(p[0]), byte_unicode.decode(p[1])))


def _merge_word(w, words, n, pair, pair_counts, where):
    """Merge every occurrence of ``pair`` in word ``w`` (left to right), moving the word's
    pair counts (``n`` occurrences of it) from its old pairs to its new ones."""
    old = words[w]
    left, right = pair
    new, i = [], 0
    while i < len(old):
        if i + 1 < len(old) and old[i] == left and old[i + 1] == right:
            new.append(left + right)
            i += 2
        else:
            new.append(old[i])
            i += 1
    for p in zip(old, old[1:]):
        pair_counts[p] -= n
        if pair_counts[p] <= 0:
            del pair_counts[p]
    for p in zip(new, new[1:]):
        pair_counts[p] += n
        where[p].add(w)
    words[w] = new


def save(merges, folder):
    """Write ``folder``/vocab.bpe and ``folder``/encoder.json, each atomically (a kill leaves
    a file as it was or whole and new; a kill between the two leaves a pair that
    ``GPT2Tokenizer.from_files`` refuses as not matching); return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    encoder = {c: i for i, c in enumerate(byte_unicode.BYTE_ENCODER.values())}
    for left, right in merges:
        encoder[left + right] = len(encoder)
    encoder[ENDOFTEXT] = len(encoder)
    vocab_bpe, encoder_json = folder / "vocab.bpe", folder / "encoder.json"
    atomic_write_text(vocab_bpe, "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    atomic_write_text(encoder_json, json.dumps(encoder))
    return encoder_json, vocab_bpe


def train_tokenizer(corpus, vocab_size, folder, verbose=False):
    """Train, save to ``folder`` and return the GPT2Tokenizer of the saved files."""
    return GPT2Tokenizer.from_files(*save(train(corpus, vocab_size, verbose), folder))
