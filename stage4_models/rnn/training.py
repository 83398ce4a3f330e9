"""Training the character RNN (thesis, "Recurrent neural networks"): the GPT's data and
loop (random windows of tiny-shakespeare, next-token cross-entropy, evaluations, atomic
checkpoints; gpt/training.py) with a recurrent model and Adam. Each window starts from a
zero state and backpropagation runs through all its steps (truncated backpropagation
through time, truncated at the window). Gradient clipping is on by default: a recurrent
network's gradient can grow with every step back in time.
"""
import time
from dataclasses import asdict, dataclass, field

import stage2_tensor as tg
import stage2_tensor.optim as optim
from stage2_tensor.factories import skip_init

from ..checkpoint import CheckpointKind
from ..gpt.training import estimate_loss, make_streams, training_step
from ..tokenizer import CharTokenizer
from ..training import Logger, loss_log, progress_bar, run_folder, use_device, write_run
from .model import CELLS, GATES, CharRNN

CHECKPOINT = CheckpointKind("tracegrad-char-rnn", "a character RNN", "stage4_models.rnn train")
LOG_FIELDS = ("step", "train", "val", "seconds")


@dataclass
class RNNConfig:
    """One training run of the character RNN."""
    cell: str = "lstm"
    block_size: int = 64                 # characters per window: the steps backpropagated through
    n_embd: int = 64
    hidden: int = 256
    n_layer: int = 2
    dropout: float = 0.0
    batch: int = 32
    steps: int = 2000
    lr: float = 2e-3
    grad_clip: float = 1.0               # 0: no clipping
    eval_interval: int = 250
    eval_batches: int = 20
    final_eval_batches: int = 200
    device: str = "cpu"
    seed: int = 1337
    compile: bool = True                 # the step through tg.compile
    data: str = None                     # a text file; None: tiny-shakespeare
    # what make_streams (gpt/training.py) reads besides the sizes
    tokenizer: str = "char"
    val_fraction: float = 0.1
    conversations: bool = False

    def __post_init__(self):
        if self.cell not in CELLS:
            raise ValueError(f"unknown cell {self.cell!r}; expected one of {sorted(CELLS)}")
        for name in ("block_size", "n_embd", "hidden", "n_layer", "batch", "steps", "eval_interval",
                     "eval_batches", "final_eval_batches"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    def model(self, vocab_size, device):
        return CharRNN(vocab_size, self.cell, self.n_embd, self.hidden, self.n_layer, self.dropout, device=device)


@dataclass
class Run:
    model: CharRNN
    config: RNNConfig
    losses: list = field(default_factory=list)        # every step's training loss
    history: list = field(default_factory=list)       # dicts: step, train, val, seconds
    seconds: float = 0.0                              # training time (evaluations excluded)
    final: dict = None

    @property
    def tokens_per_second(self):
        return len(self.losses) * self.config.batch * self.config.block_size / max(self.seconds, 1e-9)


def train(config, out=None, progress=True, log=print):
    """Train as ``config`` says; with ``out``, write there checkpoint.tg, log.csv (the
    evaluations), loss.csv (every step), summary.json (at the end) and train.log (as it
    goes). Returns a Run."""
    device = use_device(config.device)
    tokenizer = CharTokenizer()
    streams = make_streams(config, tokenizer)
    tg.seed(config.seed)
    run = Run(config.model(tokenizer.n_vocab, device), config)
    opt = optim.Adam(run.model.parameters(), lr=config.lr)
    out = run_folder(out) if out else None
    logger = Logger(out, log, append=False)
    logger(f"char {config.cell}: {run.model.num_parameters():,} parameters, {config.steps} steps of "
           f"{config.batch} x {config.block_size} characters on {device}")

    def evaluate(step):
        row = dict(step=step, seconds=round(run.seconds, 2),
                   **{name: estimate_loss(run.model, s, config.eval_batches, device) for name, s in streams.items()})
        run.history.append(row)
        logger(f"step {step}: train loss {row['train']:.4f}, val loss {row['val']:.4f}, "
               f"{run.seconds:.1f} s, {run.tokens_per_second:,.0f} tokens/s")

    update = training_step(run.model, opt, config)

    for step in progress_bar(f"char {config.cell}", config.steps, progress):
        if step % config.eval_interval == 0:
            evaluate(step)
        start = time.perf_counter()
        x, y = streams["train"].batch(step)
        loss = update(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device))
        run.losses.append(loss.item())
        run.seconds += time.perf_counter() - start
    evaluate(config.steps)
    run.final = {name: estimate_loss(run.model, s, config.final_eval_batches, device) for name, s in streams.items()}
    logger(f"done: {config.steps} steps in {run.seconds:.1f} s ({run.tokens_per_second:,.0f} tokens/s); "
           f"loss over {config.final_eval_batches} batches: train {run.final['train']:.4f}, "
           f"val {run.final['val']:.4f}")
    if out:
        history = [[row[name] for name in LOG_FIELDS] for row in run.history]
        write_run(out, lambda path: CHECKPOINT.save(path, config, run.model),
                  {"log.csv": (LOG_FIELDS, history), "loss.csv": loss_log(run.losses)},
                  {"config": asdict(config), "parameters": run.model.num_parameters(),
                   "seconds": round(run.seconds, 2), "tokens_per_second": round(run.tokens_per_second),
                   "final_train_loss": run.final["train"], "final_val_loss": run.final["val"]})
    return run


def load_checkpoint(path, device="cpu"):
    """(the CharRNN with the checkpoint's weights on ``device``, its RNNConfig)."""
    saved = CHECKPOINT.read(path, use_device(device), {})
    config = CHECKPOINT.config(saved, RNNConfig, path)
    vocab, rows, last = CharTokenizer().n_vocab, GATES[config.cell] * config.hidden, config.n_layer - 1
    CHECKPOINT.check_shapes(saved, {"embedding.weight": (vocab, config.n_embd),
                                    "rnn.weight_ih_l0": (rows, config.n_embd),
                                    f"rnn.weight_hh_l{last}": (rows, config.hidden),
                                    "head.weight": (vocab, config.hidden)}, path)
    with skip_init(device):
        model = config.model(vocab, device)
    CHECKPOINT.load_weights(model, saved, path)
    return model, config
