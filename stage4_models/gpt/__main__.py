"""The GPT program (thesis, "Training a GPT-like model"):

    python -m stage4_models.gpt train --config tiny|char|chat-base [--steps N] [--batch B] [--block-size T]
                                      [--lr LR] [--warmup W] [--data CORPUS.bin|.txt] [--init-from CKPT]
                                      [--device cpu|python|cuda] [--seed S] [--out runs/char]
    python -m stage4_models.gpt train --resume runs/char/checkpoint.tg [--steps N]
    python -m stage4_models.gpt sample --checkpoint runs/char/checkpoint.tg [--prompt TEXT]
                                       [--tokens 500] [--temperature 1.0] [--top-k K]
                                       [--greedy] [--seed 0]

``train`` shows a progress bar; every eval_interval steps it prints (and appends to
OUT/train.log) the train and validation loss, the training time so far and tokens/s.
OUT gets checkpoint.tg (to resume from), log.csv (the evaluations), loss.csv (every step)
and summary.json, together every checkpoint_interval steps and at the end. The corpus is tiny-shakespeare
unless --data names a token file (``python -m stage4_models.tokens prepare``) or a text.
``sample`` prints the prompt continued by the model.
"""
import argparse
import sys
from dataclasses import replace

from ..arguments import (device, non_negative_int, output_folder, positive_float, positive_int,
                         probability)
from ..cli import Parser, dispatch, reading
from .training import CONFIGS, config_named, decode_sample, load_checkpoint, read_checkpoint, train


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.gpt", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    t = commands.add_parser("train", help="train a GPT; write its log, checkpoints and summary")
    t.add_argument("--config", default="char", choices=sorted(CONFIGS), help="a named run (training.py)")
    t.add_argument("--resume", help="continue the run saved in this checkpoint")
    for name, kind in (("steps", positive_int), ("batch", positive_int), ("block-size", positive_int),
                       ("lr", positive_float), ("warmup", non_negative_int), ("dropout", probability),
                       ("eval-interval", positive_int), ("eval-batches", positive_int),
                       ("final-eval-batches", positive_int), ("seed", non_negative_int)):
        t.add_argument(f"--{name}", type=kind, help="override the config's value")
    t.add_argument("--data", help="corpus: a token .bin or a text file (default: tiny-shakespeare)")
    t.add_argument("--init-from", help="start from this checkpoint's weights (fine-tuning)")
    t.add_argument("--device", type=device,
                   help="cpu (C kernels, default), python (pure Python, slow) or cuda")
    t.add_argument("--out", type=output_folder, help="output folder (default: runs/CONFIG)")
    t.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="the training step through tg.compile (default: on; --no-compile: eager)")

    s = commands.add_parser("sample", help="continue a prompt with a trained checkpoint")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("--prompt", default="\n")
    s.add_argument("--tokens", type=non_negative_int, default=500, help="how many tokens to generate")
    s.add_argument("--temperature", type=positive_float, default=1.0)
    s.add_argument("--top-k", type=positive_int)
    s.add_argument("--greedy", action="store_true", help="always the most likely token")
    s.add_argument("--seed", type=non_negative_int, default=0)
    s.add_argument("--device", type=device, default="cpu")
    return dispatch(parser.parse_args(argv), COMMANDS)


def run_train(args):
    overrides = dict(steps=args.steps, batch=args.batch, block_size=args.block_size, lr=args.lr,
                     warmup=args.warmup, dropout=args.dropout,
                     eval_interval=args.eval_interval, eval_batches=args.eval_batches,
                     final_eval_batches=args.final_eval_batches, seed=args.seed, data=args.data,
                     init_from=args.init_from, device=args.device, compile=args.compile)
    if args.resume:                           # the saved run, with what the command line changes
        with reading(args.resume):
            _, saved = read_checkpoint(args.resume, args.device or "cpu")
        config = replace(saved, **{k: v for k, v in overrides.items() if v is not None})
    else:
        config = config_named(args.config, **overrides)
        if config.init_from:                  # a damaged base is reported before training starts
            with reading(config.init_from):
                load_checkpoint(config.init_from, config.device)
    out = args.out or f"runs/{config.name}"
    train(config, out=out, resume=args.resume)
    print(f"wrote {out}/checkpoint.tg, {out}/log.csv, {out}/loss.csv, {out}/train.log, {out}/summary.json")
    return 0


def run_sample(args):
    with reading(args.checkpoint):
        model, _, tokenizer = load_checkpoint(args.checkpoint, args.device)
    print(decode_sample(model, tokenizer, args.prompt, args.tokens, temperature=args.temperature,
                        top_k=args.top_k, greedy=args.greedy, seed=args.seed))
    return 0


COMMANDS = {"train": run_train, "sample": run_sample}

if __name__ == "__main__":
    sys.exit(main())
