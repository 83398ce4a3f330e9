"""Training the MLP language model (thesis, "Language Modelling using Neural Networks"):
mini-batches of 32 windows, cross-entropy on the logits, plain SGD with the learning rate
falling linearly from 0.1 at the first step to 0.05 at the last (the thesis's 200,000);
the loss on each split, checkpoints, and sampling names from a trained model. The batches
come from the trainers' shared ``Batches`` (every training window once per epoch, in a
seeded order; ``stage4_models/training.py``).
"""
import time
from dataclasses import asdict, dataclass

import numpy as np

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
import stage2_tensor.optim as optim
from stage2_tensor.optim.lr_scheduler import LinearLR

from ..checkpoint import CheckpointKind
from ..training import Batches, progress_bar, use_device, write_csv, write_run
from . import data, sampling
from .mlp import BLOCK_SIZE, EMBEDDING_SIZE, HIDDEN, MLPLanguageModel

CHECKPOINT_KIND = "tracegrad-names-mlp"
CHECKPOINT = CheckpointKind(CHECKPOINT_KIND, "a names MLP", "stage4_models.names train")
THESIS_PARAMETERS = 10643


@dataclass
class Config:
    """One training run, as the command line's ``train`` takes it (the thesis's defaults)."""
    steps: int = 200000
    batch: int = 32
    lr: float = 0.1               # at the first step
    lr_end: float = 0.05          # at the last step
    block_size: int = BLOCK_SIZE
    embedding_size: int = EMBEDDING_SIZE
    hidden: int = HIDDEN
    device: str = "cpu"
    seed: int = 123               # initial weights and batch order
    split_seed: int = data.SEED   # which names are train, dev and test

    def __post_init__(self):
        for name in ("steps", "batch", "block_size", "embedding_size", "hidden"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 < self.lr_end <= self.lr:
            raise ValueError(f"the learning rate must decay: need 0 < lr_end <= lr, got "
                             f"lr {self.lr} and lr_end {self.lr_end}")



def make_optimizer(params, config):
    """SGD at ``config.lr`` and a LinearLR that brings it to ``config.lr_end`` at the last
    of ``config.steps`` steps (call ``scheduler.step()`` after each ``optimizer.step()``)."""
    opt = optim.SGD(params, lr=config.lr)
    scheduler = LinearLR(opt, start_factor=1.0, end_factor=config.lr_end / config.lr,
                         total_iters=max(config.steps - 1, 1))
    return opt, scheduler


@dataclass
class Result:
    model: MLPLanguageModel
    vocab: data.Vocabulary
    losses: list                  # the training loss of every step (one batch each)
    lrs: list                     # the learning rate each step used
    split_losses: dict            # {"train", "dev", "test"}: mean cross-entropy over the split
    wall_seconds: float           # the training loop alone

    @property
    def parameters(self):
        return sum(p.numel() for p in self.model.parameters())


def prepare(config, words=None):
    """(vocabulary, {split: (X, Y)}) for ``config``: the names (loaded if not given), split
    by ``config.split_seed``, as windows of ``config.block_size``."""
    words = data.load() if words is None else words
    vocab = data.Vocabulary.from_words(words)
    splits = data.split(words, seed=config.split_seed)
    return vocab, {name: data.windows(split, vocab, config.block_size) for name, split in splits.items()}


def train(config, words=None, progress=True, eval_limit=None):
    """Train the MLP language model as ``config`` says; return a Result with every step's
    loss and the final loss on each split (on its first ``eval_limit`` windows, when given:
    the pure-Python device needs minutes for all 182,625 training windows)."""
    device = use_device(config.device)
    vocab, windows = prepare(config, words)
    batches = Batches(*windows["train"], config.batch, shuffle=True, seed=config.seed).forever()

    tg.seed(config.seed)
    model = MLPLanguageModel(len(vocab), config.block_size, config.embedding_size, config.hidden,
                             device=device)
    opt, scheduler = make_optimizer(model.parameters(), config)
    losses, lrs = [], []
    bar = progress_bar("names mlp", config.steps, progress)
    start = time.perf_counter()
    for step in bar:
        x, y = next(batches)
        loss = F.cross_entropy(model(tg.from_numpy(x, device=device)), tg.from_numpy(y, device=device))
        opt.zero_grad()
        loss.backward()
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
        losses.append(loss.item())
        if step % 1000 == 0:
            bar.set_postfix(loss=f"{losses[-1]:.4f}", lr=f"{lrs[-1]:.4f}", refresh=False)
    wall = time.perf_counter() - start
    split_losses = {name: evaluate(model, x[:eval_limit], y[:eval_limit]) for name, (x, y) in windows.items()}
    return Result(model, vocab, losses, lrs, split_losses, wall)


def evaluate(model, x, y, chunk=10000):
    """Mean cross-entropy (nats) of the model over all windows ``x`` and targets ``y``."""
    device = model.fc1.weight.device
    total = 0.0
    with tg.no_grad():
        for start in range(0, len(x), chunk):
            logits = model(tg.from_numpy(x[start:start + chunk], device=device))
            target = tg.from_numpy(y[start:start + chunk], device=device)
            total += F.cross_entropy(logits, target, reduction="sum").item()
    return total / len(x)


def sample(model, vocab, n=20, seed=0, prompt="", max_length=sampling.MAX_LENGTH):
    """``n`` names from the model, drawn with ``random.Random(seed)``, each starting with
    ``prompt`` (an unknown character in it is a ValueError naming it)."""
    device = model.fc1.weight.device

    def next_probs(tokens):
        window = tg.tensor([data.context_of(tokens, model.block_size)], dtype=tg.int64, device=device)
        with tg.no_grad():
            return model(window).softmax(dim=1).tolist()[0]

    return sampling.sample_names(next_probs, vocab, n, seed, prompt, max_length)


# ---- what a run leaves behind ------------------------------------------------------------
def save_run(result, config, out):
    """Write ``out``/checkpoint.tg, loss.csv (step, loss, lr) and summary.json (``write_run``)."""
    losses = [(i, f"{l:.9g}", f"{lr:.9g}") for i, (l, lr) in enumerate(zip(result.losses, result.lrs))]
    return write_run(out, lambda path: save_checkpoint(result.model, result.vocab, config, path),
                     {"loss.csv": (("step", "loss", "lr"), losses)},
                     {**summary(result, config), "config": asdict(config)})


def write_average_log(result, path, window=1000):
    """A compact log for the repository: one row per ``window`` steps (step = the window's
    last step, counting from 1), the mean training loss over the window and the learning
    rate at its last step."""
    n = len(result.losses) // window * window
    means = np.asarray(result.losses[:n], dtype=np.float64).reshape(-1, window).mean(1)
    return write_csv(path, ("step", f"loss_mean_{window}", "lr"),
                     [((i + 1) * window, f"{m:.6f}", f"{result.lrs[(i + 1) * window - 1]:.6g}")
                      for i, m in enumerate(means)])


def summary(result, config):
    return {"parameters": result.parameters, "thesis_parameters": THESIS_PARAMETERS,
            "steps": config.steps, "wall_seconds": round(result.wall_seconds, 3),
            "loss": {k: round(v, 5) for k, v in result.split_losses.items()},
            "final_loss_avg1000": float(np.mean(result.losses[-1000:]))}


def summary_line(result, config):
    loss = result.split_losses
    return (f"mlp: {config.steps} steps of {config.batch} on {config.device} in "
            f"{result.wall_seconds:.1f} s ({config.steps * config.batch / result.wall_seconds:,.0f} "
            f"examples/s), {result.parameters:,} parameters, loss train {loss['train']:.4f} "
            f"dev {loss['dev']:.4f} test {loss['test']:.4f} nats")


def save_checkpoint(model, vocab, config, path):
    CHECKPOINT.save(path, config, model, vocab=vocab.chars)


def load_checkpoint(path, device="cpu"):
    """(the model with the checkpoint's weights on ``device``, its Vocabulary, the run's
    config dict)."""
    saved = CHECKPOINT.read(path, use_device(device), {"vocab": str})
    config = CHECKPOINT.config(saved, Config, path)
    try:
        vocab = data.Vocabulary(saved["vocab"])
    except ValueError as err:
        raise CHECKPOINT.error(path, str(err)) from None
    V, B, E, H = len(vocab), config.block_size, config.embedding_size, config.hidden
    CHECKPOINT.check_shapes(saved, {"embedding.weight": (V, E), "fc1.weight": (H, B * E),
                                    "fc2.weight": (V, H)}, path)
    model = MLPLanguageModel(V, B, E, H, device=device)
    CHECKPOINT.load_weights(model, saved, path)
    return model, vocab, asdict(config)
