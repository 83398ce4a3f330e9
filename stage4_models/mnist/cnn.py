"""A convolutional network for MNIST: PyTorch's own MNIST example, on tracegrad (chapter on
convolutional networks).

MnistCNN = two 3x3 convolutions (32 and 64 channels, ReLU), a 2x2 max-pool, dropout 0.25,
Linear(9216, 128), ReLU, dropout 0.5, Linear(128, 10), log-softmax; trained with Adadelta
(lr 1.0) and the negative log-likelihood, the learning rate times 0.7 after each epoch
(StepLR), batches of 64, inputs normalised with MNIST's mean and standard deviation, as
that example does.

Checked against PyTorch (chapter 12): from the same weights, on the same batch, in eval mode,
three Adadelta steps give the same losses and parameters (tests/test_stage4_mnist.py). The
initialisation (PyTorch's kaiming_uniform_(a=sqrt(5)): uniform on +-1/sqrt(fan_in), biases
too), the dropout placement, Adadelta's formula (rho 0.9, eps 1e-6), the shuffling (a new
permutation every epoch, the last short batch kept), the normalisation and log-softmax + NLL
are PyTorch's example's. The accuracy one epoch reaches, here and in PyTorch's own run of the
example, and the other one-epoch recipes tried, are in benchmarks/RESULTS.md ("The MNIST CNN
after one epoch"); chapter 12 prints this module's beside PyTorch's (PYTORCH_ONE_EPOCH_ACCURACY).
"""
import time
from dataclasses import asdict, dataclass

import numpy as np

import stage2_tensor as tg
import stage2_tensor.nn as nn
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim

from ..checkpoint import CheckpointKind
from ..training import Batches, loss_log, progress_bar, use_device, write_run
from . import data

MEAN, STD = 0.1307, 0.3081           # of MNIST's training pixels in [0, 1]
# Test accuracy after one epoch of PyTorch's own run of its example (the same recipe), by seed:
# measured, not computed here (benchmarks/RESULTS.md, "The MNIST CNN after one epoch").
PYTORCH_ONE_EPOCH_ACCURACY = {1: 0.9857, 2: 0.9807, 3: 0.9816}
CHECKPOINT = CheckpointKind("tracegrad-mnist-cnn", "an MNIST CNN", "stage4_models.mnist train-cnn")


class MnistCNN(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, device=device)
        self.conv2 = nn.Conv2d(32, 64, 3, device=device)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128, device=device)
        self.fc2 = nn.Linear(128, 10, device=device)

    def forward(self, x):
        """(N, 1, 28, 28) normalised pixels -> (N, 10) log-probabilities."""
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)     # (N, 64, 12, 12)
        x = F.relu(self.fc1(self.dropout1(x).flatten(1)))
        return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)


def as_images(images):
    """Pixels 0-255 (N, 28, 28) as the network reads them: (N, 1, 28, 28), normalised."""
    return ((np.asarray(images, dtype=np.float32) / 255.0 - MEAN) / STD).reshape(len(images), 1, 28, 28)


@dataclass
class CnnConfig:
    """One training run, as the command line's ``train-cnn`` takes it (PyTorch's example's
    defaults)."""
    epochs: int = 1
    batch: int = 64
    lr: float = 1.0
    gamma: float = 0.7            # StepLR: the learning rate times gamma after each epoch
    device: str = "cpu"
    seed: int = 1
    subset: int = None            # train on the first `subset` training images only


@dataclass
class CnnResult:
    model: MnistCNN
    losses: list                  # the training loss of every step
    accuracy: float
    wall_seconds: float
    examples_per_second: float


def train_cnn(config, datasets=None, progress=True, test_limit=None):
    device = use_device(config.device)
    datasets = datasets or {split: data.load(split) for split in ("train", "test")}
    images, labels = datasets["train"]
    if config.subset:
        images, labels = images[:config.subset], labels[:config.subset]
    batches = Batches(as_images(images), labels.astype(np.int64), config.batch, shuffle=True, seed=config.seed)
    tg.seed(config.seed)
    model = MnistCNN(device=device)
    opt = optim.Adadelta(model.parameters(), lr=config.lr)
    schedule = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=config.gamma)
    losses, seen = [], 0
    start = time.perf_counter()
    for epoch in range(config.epochs):
        model.train()
        bar = progress_bar(f"mnist cnn, epoch {epoch + 1}/{config.epochs}", len(batches), progress)
        for (x, y), _ in zip(batches, bar):
            loss = F.nll_loss(model(tg.from_numpy(x, device=device)), tg.from_numpy(y, device=device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            seen += len(x)
            if len(losses) % 100 == 0:
                bar.set_postfix(loss=f"{np.mean(losses[-100:]):.4f}", refresh=False)
        schedule.step()
    wall = time.perf_counter() - start
    test_images, test_labels = datasets["test"]
    accuracy = evaluate_cnn(model, test_images[:test_limit], test_labels[:test_limit])
    return CnnResult(model, losses, accuracy, wall, seen / wall)


def evaluate_cnn(model, images, labels, chunk=200):
    """The fraction of ``images`` classified right, in eval mode (no dropout). In chunks:
    im2col's columns for 200 images at the second convolution are 133 MB already."""
    device, correct = model.fc1.weight.device, 0
    model.eval()
    with tg.no_grad():
        for start in range(0, len(images), chunk):
            x = tg.from_numpy(as_images(images[start:start + chunk]), device=device)
            correct += int((model(x).numpy().argmax(1) == labels[start:start + chunk]).sum())
    return correct / max(len(images), 1)


def save_cnn_run(result, config, out):
    """Write ``out``/checkpoint.tg, loss.csv (step, loss) and summary.json (``write_run``)."""
    summary = {"accuracy": result.accuracy, "epochs": config.epochs, "steps": len(result.losses),
               "wall_seconds": round(result.wall_seconds, 3), "examples_per_second": round(result.examples_per_second),
               "final_loss_avg100": float(np.mean(result.losses[-100:])), "config": asdict(config)}
    return write_run(out, lambda path: CHECKPOINT.save(path, config, result.model),
                     {"loss.csv": loss_log(result.losses)}, summary)


def cnn_summary_line(result, config):
    return (f"cnn: {config.epochs} epoch(s), {len(result.losses)} steps of {config.batch} on {config.device} "
            f"in {result.wall_seconds:.1f} s ({result.examples_per_second:,.0f} examples/s), "
            f"test accuracy {result.accuracy:.4f}")


def load_cnn_checkpoint(path, device="cpu"):
    """(MnistCNN with the checkpoint's weights on ``device``, in eval mode; the config dict)."""
    saved = CHECKPOINT.read(path, use_device(device))
    config = CHECKPOINT.config(saved, CnnConfig, path)
    model = MnistCNN(device=device)
    CHECKPOINT.load_weights(model, saved, path)
    model.eval()
    return model, asdict(config)


def predict_cnn(model, image):
    """Class probabilities (10,) for a 28x28 image with values in [0, 1]."""
    device = model.fc1.weight.device
    model.eval()
    with tg.no_grad():
        x = tg.from_numpy(as_images(image[None] * 255.0), device=device)
        return np.exp(model(x).numpy()[0])
