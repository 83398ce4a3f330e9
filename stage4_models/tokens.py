"""Token datasets: a corpus encoded once into a file of token ids, then read back in
random windows for training a language model (thesis, "Training a GPT-like model").

    python -m stage4_models.tokens prepare CORPUS OUT.bin [--vocab DIR | --char]

CORPUS is a text file or a folder of ``*.txt`` files. Each file is a document, and in a
file the text ``<|endoftext|>`` also ends a document (the GPT-2 convention for corpora
such as OpenWebText); documents are written with the ``<|endoftext|>`` id between them,
so the model learns where one text stops and the next begins. The character tokenizer
(``--char``, tokenizer/char.py) has no such token; its documents are joined by a blank line.

The file is the ids and nothing else, little-endian uint16, 2 bytes per token: a corpus
of 300,000 tokens is 600 kB, and numpy maps it without reading it (``np.memmap``).
uint16 holds ids 0..65535, so a vocabulary with a larger id is refused rather than
silently wrapped around. GPT-2's 50,257 tokens fit.

``TokenStream(path, block_size, batch_size, seed)`` yields (x, y) batches: ``batch_size``
windows of ``block_size`` tokens, each starting at a random offset, and the same windows
moved one token on, the next-token targets. The same seed gives the same batches.
"""
import sys
from pathlib import Path

import numpy as np

from stage2_tensor.atomic import atomic_write

from .arguments import output_file
from .cli import Parser, dispatch
from .data import DataFile, read_text
from .tokenizer import ENDOFTEXT, CharTokenizer, GPT2Tokenizer

DTYPE = np.dtype("<u2")           # little-endian uint16, whatever the machine's order
MAX_ID = np.iinfo(DTYPE).max      # 65535
# The corpus the chapters and the benchmark tokenize (karpathy/char-rnn's tiny-shakespeare).
SHAKESPEARE = DataFile("shakespeare", "input.txt",
                       ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",),
                       "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed")


def documents(corpus):
    """The documents of a corpus: a file (split at '<|endoftext|>') or a folder of *.txt."""
    corpus = Path(corpus)
    if corpus.is_dir():
        files = sorted(corpus.glob("*.txt"))
        if not files:
            raise FileNotFoundError(f"no *.txt files in the corpus folder {corpus}")
    elif corpus.is_file():
        files = [corpus]
    else:
        raise FileNotFoundError(f"corpus not found: {corpus} (expected a text file or a folder of *.txt files)")
    docs = []
    for f in files:
        docs += read_text(f, "a UTF-8 text file (a document of the corpus)").split(ENDOFTEXT)
    return [d for d in docs if d]


def check_vocabulary(tokenizer):
    """Refuse a tokenizer whose ids do not fit in uint16."""
    if tokenizer.n_vocab - 1 > MAX_ID:
        raise ValueError(f"the vocabulary has {tokenizer.n_vocab} tokens (ids up to {tokenizer.n_vocab - 1}), "
                         f"but a token file stores uint16 ids 0..{MAX_ID}: use a vocabulary of at most "
                         f"{MAX_ID + 1} tokens")


def encode_documents(docs, tokenizer):
    """The ids of the documents, with the <|endoftext|> id (or, for a tokenizer without
    one, a blank line) between each two, as uint16."""
    check_vocabulary(tokenizer)
    eot = tokenizer.special.get(ENDOFTEXT)
    separator = [eot] if eot is not None else tokenizer.encode_ordinary("\n\n")
    ids = []
    for i, doc in enumerate(docs):
        if i:
            ids += separator
        ids += tokenizer.encode_ordinary(doc)
    return np.array(ids, dtype=DTYPE)


def prepare(corpus, out, tokenizer=None):
    """Encode ``corpus`` (file or folder) into ``out`` (uint16 LE ids); return the ids."""
    tokenizer = tokenizer or GPT2Tokenizer.default()
    check_vocabulary(tokenizer)       # before reading a large corpus
    ids = encode_documents(documents(corpus), tokenizer)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, ids.tofile)     # never leave a half-written token file behind
    return ids


