"""Training a GPT (thesis, "Training a GPT-like model"): random windows of a token corpus,
next-token cross-entropy, AdamW with a warm-up and a cosine decay, gradient clipping,
train and validation loss every ``eval_interval`` steps, atomic checkpoints, and resuming.

A run is a TrainConfig; CONFIGS holds the named ones (``--config`` on the command line):

* ``tiny``: the thesis's model, GPT-2's 50,257 BPE tokens, 2 layers, 4 heads, n_embd 32,
  block 256, Adam at 2.5e-3 with betas 0.9/0.95, 500 steps (no warm-up, no decay: the
  thesis's loop), batch 4 (the thesis does not give its batch size; 4 x 256 tokens make
  logits of 1024 x 50,257 numbers, already a heavy step on a CPU);
* ``char``: a well-known CPU recipe for a character model of Shakespeare (4 layers, 4
  heads, n_embd 128, block 64, batch 12, 2,000 steps, dropout 0);
* ``chat-base``: the same model with a block of 256 characters, long enough for a whole
  question and answer, pretrained on Shakespeare for the chatbot (which fine-tunes it:
  stage4_models/chat/finetune.py).

Every step's batch is drawn from (seed, step) alone (``TokenStream.batch(step)``), and the
checkpoint holds the weights, the optimizer's moments, the step and the package's random
generator, so a resumed run takes exactly the steps the uninterrupted one would have.
"""
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

import stage2_tensor as tg
import stage2_tensor.optim as optim
from stage2_tensor.factories import generator, skip_init
from stage2_tensor.nn.utils import clip_grad_norm_
from stage2_tensor.optim.lr_scheduler import WarmupCosineLR

from .. import tokens
from ..checkpoint import CheckpointKind
from ..data import fetch, read_text
from ..tokenizer import CharTokenizer, GPT2Tokenizer
from ..training import Logger, loss_log, progress_bar, run_folder, use_device, write_run
from .model import GPT, GPTConfig

CHECKPOINT_KIND = "tracegrad-gpt"
CHECKPOINT = CheckpointKind(CHECKPOINT_KIND, "a GPT", "stage4_models.gpt train")
# what restore reads besides the config and the weights
RUN_STATE = {"optimizer": dict, "step": int, "seconds": (int, float), "losses": list,
             "history": list, "rng": list}
LOG_FIELDS = ("step", "train", "val", "lr", "seconds")       # log.csv: one row per evaluation
MODEL_FIELDS = ("tokenizer", "block_size", "n_layer", "n_head", "n_embd", "bias")   # the model's shape
TOKENIZERS = {"char": CharTokenizer, "gpt2": GPT2Tokenizer.default}


