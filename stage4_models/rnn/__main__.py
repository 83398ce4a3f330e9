"""The character RNN program (thesis, "Recurrent neural networks"):

    python -m stage4_models.rnn train [--cell rnn|lstm|gru] [--steps N] [--batch B] [--block-size T]
                                      [--hidden H] [--layers L] [--embedding E] [--lr LR] [--clip C]
                                      [--data TEXT] [--device cpu|python|cuda] [--seed S]
                                      [--compile/--no-compile] [--out runs/char-lstm]
    python -m stage4_models.rnn sample --checkpoint runs/char-lstm/checkpoint.tg [--prompt TEXT]
                                       [--tokens 500] [--temperature 1.0] [--top-k K] [--greedy]
                                       [--seed 0]

``train`` shows a progress bar; every eval_interval steps it prints (and appends to
OUT/train.log) the train and validation loss, the training time so far and tokens/s; at
the end OUT gets checkpoint.tg, log.csv (the evaluations), loss.csv (every step) and
summary.json. The corpus is tiny-shakespeare unless --data names a text file. ``sample``
prints the prompt continued by the model.
"""
import argparse
import sys
from dataclasses import fields

import stage2_tensor as tg

from ..arguments import device, non_negative_float, non_negative_int, output_folder, positive_float, positive_int
from ..cli import Parser, dispatch, reading
from ..tokenizer import CharTokenizer
from .model import CELLS
from .training import RNNConfig, load_checkpoint, train

OPTIONS = {"steps": ("steps", positive_int), "batch": ("batch", positive_int),
           "block-size": ("block_size", positive_int), "hidden": ("hidden", positive_int),
           "layers": ("n_layer", positive_int), "embedding": ("n_embd", positive_int),
           "lr": ("lr", positive_float), "clip": ("grad_clip", non_negative_float),
           "eval-interval": ("eval_interval", positive_int), "eval-batches": ("eval_batches", positive_int),
           "final-eval-batches": ("final_eval_batches", positive_int), "seed": ("seed", non_negative_int)}


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.rnn", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    defaults = {f.name: f.default for f in fields(RNNConfig)}

    t = commands.add_parser("train", help="train a character RNN; write its log, checkpoint and summary")
    t.add_argument("--cell", choices=sorted(CELLS), default=defaults["cell"])
    for option, (name, kind) in OPTIONS.items():
        t.add_argument(f"--{option}", dest=name, type=kind, default=defaults[name], help=f"default {defaults[name]}")
    t.add_argument("--data", help="a text file to train on (default: tiny-shakespeare)")
    t.add_argument("--device", type=device, default="cpu",
                   help="cpu (C kernels), python (pure Python, slow) or cuda")
    t.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                   help="the training step through tg.compile (--no-compile: eager)")
    t.add_argument("--out", type=output_folder, help="output folder (default: runs/char-CELL)")

    s = commands.add_parser("sample", help="continue a prompt with a trained checkpoint")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--prompt", default="\n")
    s.add_argument("--tokens", type=non_negative_int, default=500, help="how many characters to generate")
    s.add_argument("--temperature", type=positive_float, default=1.0)
    s.add_argument("--top-k", type=positive_int)
    s.add_argument("--greedy", action="store_true", help="always the most likely character")
    s.add_argument("--seed", type=non_negative_int, default=0)
    s.add_argument("--device", type=device, default="cpu")
    return dispatch(parser.parse_args(argv), COMMANDS)


def run_train(args):
    config = RNNConfig(cell=args.cell, data=args.data, device=args.device, compile=args.compile,
                       **{name: getattr(args, name) for name, _ in OPTIONS.values()})
    out = args.out or f"runs/char-{config.cell}"
    train(config, out=out)
    print(f"wrote {out}/checkpoint.tg, {out}/log.csv, {out}/loss.csv, {out}/train.log, {out}/summary.json")
    return 0


def run_sample(args):
    with reading(args.checkpoint):
        model, _ = load_checkpoint(args.checkpoint, args.device)
    tokenizer = CharTokenizer()
    idx = tg.tensor([tokenizer.encode(args.prompt) or [0]], device=model.head.weight.device)
    out = model.generate(idx, args.tokens, temperature=args.temperature, top_k=args.top_k,
                         greedy=args.greedy, seed=args.seed)
    print(tokenizer.decode(out.tolist()[0]))
    return 0


COMMANDS = {"train": run_train, "sample": run_sample}

if __name__ == "__main__":
    sys.exit(main())