def load(path, n_vocab=None):
    """The ids of a token file, memory-mapped (nothing is read until used). Given the
    vocabulary's size ``n_vocab``, every id is checked to be below it (one pass over the
    file): a file prepared with another tokenizer is refused, naming the first id that
    does not fit."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"token file not found: {path} (write one with "
                                f"python -m stage4_models.tokens prepare CORPUS {path})")
    size = path.stat().st_size
    if size % DTYPE.itemsize:
        raise ValueError(f"{path}: {size} bytes, expected an even number (2 bytes per uint16 token)")
    if size == 0:
        raise ValueError(f"{path}: empty token file")
    ids = np.memmap(path, dtype=DTYPE, mode="r")
    if n_vocab is not None and ids.max() >= n_vocab:
        at = int(np.argmax(ids >= n_vocab))
        raise ValueError(f"{path}: token {at} is id {ids[at]}, but the vocabulary has {n_vocab} "
                         f"tokens (ids 0..{n_vocab - 1}): was the file prepared with another tokenizer?")
    return ids


def split(ids, val_fraction=0.1):
    """(train, val): the first 1 - val_fraction of the tokens and the rest (a contiguous
    tail, so no validation window overlaps a training one)."""
    n = int(len(ids) * (1 - val_fraction))
    return ids[:n], ids[n:]


class TokenStream:
    """Random (x, y) training windows from a token file, reproducible by seed.

    x: int64 (batch_size, block_size), tokens[i : i + block_size] for random offsets i;
    y: the same windows one token later, tokens[i + 1 : i + block_size + 1].

    Two options serve fine-tuning on conversations: ``starts``, the only offsets a window
    may begin at (the start of a turn, so the model always reads a whole question), and
    ``scored``, one bool per token: a target whose token is not scored is given as -1,
    which the loss leaves out (the user's lines: the model is to answer, not to ask)."""

    def __init__(self, path_or_ids, block_size, batch_size, seed=0, starts=None, scored=None):
        self.ids = load(path_or_ids) if isinstance(path_or_ids, (str, Path)) else np.asarray(path_or_ids)
        if block_size < 1 or batch_size < 1:
            raise ValueError(f"block_size and batch_size must be >= 1, got {block_size} and {batch_size}")
        if len(self.ids) < block_size + 1:
            raise ValueError(f"{len(self.ids)} tokens, too few for one window of block_size {block_size} "
                             f"(needs block_size + 1 tokens: the targets are one token on)")
        self.block_size, self.batch_size, self.seed = block_size, batch_size, seed
        self.starts = None if starts is None else np.asarray(starts)[np.asarray(starts) < len(self.ids) - block_size]
        if self.starts is not None and not len(self.starts):
            raise ValueError(f"no allowed window start leaves room for block_size {block_size}")
        self.scored = None if scored is None else np.asarray(scored, dtype=bool)
        self.rng = np.random.default_rng(seed)

    def batch(self, step=None):
        """One (x, y) batch: the next from the stream's generator, or, given ``step``, the
        batch of that step, the same whenever it is asked for (resumed training draws the
        batches it would have drawn without stopping)."""
        rng = self.rng if step is None else np.random.default_rng([self.seed, step])
        if self.starts is None:
            starts = rng.integers(0, len(self.ids) - self.block_size, size=self.batch_size)
        else:
            starts = self.starts[rng.integers(0, len(self.starts), size=self.batch_size)]
        rows = starts[:, None] + np.arange(self.block_size + 1)     # one gather for x and y
        window = self.ids[rows].astype(np.int64)
        x, y = window[:, :-1], window[:, 1:]
        if self.scored is not None:
            y = np.where(self.scored[rows[:, 1:]], y, -1)
        return x, y

    def __iter__(self):
        while True:
            yield self.batch()


def conversation_targets(text):
    """A TokenStream's (scored, starts) for fine-tuning on ``text``, conversations of
    "User: ..." and "Bot: ..." lines (the chatbot's training text, chat/dataset.py), one
    token per character. ``scored``, one bool per character: False on the user's lines
    ("User: ...\n"), whose wording the model is not to learn to produce, True elsewhere
    (the Bot's lines, the handbook). ``starts``: the offsets of every line that is not a
    Bot line, where a training window may begin, so that no window opens with an answer
    whose question it cannot see."""
    scored = [True] * len(text)
    starts, offset = [], 0
    for line in text.split("\n"):
        if line.startswith("User:"):
            scored[offset:offset + len(line) + 1] = [False] * (len(line) + 1)
        if not line.startswith("Bot:"):
            starts.append(offset)
        offset += len(line) + 1
    return scored[:len(text)], starts


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.tokens", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare", help="encode a corpus into a uint16 token file")
    p.add_argument("corpus", help="a UTF-8 text file, or a folder of *.txt files (one document each)")
    p.add_argument("out", type=output_file, help="the token file to write (e.g. data/shakespeare.bin)")
    p.add_argument("--vocab", help="folder with encoder.json and vocab.bpe (default: GPT-2's)")
    p.add_argument("--char", action="store_true", help="one token per character (newline and printable ASCII)")
    return dispatch(parser.parse_args(argv), {"prepare": run_prepare})


def run_prepare(args):
    tokenizer = CharTokenizer() if args.char else None
    if args.vocab:
        tokenizer = GPT2Tokenizer.from_files(Path(args.vocab) / "encoder.json", Path(args.vocab) / "vocab.bpe")
    ids = prepare(args.corpus, args.out, tokenizer)
    print(f"wrote {args.out}: {len(ids):,} tokens ({len(ids) * DTYPE.itemsize:,} bytes, uint16 little-endian)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
