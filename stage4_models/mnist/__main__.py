"""The MNIST program (thesis, "Mnist Training Example"):

    python -m stage4_models.mnist train --optim sgd|momentum|rmsprop|adam --steps N --batch 32
                                        --lr LR --device cpu|python|cuda --seed S --out runs/NAME
    python -m stage4_models.mnist train-cnn --epochs 1 --batch 64 --lr 1.0 --gamma 0.7 --out runs/cnn
    python -m stage4_models.mnist evaluate --checkpoint runs/NAME/checkpoint.tg
    python -m stage4_models.mnist predict --checkpoint runs/NAME/checkpoint.tg IMAGE.png
    python -m stage4_models.mnist table [--seeds 3] [--steps 60000]

``train`` shows a progress bar, writes runs/NAME/loss.csv (the loss of every step),
checkpoint.tg and summary.json, and prints one line: wall time, examples/s, test accuracy.
``train-cnn`` does the same for PyTorch's MNIST example network (cnn.py: Adadelta, StepLR);
``evaluate`` and ``predict`` take either program's checkpoint.
``table`` runs the thesis's four optimizers and writes chapters/logs/mnist_results.json.
"""
import argparse
import sys

import numpy as np

from ..arguments import device, non_negative_int, output_folder, positive_float, positive_int
from ..cli import Parser, dispatch, reading
from . import data
from .cnn import CnnConfig, cnn_summary_line, evaluate_cnn, load_cnn_checkpoint, predict_cnn, save_cnn_run, train_cnn
from .predict import predict, read_image, to_mnist
from .table import OPTIMIZERS, reproduce
from .model import LOSSES
from .training import THESIS, Config, evaluate, load_checkpoint, save_run, summary_line, train


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.mnist", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    t = commands.add_parser("train", help="train MnistNet, write its log, checkpoint and summary")
    t.add_argument("--optim", choices=sorted(THESIS), default="sgd")
    t.add_argument("--steps", type=positive_int, default=60000)
    t.add_argument("--batch", type=positive_int, default=32)
    t.add_argument("--lr", type=positive_float, default=None, help="default: the thesis's rate for --optim")
    t.add_argument("--device", type=device, default="cpu",
                   help="cpu (C kernels), python (pure Python, slow) or cuda")
    t.add_argument("--seed", type=non_negative_int, default=123)
    t.add_argument("--loss", choices=LOSSES, default="thesis")
    t.add_argument("--subset", type=positive_int, default=None, help="train on the first N training images")
    t.add_argument("--test-limit", type=positive_int, default=None, help="test on the first N test images")
    t.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                   help="each step through tg.compile (default; --no-compile: eagerly)")
    t.add_argument("--out", type=output_folder, default=None,
                   help="folder for loss.csv, checkpoint.tg, summary.json (default runs/OPTIM)")

    c = commands.add_parser("train-cnn", help="train PyTorch's MNIST example CNN (Adadelta, StepLR)")
    c.add_argument("--epochs", type=positive_int, default=1)
    c.add_argument("--batch", type=positive_int, default=64)
    c.add_argument("--lr", type=positive_float, default=1.0)
    c.add_argument("--gamma", type=positive_float, default=0.7, help="StepLR's factor after each epoch")
    c.add_argument("--device", type=device, default="cpu")
    c.add_argument("--seed", type=non_negative_int, default=1)
    c.add_argument("--subset", type=positive_int, default=None, help="train on the first N training images")
    c.add_argument("--test-limit", type=positive_int, default=None, help="test on the first N test images")
    c.add_argument("--out", type=output_folder, default=None, help="folder for the run's files (default runs/cnn)")

    e = commands.add_parser("evaluate", help="test accuracy of a checkpoint")
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--device", type=device, default="cpu")
    e.add_argument("--test-limit", type=positive_int, default=None, help="test on the first N test images")

    p = commands.add_parser("predict", help="classify a digit in an image file")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("image", help="a PNG: 28x28 grey, or any size (resized as MNIST was)")
    p.add_argument("--device", type=device, default="cpu")

    s = commands.add_parser("table", help="reproduce the thesis's optimizer table")
    s.add_argument("--seeds", type=positive_int, default=3, help="seeds per optimizer (123, 124, ...)")
    s.add_argument("--steps", type=positive_int, default=60000)
    s.add_argument("--device", type=device, default="cpu")
    s.add_argument("--optim", nargs="+", choices=OPTIMIZERS, default=list(OPTIMIZERS))

    return dispatch(parser.parse_args(argv), COMMANDS)


