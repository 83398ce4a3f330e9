"""GPT-2's tokenizer (thesis, "Tokenization"): text -> token ids -> text, byte-identical
to OpenAI's (tiktoken's ``gpt2`` encoding).

    tok = GPT2Tokenizer.default()          # finds gpt2/encoder.json and gpt2/vocab.bpe
    tok.encode("Hello world")              # [15496, 995]
    tok.decode([15496, 995])               # 'Hello world'

Encoding is three steps, one file each: cut the text into pieces (``pretokenize.py``),
write each piece's UTF-8 bytes as GPT-2 byte characters (``byte_unicode.py``), merge each
piece's symbols by rank (``bpe.py``) and look the symbols up in encoder.json. Most text
repeats its words, so the ids of every piece seen are cached: after the first page of a
book, encoding is mostly one regex pass and one dictionary lookup per piece. Pieces
of more than ``bpe.LONG`` characters are not cached: they seldom come back, and one of
megabytes would stay in memory.

The two files come from GPT-2's release: ``encoder.json`` maps each of the 50,257 tokens
(as a string of byte characters) to its id; ``vocab.bpe`` lists the 50,000 merges in
rank order. A token's id is its merge rank (bytes 0..255, then 256 + line), which
``from_files`` checks, so one table serves both merging and ids. ``<|endoftext|>``
(50256) is the one special token: it separates documents, and ``encode`` only produces it
when asked to (``allowed_special``); otherwise the text "<|endoftext|>" is ordinary text.
"""
import json
from operator import index
from pathlib import Path

import regex

from ..data import DataFile, fetch, read_text
from . import byte_unicode
from .bpe import LONG, bpe
from .pretokenize import PATTERN

ENDOFTEXT = "<|endoftext|>"
URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"
FILES = (DataFile("gpt2", "encoder.json", (URL + "encoder.json",),
                  "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"),
         DataFile("gpt2", "vocab.bpe", (URL + "vocab.bpe",),
                  "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"))
CACHE_LIMIT = 1 << 18     # pieces remembered; the cache starts over when it is full