@dataclass
class TrainConfig:
    """One training run: the model, the data, the optimizer and its schedule."""
    name: str = "char"
    tokenizer: str = "char"              # "char" or "gpt2"; sets the vocabulary size
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True
    data: str = None                     # token .bin or text file; None: tiny-shakespeare
    val_fraction: float = 0.1            # the corpus's tail, held out for the validation loss
    batch: int = 12
    steps: int = 2000
    lr: float = 1e-3
    min_lr: float = 1e-4                 # where the cosine ends
    warmup: int = 100
    betas: tuple = (0.9, 0.99)
    weight_decay: float = 0.1            # AdamW's, on the matrices only (see make_optimizer)
    grad_clip: float = 1.0               # 0: no clipping
    eval_interval: int = 250
    eval_batches: int = 20               # batches per loss estimate during training
    final_eval_batches: int = 200        # and for the final figures
    checkpoint_interval: int = 500
    device: str = "cpu"
    seed: int = 1337
    init_from: str = None                # a checkpoint whose weights to start from (fine-tuning)
    conversations: bool = False          # a User:/Bot: text: score the Bot's lines only, and
                                         # begin windows at turns (tokens.conversation_targets)
    compile: bool = True                 # the step through tg.compile (nanoGPT's --compile):
                                         # eager's results bit for bit, without its Python

    def __post_init__(self):
        self.betas = tuple(self.betas)
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {self.tokenizer!r}; expected one of {sorted(TOKENIZERS)}")
        for name in ("block_size", "n_layer", "n_head", "n_embd", "batch", "steps", "eval_interval",
                     "eval_batches", "final_eval_batches", "checkpoint_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"val_fraction must be between 0 and 1, got {self.val_fraction}")

    def model_config(self, vocab_size):
        return GPTConfig(vocab_size, self.block_size, self.n_layer, self.n_head, self.n_embd,
                         self.dropout, self.bias)


CONFIGS = {
    "tiny": TrainConfig(name="tiny", tokenizer="gpt2", block_size=256, n_layer=2, n_head=4, n_embd=32,
                        batch=4, steps=500, lr=2.5e-3, min_lr=2.5e-3, warmup=0, betas=(0.9, 0.95),
                        weight_decay=0.0, grad_clip=0.0, eval_interval=50, eval_batches=10,
                        final_eval_batches=50),
    "char": TrainConfig(),
    "chat-base": TrainConfig(name="chat-base", block_size=256, batch=8, steps=1500, eval_interval=250),
}


def config_named(name, **overrides):
    """CONFIGS[name] with the fields in ``overrides`` (those not None) replaced."""
    if name not in CONFIGS:
        raise ValueError(f"unknown config {name!r}; expected one of {sorted(CONFIGS)}")
    return overridden(CONFIGS[name], **overrides)


def overridden(config, **overrides):
    """``config`` with the fields in ``overrides`` (those not None) replaced: a command
    line's options, None where not given."""
    return replace(config, **{k: v for k, v in overrides.items() if v is not None})


def load_corpus(config, tokenizer):
    """The token ids of the run's corpus: a .bin of uint16 ids (tokens.py), or a text file
    encoded now; tiny-shakespeare (found or fetched as data.py does) when none is named.
    Returns (ids, text), text None for a .bin."""
    path = Path(config.data) if config.data else fetch([tokens.SHAKESPEARE])[0]
    if path.suffix == ".bin":
        return np.asarray(tokens.load(path, tokenizer.n_vocab)), None
    if not path.is_file():
        raise FileNotFoundError(f"corpus not found: {path} (expected a token .bin or a text file)")
    text = read_text(path, "a token .bin or a UTF-8 text file (the corpus)")
    return np.array(tokenizer.encode_ordinary(text), dtype=np.int64), text


def make_streams(config, tokenizer):
    """{"train", "val"}: TokenStreams over the corpus's head and its held-out tail."""
    ids, text = load_corpus(config, tokenizer)
    train_ids, val_ids = tokens.split(ids, config.val_fraction)
    if not config.conversations:
        return {name: tokens.TokenStream(part, config.block_size, config.batch, seed=config.seed)
                for name, part in (("train", train_ids), ("val", val_ids))}
    if text is None or config.tokenizer != "char":
        raise ValueError("conversations=True needs a text corpus and the char tokenizer "
                         "(one token per character, so the text's offsets are token offsets)")
    scored, starts = tokens.conversation_targets(text)
    scored, starts, n = np.array(scored), np.array(starts), len(train_ids)
    return {"train": tokens.TokenStream(train_ids, config.block_size, config.batch, config.seed,
                                        starts=starts[starts < n], scored=scored[:n]),
            "val": tokens.TokenStream(val_ids, config.block_size, config.batch, config.seed,
                                      starts=starts[starts >= n] - n, scored=scored[n:])}


def make_optimizer(model, config):
    """AdamW with weight decay on the weight matrices and embeddings only: decaying biases
    and LayerNorm gains toward 0 only removes useful offsets and scales."""
    params = list(model.parameters())
    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    return optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                        {"params": no_decay, "weight_decay": 0.0}], lr=config.lr, betas=config.betas)


def training_step(model, opt, config):
    """update(x, y) -> loss: one step of ``model.loss`` (the loss without the (batch, block,
    vocab) logits), backward, gradient clipping at ``config.grad_clip`` (0: none) and
    ``opt``'s step; through tg.compile when ``config.compile``. The recurrent trainer's too."""
    def update(x, y):
        loss = model.loss(x, y)
        opt.zero_grad()
        loss.backward()
        if config.grad_clip:
            clip_grad_norm_(model.parameters(), config.grad_clip)
        opt.step()
        return loss
    return tg.compile(update) if config.compile else update


