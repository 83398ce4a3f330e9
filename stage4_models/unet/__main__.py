"""The denoising U-net's program (chapter 13, "13_inference_compiler"):

    python -m stage4_models.unet train --steps 400 --batch 32 --lr 1e-3 --sigma 0.4 --out runs/unet
    python -m stage4_models.unet denoise --checkpoint runs/unet/checkpoint.tg [--png digits.png]
    python -m stage4_models.unet export --checkpoint runs/unet/checkpoint.tg --out runs/unet/unet.onnx

``train`` shows a progress bar, writes runs/NAME/loss.csv (the loss of every step),
checkpoint.tg, summary.json and unet.onnx (the model exported, H and W free), and prints the
test PSNR of the noisy and the denoised digits and how far this engine's InferenceSession and
onnxruntime are from the model on them. ``denoise`` measures a checkpoint on the test digits
(and draws some: clean, noisy, denoised); ``export`` writes its ONNX file and checks it.
"""
import sys

import numpy as np

from ..arguments import device, non_negative_int, output_file, output_folder, positive_float, positive_int
from ..cli import Parser, dispatch, reading
from . import data
from .training import (UnetConfig, denoise, export_and_check, load_unet_checkpoint, save_unet_run, train_unet,
                       unet_summary_line)


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.unet", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    t = commands.add_parser("train", help="train the U-net, write its log, checkpoint, summary and ONNX file")
    t.add_argument("--steps", type=positive_int, default=400)
    t.add_argument("--batch", type=positive_int, default=32)
    t.add_argument("--lr", type=positive_float, default=1e-3)
    t.add_argument("--sigma", type=positive_float, default=data.SIGMA, help="the noise's standard deviation")
    t.add_argument("--channels", type=positive_int, default=16, help="of the first level (the second: twice)")
    t.add_argument("--device", type=device, default="cpu")
    t.add_argument("--seed", type=non_negative_int, default=1)
    t.add_argument("--subset", type=positive_int, default=None, help="train on the first N training digits")
    t.add_argument("--test-limit", type=positive_int, default=1000, help="measure on the first N test digits")
    t.add_argument("--out", type=output_folder, default="runs/unet", help="folder for the run's files")

    d = commands.add_parser("denoise", help="PSNR of a checkpoint on the noisy test digits")
    d.add_argument("--checkpoint", required=True)
    d.add_argument("--device", type=device, default="cpu")
    d.add_argument("--sigma", type=positive_float, default=None, help="default: the training run's")
    d.add_argument("--test-limit", type=positive_int, default=1000)
    d.add_argument("--png", type=output_file, default=None, help="draw 8 digits: clean, noisy, denoised")

    e = commands.add_parser("export", help="write a checkpoint's ONNX file and check it")
    e.add_argument("--checkpoint", required=True)
    e.add_argument("--out", type=output_file, required=True, help="the .onnx file to write")
    return dispatch(parser.parse_args(argv), COMMANDS)


def _test_digits(limit):
    from ..mnist import data as mnist
    return mnist.load("test")[0][:limit]


def _check_line(errors):
    return ", ".join(f"{name} within {err:.1e}" for name, err in errors.items())


def run_train(args):
    config = UnetConfig(steps=args.steps, batch=args.batch, lr=args.lr, sigma=args.sigma, channels=args.channels,
                        device=args.device, seed=args.seed, subset=args.subset)
    result = train_unet(config, test_limit=args.test_limit)
    save_unet_run(result, config, args.out)
    noisy, _ = data.test_pairs(_test_digits(8), config.sigma)
    errors = export_and_check(result.model, f"{args.out}/unet.onnx", noisy)
    print(unet_summary_line(result, config))
    print(f"exported {args.out}/unet.onnx; its outputs on 8 test digits: {_check_line(errors)} of the model's")
    print(f"wrote {args.out}/loss.csv, {args.out}/checkpoint.tg, {args.out}/summary.json, {args.out}/unet.onnx")
    return 0


def run_denoise(args):
    with reading(args.checkpoint):
        model, config = load_unet_checkpoint(args.checkpoint, args.device)
    sigma = args.sigma or config["sigma"]
    noisy, clean = data.test_pairs(_test_digits(args.test_limit), sigma)
    denoised = denoise(model, noisy)
    before, after = data.psnr(noisy, clean), data.psnr(denoised, clean)
    print(f"{args.checkpoint}: {len(noisy)} test digits, noise sigma {sigma}: PSNR noisy {before:.2f} dB, "
          f"denoised {after:.2f} dB (gain {after - before:+.2f} dB)")
    if args.png:
        _draw(clean[:8], noisy[:8], denoised[:8], args.png)
        print(f"wrote {args.png}")
    return 0


def _draw(clean, noisy, denoised, path):
    """One PNG: a row each of clean, noisy and denoised digits."""
    rows = [np.concatenate(list(images[:, 0]), axis=1) for images in (clean, noisy, denoised)]
    import matplotlib.pyplot as plt
    plt.imsave(path, np.clip(np.concatenate(rows, axis=0), 0, 1), cmap="gray", vmin=0, vmax=1)


def run_export(args):
    with reading(args.checkpoint):
        model, config = load_unet_checkpoint(args.checkpoint, "cpu")
    noisy, _ = data.test_pairs(_test_digits(8), config["sigma"])
    errors = export_and_check(model, args.out, noisy)
    odd = export_and_check(model, args.out, np.ascontiguousarray(noisy[:, :, :27, :25]))   # H and W free
    print(f"exported {args.out}: on 8 test digits {_check_line(errors)}; cropped to 27x25 {_check_line(odd)} "
          "of the model's outputs")
    return 0


COMMANDS = {"train": run_train, "denoise": run_denoise, "export": run_export}

if __name__ == "__main__":
    sys.exit(main())
