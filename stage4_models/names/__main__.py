"""The names program (thesis, "Bi-gram language modelling" and "Language Modelling using
Neural Networks"):

    python -m stage4_models.names train [--steps 200000] [--batch 32] [--lr 0.1] [--lr-end 0.05]
                                        [--embedding 8] [--hidden 200] [--block-size 3]
                                        [--device cpu|python|cuda] [--seed 123] [--eval-limit N]
                                        [--out runs/names]
    python -m stage4_models.names sample --checkpoint runs/names/checkpoint.tg [-n 20] [--seed 0]
                                         [--prompt PREFIX]
    python -m stage4_models.names bigram [--smoothing 1] [-n 20] [--seed 0] [--prompt PREFIX]

``train`` shows a progress bar, writes runs/NAME/loss.csv (every step's loss and learning
rate), checkpoint.tg and summary.json, and prints one line: wall time, parameters, and the
loss on the train, dev and test names. ``sample`` prints names drawn from a checkpoint;
``bigram`` counts the training names and prints the bigram model's loss and samples.
"""
import sys

from ..arguments import (device, non_negative_float, non_negative_int, output_folder, positive_float,
                         positive_int)
from ..cli import Parser, dispatch, reading
from . import bigram, data
from .training import Config, load_checkpoint, sample, save_run, summary_line, train


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.names", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    defaults = Config()

    t = commands.add_parser("train", help="train the MLP language model, write its log, checkpoint and summary")
    t.add_argument("--steps", type=positive_int, default=defaults.steps)
    t.add_argument("--batch", type=positive_int, default=defaults.batch)
    t.add_argument("--lr", type=positive_float, default=defaults.lr, help="learning rate at the first step")
    t.add_argument("--lr-end", type=positive_float, default=defaults.lr_end,
                   help="learning rate at the last step (at most --lr)")
    t.add_argument("--block-size", type=positive_int, default=defaults.block_size, help="characters of context")
    t.add_argument("--embedding", type=positive_int, default=defaults.embedding_size, help="embedding size")
    t.add_argument("--hidden", type=positive_int, default=defaults.hidden, help="hidden tanh units")
    t.add_argument("--device", type=device, default="cpu",
                   help="cpu (C kernels), python (pure Python, slow) or cuda")
    t.add_argument("--seed", type=non_negative_int, default=defaults.seed)
    t.add_argument("--eval-limit", type=positive_int, default=None,
                   help="loss on the first N windows of each split only (for --device python)")
    t.add_argument("--out", type=output_folder, default="runs/names",
                   help="folder for loss.csv, checkpoint.tg, summary.json")

    s = commands.add_parser("sample", help="names drawn from a trained checkpoint")
    s.add_argument("--checkpoint", required=True)
    s.add_argument("-n", type=non_negative_int, default=20, help="how many names")
    s.add_argument("--seed", type=non_negative_int, default=0)
    s.add_argument("--prompt", default="", help="the first letters of every name")
    s.add_argument("--device", type=device, default="cpu")

    b = commands.add_parser("bigram", help="the bigram model: loss on each split and samples")
    b.add_argument("--smoothing", type=non_negative_float, default=1.0, help="add-k smoothing (0: none)")
    b.add_argument("-n", type=non_negative_int, default=20, help="how many names")
    b.add_argument("--seed", type=non_negative_int, default=0)
    b.add_argument("--prompt", default="", help="the first letters of every name")

    return dispatch(parser.parse_args(argv), COMMANDS)


def run_train(args):
    config = Config(steps=args.steps, batch=args.batch, lr=args.lr, lr_end=args.lr_end,
                    block_size=args.block_size, embedding_size=args.embedding, hidden=args.hidden,
                    device=args.device, seed=args.seed)
    result = train(config, eval_limit=args.eval_limit)
    save_run(result, config, args.out)
    print(summary_line(result, config))
    print(f"wrote {args.out}/loss.csv, {args.out}/checkpoint.tg, {args.out}/summary.json")
    return 0


def run_sample(args):
    with reading(args.checkpoint):
        model, vocab, _ = load_checkpoint(args.checkpoint, args.device)
    for name in sample(model, vocab, args.n, args.seed, args.prompt):
        print(name)
    return 0


def run_bigram(args):
    words = data.load()
    vocab = data.Vocabulary.from_words(words)
    splits = data.split(words)
    model = bigram.Bigram.fit(splits["train"], vocab, smoothing=args.smoothing)
    losses = "  ".join(f"{name} {model.nll(splits[name]):.4f}" for name in data.SPLITS)
    print(f"bigram (smoothing {args.smoothing:g}): loss {losses} nats")
    for name in model.sample(args.n, args.seed, args.prompt):
        print(name)
    return 0


COMMANDS = {"train": run_train, "sample": run_sample, "bigram": run_bigram}

if __name__ == "__main__":
    sys.exit(main())
