"""The tokenizer from a shell (thesis, "Tokenization"):

    python -m stage4_models.tokenizer encode "Hello world"          # 15496 995
    python -m stage4_models.tokenizer encode --file FILE [--allow-special]
    python -m stage4_models.tokenizer decode 15496 995              # Hello world
    python -m stage4_models.tokenizer train CORPUS... --vocab-size 1024 --out DIR

``encode`` and ``decode`` use GPT-2's vocabulary, or the one in ``--vocab DIR`` (a folder
holding encoder.json and vocab.bpe, as ``train`` writes). ``train`` learns merges from
the corpus files (each one a document) and writes DIR/encoder.json and DIR/vocab.bpe.
"""
import sys
from pathlib import Path

from ..arguments import output_folder
from ..cli import Parser, dispatch
from ..data import read_text
from .gpt2 import GPT2Tokenizer
from .train import save, train


def load(vocab):
    """GPT-2's tokenizer, or the one whose files are in the folder ``vocab``."""
    if vocab is None:
        return GPT2Tokenizer.default()
    return GPT2Tokenizer.from_files(Path(vocab) / "encoder.json", Path(vocab) / "vocab.bpe")


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.tokenizer",
                                     description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    e = commands.add_parser("encode", help="print the token ids of a text")
    e.add_argument("text", nargs="?", help="the text (or --file)")
    e.add_argument("--file", help="encode this file's text (UTF-8)")
    e.add_argument("--allow-special", action="store_true", help="'<|endoftext|>' in the text becomes 50256")
    e.add_argument("--vocab", help="folder with encoder.json and vocab.bpe (default: GPT-2's)")
    d = commands.add_parser("decode", help="print the text of token ids")
    d.add_argument("ids", nargs="+", type=int)
    d.add_argument("--vocab", help="folder with encoder.json and vocab.bpe (default: GPT-2's)")
    t = commands.add_parser("train", help="learn merges from a corpus, write encoder.json and vocab.bpe")
    t.add_argument("corpus", nargs="+", help="UTF-8 text files, each one document")
    t.add_argument("--vocab-size", type=int, default=1024, help="tokens in all: 256 bytes, merges, <|endoftext|>")
    t.add_argument("--out", type=output_folder, required=True, help="folder for encoder.json and vocab.bpe")
    return dispatch(parser.parse_args(argv), COMMANDS)


def run_encode(args):
    if (args.text is None) == (args.file is None):
        raise ValueError("give either a text or --file FILE")
    text = args.text if args.file is None else read_text(args.file, "a UTF-8 text file to encode")
    ids = load(args.vocab).encode(text, allowed_special="all" if args.allow_special else ())
    print(" ".join(map(str, ids)))
    return 0


def run_decode(args):
    sys.stdout.write(load(args.vocab).decode(args.ids) + "\n")
    return 0


def run_train(args):
    documents = [read_text(p, "a UTF-8 text file (a document of the corpus)") for p in args.corpus]
    merges = train(documents, args.vocab_size, verbose=True)
    encoder_json, vocab_bpe = save(merges, args.out)
    print(f"{len(merges)} merges, {len(merges) + 257} tokens: wrote {encoder_json} and {vocab_bpe}")
    return 0


COMMANDS = {"encode": run_encode, "decode": run_decode, "train": run_train}

if __name__ == "__main__":
    sys.exit(main())