class GPT2Tokenizer:
    """A byte-level BPE tokenizer with GPT-2's pre-tokenizer.

    ``encoder``: {token string in byte characters: id} of the mergeable tokens, whose ids
    are their ranks; ``special``: {special token text: id}, e.g. {"<|endoftext|>": 50256}.
    """

    def __init__(self, encoder, special=None):
        self.encoder = dict(encoder)
        self.special = dict(special or {})
        check_ids(self.encoder, self.special)
        self.decoder = {i: byte_unicode.decode(s) for s, i in self.encoder.items()}
        self.decoder.update({i: s.encode("utf-8") for s, i in self.special.items()})
        self.n_vocab = len(self.decoder)
        self._cache = {}
        self._special_pattern = None

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_files(cls, encoder_json, vocab_bpe):
        """The tokenizer of an encoder.json and a vocab.bpe (GPT-2's, or ``train.save``'s)."""
        encoder_json, vocab_bpe = Path(encoder_json), Path(vocab_bpe)
        for path in (encoder_json, vocab_bpe):
            if not path.is_file():
                raise FileNotFoundError(f"tokenizer file not found: {path} (expected GPT-2's "
                                        f"encoder.json and vocab.bpe, or files written by train.save)")
        expected = "a JSON object {token: id} (GPT-2's encoder.json)"
        try:
            encoder = json.loads(read_text(encoder_json, expected))
        except json.JSONDecodeError as err:
            raise ValueError(f"{encoder_json}: not a JSON file ({err}); expected {expected}") from None
        if not isinstance(encoder, dict):
            raise ValueError(f"{encoder_json}: expected {expected}, got {type(encoder).__name__}")
        special = {s: encoder.pop(s) for s in (ENDOFTEXT,) if s in encoder}
        try:
            tokenizer = cls(encoder, special)
        except ValueError as err:
            raise ValueError(f"{encoder_json}: {err}") from None
        try:
            ranks = ranks_from_merges(read_merges(vocab_bpe))
        except ValueError as err:
            message = str(err)
            raise ValueError(message if str(vocab_bpe) in message else f"{vocab_bpe}: {message}") from None
        if encoder != ranks:
            wrong = next((t for t in ranks if encoder.get(t) != ranks[t]), None) or \
                next(t for t in encoder if t not in ranks)
            raise ValueError(f"{encoder_json} and {vocab_bpe} do not match: token {wrong!r} has id "
                             f"{encoder.get(wrong)} in encoder.json but rank {ranks.get(wrong)} from "
                             f"vocab.bpe (bytes 0-255, then 256 + merge line); expected equal")
        return tokenizer

    @classmethod
    def default(cls, download=True):
        """GPT-2's tokenizer, its files found by ``stage4_models.data`` ($TRACEGRAD_DATA/gpt2,
        ~/.cache/tracegrad/gpt2, else a download checked against its SHA-256)."""
        return cls.from_files(*fetch(FILES, download=download))

    # ---- encoding ----------------------------------------------------------------------
    def encode(self, text, allowed_special=()):
        """The token ids of ``text``. Special-token text (e.g. "<|endoftext|>") is encoded
        as ordinary text unless it is in ``allowed_special`` (a set of names, or "all"),
        in which case it becomes its one id."""
        if not isinstance(text, str):
            raise TypeError(f"encode takes a str, got {type(text).__name__} (use encode_bytes for bytes)")
        allowed = self._allowed(allowed_special)
        if not allowed:
            return self.encode_ordinary(text)
        ids = []
        for i, chunk in enumerate(self._split_special(text, allowed)):
            if i % 2:
                ids.append(self.special[chunk])
            else:
                ids += self.encode_ordinary(chunk)
        return ids

    def encode_ordinary(self, text):
        """The token ids of ``text``, special-token text included, as ordinary text."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates have no UTF-8 form; like tiktoken, they become U+FFFD.
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return self._encode_pieces(PATTERN.findall(text), "strict")

    def encode_bytes(self, data):
        """The token ids of raw bytes, which need not be valid UTF-8: the pieces are cut
        in the text with each invalid byte standing in for itself (Python's
        ``surrogateescape``), and every byte is kept, so ``decode_bytes`` gives them back."""
        text = bytes(data).decode("utf-8", "surrogateescape")
        return self._encode_pieces(PATTERN.findall(text), "surrogateescape")

    def _encode_pieces(self, pieces, errors):
        cache, ids = self._cache, []
        for piece in pieces:
            piece_ids = cache.get(piece)
            if piece_ids is None:
                piece_ids = self._encode_piece(piece.encode("utf-8", errors))
                if len(piece) <= LONG:
                    if len(cache) >= CACHE_LIMIT:
                        cache.clear()
                    cache[piece] = piece_ids
            ids += piece_ids
        return ids

    def _encode_piece(self, data):
        symbols = byte_unicode.encode(data)
        whole = self.encoder.get(symbols)
        if whole is not None:           # the piece is one token (most words are)
            return [whole]
        return [self.encoder[s] for s in bpe(symbols, self.encoder)]

    def _allowed(self, allowed_special):
        if allowed_special == "all":
            return set(self.special)
        allowed = {allowed_special} if isinstance(allowed_special, str) else set(allowed_special)
        unknown = allowed - set(self.special)
        if unknown:
            raise ValueError(f"allowed_special names unknown special tokens {sorted(unknown)}; "
                             f"this tokenizer's are {sorted(self.special)} (or pass 'all')")
        return allowed

    def _split_special(self, text, allowed):
        """Text and allowed special tokens, alternating: [text, special, text, ...]."""
        pattern = "(" + "|".join(regex.escape(s) for s in sorted(allowed, key=len, reverse=True)) + ")"
        return regex.split(pattern, text)

    # ---- decoding ----------------------------------------------------------------------
    def decode_bytes(self, ids):
        """The bytes the token ids stand for (inverse of ``encode_bytes`` and ``encode``)."""
        return b"".join(look_up(self.decoder, ids))

    def decode(self, ids):
        """The text of the token ids. A token may end inside a multi-byte character; bytes
        that do not form valid UTF-8 become U+FFFD (use ``decode_bytes`` to keep them)."""
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def token_bytes(self, i):
        """The bytes of the single token ``i``."""
        return self.decode_bytes([i])

    def __repr__(self):
        return f"GPT2Tokenizer(n_vocab={self.n_vocab}, special={self.special})"


def check_ids(encoder, special):
    """Refuse a vocabulary whose ids are not 0..n_vocab - 1, each once (n_vocab: its number
    of tokens, mergeable and special), as tiktoken does given ``explicit_n_vocab``. A
    model's embedding table has a row per id, so an id of 10**12 would size it, and a
    negative one would read a row from the end."""
    n_vocab, owner = len(encoder) + len(special), {}
    for kind, table in (("token", encoder), ("special token", special)):
        for token, i in table.items():
            if not isinstance(token, str) or not token:
                raise ValueError(f"{kind} {token!r}: expected a non-empty str")
            if type(i) is not int or not 0 <= i < n_vocab:
                raise ValueError(f"{kind} {token!r} has id {i!r}: expected an int in 0..{n_vocab - 1} "
                                 f"(the ids of a vocabulary of {n_vocab} tokens)")
            if i in owner:
                raise ValueError(f"{kind} {token!r} has id {i}, which {owner[i]!r} has already: "
                                 f"every token needs its own id")
            owner[i] = token


def look_up(table, ids):
    """[table[i] for i in ids] (table: {id: token}); an id not in it (negative, too large,
    not an int) is a ValueError naming the id and the vocabulary's range. ``index`` lets
    numpy's ints in and keeps 1.0 out, which a dict would take for 1."""
    try:
        return [table[index(i)] for i in ids]
    except (KeyError, TypeError):       # find the culprit only on the error path
        for i in ids:
            try:
                table[index(i)]
            except (KeyError, TypeError):
                raise ValueError(f"unknown token id {i!r}: expected an int in 0..{len(table) - 1}") from None
        raise


def read_merges(vocab_bpe):
    """The merges of a vocab.bpe file, in rank order, as (left, right) pairs of strings."""
    path = Path(vocab_bpe)
    lines = read_text(path, "GPT-2's vocab.bpe ('#version: 0.2', then one merge a line)").split("\n")
    if not lines or not lines[0].startswith("#version"):
        raise ValueError(f"{path}: first line {lines[0][:40]!r}, expected '#version: 0.2'")
    merges = []
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        pair = line.split(" ")
        if len(pair) != 2 or not all(pair):
            raise ValueError(f"{path}, line {number}: {line[:60]!r}, expected two tokens separated "
                             f"by one space")
        merges.append(tuple(pair))
    return merges


def ranks_from_merges(merges):
    """{token string: rank}: the 256 bytes in GPT-2's order, then each merge's result."""
    ranks = {c: i for i, c in enumerate(byte_unicode.BYTE_ENCODER.values())}
    for left, right in merges:
        for side in (left, right):
            if side not in ranks:
                raise ValueError(f"merge {left!r} {right!r} uses {side!r}, which no earlier merge made")
        ranks.setdefault(left + right, len(ranks))
    return ranks