@dataclass
class Run:
    """What training produced and measured."""
    model: GPT
    config: TrainConfig
    tokenizer: object
    losses: list = field(default_factory=list)        # every step's training loss
    history: list = field(default_factory=list)       # dicts: step, train, val, lr, seconds
    step: int = 0                                     # steps taken
    seconds: float = 0.0                              # training time (evaluations excluded)
    final: dict = None                                # {"train", "val"} on final_eval_batches

    @property
    def tokens_per_second(self):
        return self.step * self.config.batch * self.config.block_size / max(self.seconds, 1e-9)


@tg.no_grad()
def estimate_loss(model, stream, n_batches, device, first_step=10**9):
    """Mean loss over ``n_batches`` fixed batches of ``stream`` (drawn as steps first_step,
    first_step + 1, ..., so every evaluation of a run sees the same ones)."""
    was_training = model.training
    model.eval()
    total = 0.0
    with tg.no_grad():                       # no graph: nothing is differentiated here
        for i in range(n_batches):
            x, y = stream.batch(first_step + i)
            total += model.loss(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device)).item()
    model.train(was_training)
    return total / n_batches


def train(config, out=None, resume=None, progress=True, log=print):
    """Train as ``config`` says, writing to the folder ``out`` (when given) a checkpoint,
    ``log.csv`` (the evaluations), ``loss.csv`` (every step) and ``summary.json`` every
    ``checkpoint_interval`` steps and at the end (``save_run``), and ``train.log`` as it
    goes; ``resume``: a checkpoint to continue from.
    Returns a Run. A run that starts from ``init_from`` takes that model's shape (block
    size, layers, heads, width, tokenizer) with its weights; the config gives the rest."""
    device = use_device(config.device)
    base = None
    if config.init_from and not resume:            # read once: its shape now, its weights below
        base, base_config = read_checkpoint(config.init_from, device)
        config = replace(config, **{name: getattr(base_config, name) for name in MODEL_FIELDS})
    tokenizer = TOKENIZERS[config.tokenizer]()
    streams = make_streams(config, tokenizer)
    tg.seed(config.seed)
    run = Run(GPT(config.model_config(tokenizer.n_vocab), device=device), config, tokenizer)
    opt = make_optimizer(run.model, config)
    if base is not None:
        CHECKPOINT.load_weights(run.model, base, config.init_from)
    if resume:
        restore(run, opt, resume)
    scheduler = WarmupCosineLR(opt, min(config.warmup, config.steps), config.steps, config.min_lr, last_epoch=run.step - 1)
    out = run_folder(out) if out else None
    logger = Logger(out, log, append=bool(resume))
    logger(f"{config.name}: {run.model.num_parameters():,} parameters, {len(streams['train'].ids):,} training and "
           f"{len(streams['val'].ids):,} validation tokens, {config.steps} steps of {config.batch} x "
           f"{config.block_size} tokens on {device}" + (f", resumed at step {run.step}" if resume else ""))

    def evaluate(step):
        row = dict(step=step, lr=opt.param_groups[0]["lr"], seconds=round(run.seconds, 2),
                   **{name: estimate_loss(run.model, s, config.eval_batches, device) for name, s in streams.items()})
        run.history.append(row)
        logger(f"step {step}: train loss {row['train']:.4f}, val loss {row['val']:.4f}, "
               f"{run.seconds:.1f} s, {run.tokens_per_second:,.0f} tokens/s")

    update = training_step(run.model, opt, config)

    bar = progress_bar(config.name, config.steps, progress, first=run.step)
    for step in bar:
        if step % config.eval_interval == 0:
            evaluate(step)
        start = time.perf_counter()
        x, y = streams["train"].batch(step)
        loss = update(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device))
        scheduler.step()
        run.losses.append(loss.item())
        run.step = step + 1
        run.seconds += time.perf_counter() - start
        bar.set_postfix(loss=f"{run.losses[-1]:.4f}", refresh=False)
        if out and run.step % config.checkpoint_interval == 0 and run.step < config.steps:
            save_run(run, opt, out)
    evaluate(run.step)
    run.final = {name: estimate_loss(run.model, s, config.final_eval_batches, device)
                 for name, s in streams.items()}
    logger(f"done: {run.step} steps in {run.seconds:.1f} s ({run.tokens_per_second:,.0f} tokens/s); "
           f"loss over {config.final_eval_batches} batches: train {run.final['train']:.4f}, "
           f"val {run.final['val']:.4f}")
    if out:
        save_run(run, opt, out)
    return run