def run_train(args):
    config = Config(optim=args.optim, steps=args.steps, batch=args.batch, lr=args.lr,
                    device=args.device, seed=args.seed, loss=args.loss, subset=args.subset, compile=args.compile)
    result = train(config, test_limit=args.test_limit)
    out = args.out or f"runs/{args.optim}"
    save_run(result, config, out)
    print(summary_line(result, config))
    print(f"wrote {out}/loss.csv, {out}/checkpoint.tg, {out}/summary.json")
    return 0


def run_train_cnn(args):
    config = CnnConfig(epochs=args.epochs, batch=args.batch, lr=args.lr, gamma=args.gamma,
                       device=args.device, seed=args.seed, subset=args.subset)
    result = train_cnn(config, test_limit=args.test_limit)
    out = args.out or "runs/cnn"
    save_cnn_run(result, config, out)
    print(cnn_summary_line(result, config))
    print(f"wrote {out}/loss.csv, {out}/checkpoint.tg, {out}/summary.json")
    return 0


def load_any(path, device):
    """(model, config, "mlp" or "cnn") from either program's checkpoint; a damaged one of
    either kind is that kind's error."""
    try:
        return (*load_checkpoint(path, device), "mlp")
    except ValueError as mlp_error:
        if "is not an MNIST checkpoint (written" not in str(mlp_error):
            raise
    try:
        return (*load_cnn_checkpoint(path, device), "cnn")
    except ValueError as cnn_error:
        if "is not an MNIST CNN checkpoint (written" in str(cnn_error):
            raise ValueError(f"{path} is neither an MNIST nor an MNIST CNN checkpoint (written by "
                             "`python -m stage4_models.mnist train` or `train-cnn`)") from None
        raise


def run_evaluate(args):
    with reading(args.checkpoint):
        model, config, kind = load_any(args.checkpoint, args.device)
    images, labels = data.load("test")
    images, labels = images[:args.test_limit], labels[:args.test_limit]
    if kind == "cnn":
        accuracy, what = evaluate_cnn(model, images, labels), f"cnn, {config['epochs']} epoch(s)"
    else:
        accuracy, what = evaluate(model, images, labels)["accuracy"], f"{config['optim']}, {config['steps']} steps"
    print(f"{args.checkpoint} ({what}): test accuracy {accuracy:.4f} on {len(images)} images")
    return 0


def run_predict(args):
    with reading(args.checkpoint):
        model, _, kind = load_any(args.checkpoint, args.device)
    image = to_mnist(read_image(args.image))
    probs = predict_cnn(model, image) if kind == "cnn" else predict(model, image)
    digit = int(np.argmax(probs))
    print(f"{args.image}: digit {digit} (probability {probs[digit]:.3f})")
    print("probabilities: " + "  ".join(f"{d}: {p:.3f}" for d, p in enumerate(probs)))
    return 0


def run_table(args):
    table, _ = reproduce(seeds=tuple(123 + i for i in range(args.seeds)), steps=args.steps,
                         device=args.device, optimizers=args.optim)
    for name, row in table.items():
        print(f"{name:9s} accuracy {row['accuracy']:.4f} (thesis {row['thesis_accuracy']:.4f}, "
              f"{row['difference_points']:+.2f} points) over seeds {row['seeds']}; "
              f"median {row['wall_seconds']:.1f} s, {row['examples_per_second']:,} examples/s")
    return 0


COMMANDS = {"train": run_train, "train-cnn": run_train_cnn, "evaluate": run_evaluate, "predict": run_predict, "table": run_table}

if __name__ == "__main__":
    sys.exit(main())
