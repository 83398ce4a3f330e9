"""Training the denoising U-net, measuring it, keeping it (chapter 13,
"13_inference_compiler": the U-net trained here).

Adam (lr 1e-3) on the mean squared error between the denoised and the clean digits, batches
of 32 with fresh noise each, on device cpu: the default 400 steps (about 13,000 noisy
digits) keep a run short enough for a CPU. Quality is reported as the PSNR of the noisy test
digits and of their denoised versions against the clean ones; the gain is their difference.
``export_and_check`` writes the ONNX file and runs it back through this engine's
InferenceSession and, where installed, onnxruntime, against the model itself.
"""
import time
from dataclasses import asdict, dataclass

import numpy as np

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim

from ..checkpoint import CheckpointKind
from ..training import Batches, loss_log, progress_bar, use_device, write_run
from . import data
from .model import UNet

CHECKPOINT = CheckpointKind("tracegrad-unet", "a denoising U-net", "stage4_models.unet train")
DYNAMIC = {0: "N", 2: "H", 3: "W"}


@dataclass
class UnetConfig:
    steps: int = 400
    batch: int = 32
    lr: float = 1e-3
    sigma: float = data.SIGMA     # the training noise's standard deviation
    channels: int = 16            # of the first level; the second has twice as many
    device: str = "cpu"
    seed: int = 1
    subset: int = None            # train on the first `subset` training digits only

    def __post_init__(self):
        if self.channels < 1 or self.steps < 1 or self.batch < 1 or not self.sigma > 0 or not self.lr > 0:
            raise ValueError(f"steps, batch, channels must be at least 1 and lr, sigma above 0, got {self}")


@dataclass
class UnetResult:
    model: UNet
    losses: list                  # the training loss of every step
    psnr_noisy: float             # dB, the noisy test digits against the clean ones
    psnr_denoised: float          # dB, the denoised ones
    wall_seconds: float
    examples_per_second: float


def train_unet(config, datasets=None, progress=True, test_limit=1000):
    from ..mnist import data as mnist
    device = use_device(config.device)
    datasets = datasets or {split: mnist.load(split) for split in ("train", "test")}
    images = datasets["train"][0][:config.subset] if config.subset else datasets["train"][0]
    clean = data.clean(images)
    batches = Batches(clean, np.arange(len(clean)), config.batch, shuffle=True, seed=config.seed).forever()
    noise = np.random.default_rng(config.seed + 1)
    tg.seed(config.seed)
    model = UNet(config.channels, device=device)
    opt = optim.Adam(model.parameters(), lr=config.lr)
    losses = []
    start = time.perf_counter()
    model.train()
    bar = progress_bar("unet", config.steps, progress)
    for _, (x, _) in zip(bar, batches):
        noisy = data.add_noise(x, config.sigma, noise)
        loss = F.mse_loss(model(tg.from_numpy(noisy, device=device)), tg.from_numpy(x, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if len(losses) % 20 == 0:
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.5f}", refresh=False)
    wall = time.perf_counter() - start
    noisy, target = data.test_pairs(datasets["test"][0][:test_limit], config.sigma)
    denoised = denoise(model, noisy)
    return UnetResult(model, losses, data.psnr(noisy, target), data.psnr(denoised, target), wall,
                      len(losses) * config.batch / wall)


def denoise(model, noisy, chunk=200):
    """The model's output for noisy images (N, 1, H, W) float32, in eval mode, in chunks."""
    device = model.head.weight.device
    model.eval()
    out = []
    with tg.no_grad():
        for start in range(0, len(noisy), chunk):
            out.append(model(tg.from_numpy(np.ascontiguousarray(noisy[start:start + chunk]), device=device)).numpy())
    return np.concatenate(out) if out else np.zeros_like(noisy)


def save_unet_run(result, config, out):
    """Write ``out``/checkpoint.tg, loss.csv (step, loss) and summary.json (``write_run``)."""
    summary = {"psnr_noisy_db": round(result.psnr_noisy, 3), "psnr_denoised_db": round(result.psnr_denoised, 3),
               "psnr_gain_db": round(result.psnr_denoised - result.psnr_noisy, 3), "steps": len(result.losses),
               "wall_seconds": round(result.wall_seconds, 3), "examples_per_second": round(result.examples_per_second, 1),
               "final_loss_avg20": float(np.mean(result.losses[-20:])), "config": asdict(config)}
    return write_run(out, lambda path: CHECKPOINT.save(path, config, result.model),
                     {"loss.csv": loss_log(result.losses)}, summary)


def unet_summary_line(result, config):
    return (f"unet: {len(result.losses)} steps of {config.batch} on {config.device} in {result.wall_seconds:.1f} s "
            f"({result.examples_per_second:,.0f} examples/s); test PSNR noisy {result.psnr_noisy:.2f} dB, "
            f"denoised {result.psnr_denoised:.2f} dB (gain {result.psnr_denoised - result.psnr_noisy:+.2f} dB)")


def load_unet_checkpoint(path, device="cpu"):
    """(UNet with the checkpoint's weights on ``device``, in eval mode; the config dict)."""
    saved = CHECKPOINT.read(path, use_device(device))
    config = CHECKPOINT.config(saved, UnetConfig, path)
    c = config.channels
    CHECKPOINT.check_shapes(saved, {"down1.conv1.weight": (c, 1, 3, 3), "head.weight": (1, c, 1, 1)}, path)
    model = UNet(c, device=device)
    CHECKPOINT.load_weights(model, saved, path)
    model.eval()
    return model, asdict(config)


def export_and_check(model, path, noisy):
    """Export ``model`` to ``path`` (H and W free) and run ``noisy`` (N, 1, H, W) through it:
    {engine: largest |difference| from the model's own output} for this engine's
    InferenceSession and, when installed, onnxruntime's CPU provider."""
    from ..onnx import InferenceSession
    from ..onnx.export import export
    device = model.head.weight.device
    example = tg.from_numpy(np.ascontiguousarray(noisy[:1]), device=device)
    export(model, example, path, input_names=["noisy"], output_names=["denoised"],
           dynamic_axes={"noisy": DYNAMIC, "denoised": DYNAMIC})
    expected = denoise(model, noisy)
    outputs = {"tracegrad": InferenceSession(path, device="cpu").run(None, {"noisy": noisy})[0]}
    try:
        import onnxruntime
    except ImportError:
        pass
    else:
        ort = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        outputs["onnxruntime"] = ort.run(None, {"noisy": noisy})[0]
    return {name: float(np.max(np.abs(out - expected))) for name, out in outputs.items()}