def save_run(run, opt, out):
    """checkpoint.tg, log.csv (the evaluations), loss.csv (every step) and summary.json, all
    of the run as it is now (``write_run``): at every checkpoint and at the end."""
    history = [[row.get(name, "") for name in LOG_FIELDS] for row in run.history]
    write_run(out, lambda path: save_checkpoint(run, opt, path),
              {"log.csv": (LOG_FIELDS, history), "loss.csv": loss_log(run.losses)}, summary(run))


def summary(run):
    """The run so far; the final losses once it has finished (run.final)."""
    finished = {"final_train_loss": run.final["train"], "final_val_loss": run.final["val"]} if run.final else {}
    return {"config": asdict(run.config), "parameters": run.model.num_parameters(), "steps": run.step,
            "seconds": round(run.seconds, 2), "tokens_per_second": round(run.tokens_per_second), **finished}


def save_checkpoint(run, opt, path):
    """Everything a resumed run needs, written atomically (tg.save: temp file + rename)."""
    state = generator().getstate()
    CHECKPOINT.save(path, run.config, run.model, optimizer=opt.state_dict(), step=run.step,
                    seconds=run.seconds, losses=run.losses, history=run.history,
                    rng=[state[0], list(state[1]), state[2]])


def read_checkpoint(path, device):
    """(everything saved, the run's TrainConfig) of a GPT checkpoint, its weights checked to
    be of the config's size; anything else is a ValueError naming the file."""
    saved = CHECKPOINT.read(path, use_device(device), RUN_STATE)
    config = CHECKPOINT.config(saved, TrainConfig, path)
    # The sizes the model will be built with, against the weights before it is built:
    # block_size and n_embd (wpe), n_layer (its last layer); the vocabulary is the tokenizer's.
    E = config.n_embd
    CHECKPOINT.check_shapes(saved, {"transformer.wpe.weight": (config.block_size, E),
                                    f"transformer.h.{config.n_layer - 1}.mlp.c_fc.weight": (4 * E, E)},
                            path)
    return saved, config


def load_checkpoint(path, device="cpu"):
    """(GPT with the checkpoint's weights on ``device``, its TrainConfig, its tokenizer)."""
    saved, config = read_checkpoint(path, device)
    tokenizer = TOKENIZERS[config.tokenizer]()
    with skip_init(device):                      # the checkpoint's weights replace any initial ones
        model = GPT(config.model_config(tokenizer.n_vocab), device=device)
    CHECKPOINT.load_weights(model, saved, path)
    return model, config, tokenizer


def restore(run, opt, path):
    """Put a checkpoint's weights, optimizer state, step, log and random state into ``run``."""
    saved, config = read_checkpoint(path, run.config.device)
    mine = run.config.model_config(run.tokenizer.n_vocab)
    if config.model_config(run.tokenizer.n_vocab) != mine:
        raise ValueError(f"{path} holds a model {config.model_config(run.tokenizer.n_vocab)}, "
                         f"but this run builds {mine}")
    CHECKPOINT.load_weights(run.model, saved, path)
    try:
        opt.load_state_dict(saved["optimizer"])
        version, internal, gauss = saved["rng"]
        generator().setstate((version, tuple(internal), gauss))
    except (RuntimeError, ValueError, TypeError) as err:    # what the two refuse bad state with
        raise CHECKPOINT.error(path, f"its optimizer or random state: {err}") from None
    run.step, run.seconds = saved["step"], saved["seconds"]
    run.losses, run.history = list(saved["losses"]), list(saved["history"])


def decode_sample(model, tokenizer, prompt, max_new_tokens, **sampling):
    """The prompt (text) continued by the model, as text."""
    ids = tokenizer.encode(prompt) or [0]
    idx = tg.tensor([ids], device=model.transformer.wte.weight.device)
    out = model.generate(idx, max_new_tokens, **sampling)
    return tokenizer.decode(out.tolist()[0])

