"""Training and evaluating MnistNet (thesis, "Mnist Training Example" and "Optimizing
optimizers"): the training loop, test accuracy, checkpoints, and the four optimizers the
thesis compares, with the settings and results it reports.
"""
import time
from dataclasses import asdict, dataclass

import numpy as np

import stage2_tensor as tg
import stage2_tensor.optim as optim

from ..checkpoint import CheckpointKind
from ..training import Batches, loss_log, progress_bar, use_device, write_run
from . import data
from .model import CLASSES, LOSSES, MnistNet, cross_entropy_loss, thesis_loss

# The thesis's four runs (60,000 steps, batch 32): optimizer settings, learning rate, and
# the test accuracy and training-set loss (thesis_loss summed over the 60,000 training
# images, not divided) it reports after them. RMSprop's decay rate is not given in the
# thesis; PyTorch's default alpha = 0.99 is used.
THESIS = {
    "sgd": dict(lr=0.01, accuracy=0.9547, train_loss=3949.38),
    "momentum": dict(lr=0.01, accuracy=0.9778, train_loss=631.51, momentum=0.9, dampening=0.1),
    "rmsprop": dict(lr=0.001, accuracy=0.9751, train_loss=593.48),
    "adam": dict(lr=0.001, accuracy=0.9778, train_loss=531.61, betas=(0.9, 0.999)),
}
CHECKPOINT_KIND = "tracegrad-mnist"
CHECKPOINT = CheckpointKind(CHECKPOINT_KIND, "an MNIST", "stage4_models.mnist train")


@dataclass
class Config:
    """One training run, as the command line's ``train`` takes it."""
    optim: str = "sgd"
    steps: int = 60000
    batch: int = 32
    lr: float = None              # None: the thesis's learning rate for ``optim``
    device: str = "cpu"
    seed: int = 123               # the thesis's sciCore.seed(123)
    loss: str = "thesis"
    subset: int = None            # train on the first `subset` training images only
    compile: bool = True          # each step through tg.compile: eager's results, less Python

    def __post_init__(self):
        if self.optim not in THESIS:
            raise ValueError(f"unknown optimizer {self.optim!r}; expected one of {sorted(THESIS)}")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; expected one of {sorted(LOSSES)}")
        if self.lr is None:
            self.lr = THESIS[self.optim]["lr"]


def make_optimizer(name, params, lr):
    """The thesis's optimizer ``name`` ("sgd", "momentum", "rmsprop", "adam") at rate lr."""
    settings = THESIS[name]
    if name == "sgd":
        return optim.SGD(params, lr=lr)
    if name == "momentum":
        return optim.SGD(params, lr=lr, momentum=settings["momentum"], dampening=settings["dampening"])
    if name == "rmsprop":
        return optim.RMSprop(params, lr=lr)
    return optim.Adam(params, lr=lr, betas=settings["betas"])


@dataclass
class Result:
    model: MnistNet
    losses: list                  # the training loss of every step
    accuracy: float               # on the test set (or its first `test_limit` images)
    wall_seconds: float           # the training loop alone, as the thesis's "Training time"
    examples_per_second: float


def train(config, datasets=None, progress=True, test_limit=None):
    """Train MnistNet as ``config`` says; return a Result. ``datasets`` may hold the
    already loaded {"train": (images, labels), "test": ...} (else they are loaded)."""
    device = use_device(config.device)
    datasets = datasets or {split: data.load(split) for split in ("train", "test")}
    images, labels = datasets["train"]
    if config.subset:
        images, labels = images[:config.subset], labels[:config.subset]
    inputs = data.as_inputs(images)
    if config.loss == "thesis":
        targets = np.eye(CLASSES, dtype=np.float32)[labels]
    else:
        targets = labels.astype(np.int64)
    batches = Batches(inputs, targets, config.batch, shuffle=True, seed=config.seed).forever()

    tg.seed(config.seed)
    model = MnistNet(device=device)
    opt = make_optimizer(config.optim, model.parameters(), config.lr)
    step_loss = _step_loss(model, config.loss)

    def update(x, target):
        loss = step_loss(x, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    update = tg.compile(update) if config.compile else update
    losses = []
    bar = progress_bar(f"mnist {config.optim}", config.steps, progress)
    start = time.perf_counter()
    for step in bar:
        x, target = next(batches)
        loss = update(tg.from_numpy(x, device=device), tg.from_numpy(target, device=device))
        losses.append(loss.item())
        if step % 1000 == 0:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", refresh=False)
    wall = time.perf_counter() - start
    test_images, test_labels = datasets["test"]
    accuracy = evaluate(model, test_images[:test_limit], test_labels[:test_limit])["accuracy"]
    return Result(model, losses, accuracy, wall, config.steps * config.batch / wall)


def _step_loss(model, loss):
    if loss == "thesis":
        return lambda x, onehot: thesis_loss(model(x), onehot)
    return lambda x, labels: cross_entropy_loss(model.logits(x), labels)


def evaluate(model, images, labels, chunk=10000):
    """{"accuracy": fraction of images classified right, "loss": thesis_loss summed over
    them (not divided: the thesis's "loss on training set")}, in chunks of ``chunk``."""
    device = model.fc1.weight.device
    correct, loss = 0, 0.0
    with tg.no_grad():
        for start in range(0, len(images), chunk):
            x = tg.from_numpy(data.as_inputs(images[start:start + chunk]), device=device)
            y = labels[start:start + chunk]
            probs = model(x).numpy()
            correct += int((probs.argmax(1) == y).sum())
            loss += float(((probs - np.eye(CLASSES, dtype=np.float32)[y]) ** 2).sum())
    return {"accuracy": correct / max(len(images), 1), "loss": loss}


# ---- what a run leaves behind ------------------------------------------------------------
def save_run(result, config, out):
    """Write ``out``/checkpoint.tg, loss.csv (step, loss) and summary.json (``write_run``)."""
    return write_run(out, lambda path: save_checkpoint(result.model, config, path),
                     {"loss.csv": loss_log(result.losses)}, {**summary(result, config), "config": asdict(config)})


def summary(result, config):
    return {"accuracy": result.accuracy, "thesis_accuracy": THESIS[config.optim]["accuracy"],
            "steps": config.steps, "wall_seconds": round(result.wall_seconds, 3),
            "examples_per_second": round(result.examples_per_second),
            "final_loss_avg100": float(np.mean(result.losses[-100:]))}


def summary_line(result, config):
    return (f"{config.optim}: {config.steps} steps of {config.batch} on {config.device} in "
            f"{result.wall_seconds:.1f} s ({result.examples_per_second:,.0f} examples/s), "
            f"test accuracy {result.accuracy:.4f} (thesis {THESIS[config.optim]['accuracy']:.4f})")


def save_checkpoint(model, config, path):
    CHECKPOINT.save(path, config, model)


def load_checkpoint(path, device="cpu"):
    """(MnistNet with the checkpoint's weights, on ``device``; the run's config dict). A
    file that is not such a checkpoint is a ValueError naming it (``checkpoint.py``)."""
    saved = CHECKPOINT.read(path, use_device(device))
    config = CHECKPOINT.config(saved, Config, path)
    model = MnistNet(device=device)
    CHECKPOINT.load_weights(model, saved, path)
    return model, asdict(config)
