"""stage4's GPT beyond the forward pass: generation (with and without the KV cache), the
learning-rate schedule, gradient clipping, the character tokenizer, and the training program
(learning, checkpoints, resuming, the command line)."""
import csv
import json
import math
import random
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.optim as optim
from stage2_tensor.nn.utils import clip_grad_norm_
from stage2_tensor.optim.lr_scheduler import WarmupCosineLR
from stage4_models import tokens
from stage4_models.gpt import GPT, GPTConfig, training
from stage4_models.gpt.__main__ import main
from stage4_models.gpt.generate import draw
from stage4_models.gpt.kv_cache import KVCache
from stage4_models.gpt.training import TrainConfig, load_checkpoint, train
from stage4_models.tokenizer import CharTokenizer

from .engines import device_params

pytestmark = pytest.mark.stage4

DEVICES = device_params("python", "cpu", "cpu:lazy")


def small_model(device, dtype=tg.float64, block_size=8, seed=0):
    tg.seed(seed)
    model = GPT(GPTConfig(vocab_size=13, block_size=block_size, n_layer=2, n_head=2, n_embd=8),
                device=device, dtype=dtype)
    rng = np.random.default_rng(seed)           # larger weights than GPT-2's: peaked, varied logits
    with tg.no_grad():
        for name, p in model.named_parameters():
            values = rng.normal(1.0 if ".ln_" in name else 0.0, 0.5, size=p.shape)
            p.copy_(tg.tensor(values.tolist(), dtype=p.dtype, device=p.device))
    return model


# ---- generation ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_cache_gives_the_logits_of_a_full_forward_pass(device):
    model = small_model(device)
    idx = tg.tensor([[1, 5, 2, 7, 3, 3], [0, 12, 4, 4, 9, 1]], device=device)
    full = model(idx).detach().numpy()
    cache = KVCache()
    first = model(idx[:, :4], cache=cache)                    # the prompt, then one position at a time
    assert cache.length() == 4
    steps = [model(idx[:, t:t + 1], cache=cache) for t in (4, 5)]
    assert cache.length() == 6
    np.testing.assert_allclose(first.detach().numpy(), full[:, :4], rtol=1e-12, atol=1e-12)
    for t, logits in zip((4, 5), steps):
        np.testing.assert_allclose(logits.detach().numpy()[:, 0], full[:, t], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="length 9.*block size.* is 8"):
        model(tg.tensor([[1, 2, 3]], device=device), cache=cache)   # 6 cached + 3 > 8


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("capacity", [None, 12], ids=["growing", "block"])
def test_cache_buffers_written_in_place_give_the_full_forward_pass(device, capacity):
    # under no_grad (generation) the cache writes into preallocated buffers; without a
    # capacity they start at the prompt's 3 positions and double (3 -> 6 -> 12)
    model = small_model(device, block_size=12)
    idx = tg.tensor([[1, 5, 2, 7, 3, 3, 9, 0, 11, 4], [0, 12, 4, 4, 9, 1, 2, 2, 8, 6]], device=device)
    with tg.no_grad():
        full = model(idx).numpy()
        cache = KVCache(capacity)
        logits = [model(idx[:, :3], cache=cache).numpy()]
        buffers = [cache.entries[model.transformer.h[0].attn][0]]
        for t in range(3, 10):
            logits.append(model(idx[:, t:t + 1], cache=cache).numpy())
            buffers.append(cache.entries[model.transformer.h[0].attn][0])
    assert cache.length() == 10
    np.testing.assert_allclose(np.concatenate(logits, axis=1), full, rtol=1e-12, atol=1e-12)
    sizes = [b.shape[2] for b in buffers]
    assert sizes == ([3, 6, 6, 6, 12, 12, 12, 12] if capacity is None else [12] * 8)
    assert len({id(b) for b in buffers}) == (3 if capacity is None else 1)   # no copy but to grow


def test_cache_returns_what_was_appended_and_rejects_a_bad_capacity():
    rng = np.random.default_rng(0)
    parts = [rng.normal(size=(2, 3, n, 4)) for n in (2, 1, 3, 1)]
    layer = object()
    for recording in (False, True):      # in-place writes; concatenation while recording a graph
        cache = KVCache()
        with tg.set_grad_enabled(recording):
            for i, part in enumerate(parts):
                k = tg.tensor(part.tolist(), dtype=tg.float64, device="cpu", requires_grad=True)
                keys, values = cache.append(layer, k, k * 2)
                want = np.concatenate(parts[:i + 1], axis=2)
                np.testing.assert_array_equal(keys.detach().numpy(), want)
                np.testing.assert_array_equal(values.detach().numpy(), 2 * want)
                assert cache.length(layer) == want.shape[2]
        assert keys.requires_grad == recording
    for bad in (0, -3, 2.5, True, "8"):
        with pytest.raises(ValueError, match="capacity must be a positive int"):
            KVCache(bad)


@pytest.mark.parametrize("device", DEVICES)
def test_cached_generation_within_the_block_matches_uncached(device):
    model = small_model(device, block_size=32)
    idx = tg.tensor([[1, 2, 3]], device=device)
    cached = model.generate(idx, 20, greedy=True, use_cache=True).tolist()
    assert cached == model.generate(idx, 20, greedy=True, use_cache=False).tolist()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sampling", [dict(greedy=True), dict(seed=3), dict(seed=4, top_k=3, temperature=0.7)],
                         ids=["greedy", "sampled", "top_k"])
def test_cached_and_uncached_generation_give_identical_tokens(device, sampling):
    model = small_model(device)
    idx = tg.tensor([[1, 2, 3], [4, 5, 6]], device=device)
    # 14 new tokens: past the block of 8, where the window slides and the cache is rebuilt
    cached = model.generate(idx, 14, use_cache=True, **sampling).tolist()
    uncached = model.generate(idx, 14, use_cache=False, **sampling).tolist()
    assert cached == uncached
    assert [row[:3] for row in cached] == idx.tolist() and len(cached[0]) == 17
    assert len({tuple(row[3:]) for row in cached}) == 2        # the two prompts continue differently


def test_greedy_is_the_argmax_of_an_uncropped_forward_pass():
    model = small_model("cpu")
    out = model.generate(tg.tensor([[3, 1]], device="cpu"), 5, greedy=True).tolist()[0]
    for t in range(2, len(out)):
        logits = model(tg.tensor([out[max(0, t - 8):t]], device="cpu")).detach().numpy()[0, -1]
        assert out[t] == int(np.argmax(logits))
    sampled_top1 = model.generate(tg.tensor([[3, 1]], device="cpu"), 5, top_k=1, seed=9).tolist()[0]
    assert sampled_top1 == out                                   # top_k=1 leaves only the argmax


def test_sampling_follows_the_distribution_and_repeats_by_seed():
    model = small_model("cpu")
    idx = tg.tensor([[3]], device="cpu")
    assert model.generate(idx, 6, seed=1).tolist() == model.generate(idx, 6, seed=1).tolist()
    probs = np.exp(model(idx).detach().numpy()[0, -1])
    probs /= probs.sum()
    rows = np.repeat(probs[None], 4000, axis=0)              # 4000 draws from the same distribution
    draws = np.bincount(draw(rows, random.Random(0)), minlength=13) / 4000
    assert np.abs(draws - probs).max() < 0.04                   # binomial sd <= 0.008
    first = model.generate(idx, 1, seed=5, use_cache=False).tolist()[0][1]
    assert first == draw(probs[None], random.Random(5))[0]     # generate draws the same way
    hot = model.generate(idx, 1, seed=0, temperature=1e-3).tolist()[0][1]
    assert hot == int(np.argmax(probs))                         # temperature -> 0: the argmax


def test_generate_rejects_bad_settings():
    model = small_model("cpu")
    idx = tg.tensor([[3]], device="cpu")
    with pytest.raises(ValueError, match="temperature must be > 0.*greedy=True"):
        model.generate(idx, 2, temperature=0)
    with pytest.raises(ValueError, match="top_k must be at least 1"):
        model.generate(idx, 2, top_k=0)
    with pytest.raises(ValueError, match=r"shape \(batch, length >= 1\), got \(3,\)"):
        model.generate(tg.tensor([1, 2, 3], device="cpu"), 2)


# ---- schedule, clipping, tokenizer -----------------------------------------------------------
def test_warmup_cosine_schedule():
    p = tg.zeros(2, requires_grad=True)
    opt = optim.AdamW([p], lr=1.0)
    scheduler = WarmupCosineLR(opt, warmup=4, total=12, min_lr=0.1)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(14):
        scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs[:4] == pytest.approx([1 / 5, 2 / 5, 3 / 5, 4 / 5])            # linear warm-up
    assert lrs[4] == pytest.approx(1.0)                                   # the peak
    assert lrs[8] == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi / 2)) / 2)   # halfway down
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:]))                  # then only down
    assert lrs[12:] == pytest.approx([0.1, 0.1, 0.1])                     # the floor
    with pytest.raises(ValueError, match="0 <= warmup <= total"):
        WarmupCosineLR(opt, warmup=5, total=3)


@pytest.mark.parametrize("device", DEVICES)
def test_clip_grad_norm(device):
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=s) for s in ((3, 4), (5,), ())]
    params = [tg.zeros(*g.shape, dtype=tg.float64, device=device, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = tg.tensor(g.tolist(), dtype=tg.float64, device=device)
    norm = math.sqrt(sum((g ** 2).sum() for g in grads))
    total = clip_grad_norm_(params, norm * 2)                 # the norm as a tensor, read by no one
    assert total.shape == () and total.device == device and total.item() == pytest.approx(norm)
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), g)      # below the cap: multiplied by exactly 1
    assert clip_grad_norm_(params, 1.0).item() == pytest.approx(norm)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g / norm, rtol=1e-6)   # same direction, length 1
    clip_grad_norm_(params, 0)                                # no check of max_norm, as PyTorch: 0 zeroes them
    assert not any(p.grad.numpy().any() for p in params)


def test_char_tokenizer():
    tok = CharTokenizer()
    text = "First Citizen:\nBefore we proceed, call 0800-123 or mail a@b.example!"
    assert tok.n_vocab == 96 and tok.decode(tok.encode(text)) == text
    assert tok.encode("\n A~") == [0, 1, 34, 95]
    with pytest.raises(ValueError, match=r"character 'é' at offset 3 is not in the character vocabulary"):
        tok.encode("caf\u00e9")
    for bad in (-1, 96, 1.0):               # -1 is no id, not the last character ('~')
        with pytest.raises(ValueError, match=rf"unknown token id {bad}: expected an int in 0\.\.95"):
            tok.decode([1, bad])


def test_prepare_char_token_file(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.txt").write_text("to be")
    (corpus / "b.txt").write_text("or not")
    assert tokens.main(["prepare", str(corpus), str(tmp_path / "c.bin"), "--char"]) == 0
    ids = tokens.load(tmp_path / "c.bin")
    assert CharTokenizer().decode(ids.tolist()) == "to be\n\nor not"   # documents joined by a blank line


# ---- training --------------------------------------------------------------------------------
def corpus(tmp_path):
    """A corpus with structure to learn: a few sentences repeated in a random order."""
    rng = np.random.default_rng(0)
    lines = ["the cat sat on the mat.", "a dog ran to the park!", "we meet at 9:30 in room B7."]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines[i] for i in rng.integers(0, 3, size=400)))
    return path


def tiny_run(tmp_path, **changes):
    return replace(TrainConfig(name="test", block_size=16, n_layer=1, n_head=2, n_embd=16, batch=4,
                               steps=6, warmup=2, lr=3e-3, eval_interval=3, eval_batches=2,
                               final_eval_batches=2, checkpoint_interval=3, data=str(corpus(tmp_path))),
                   **changes)


def test_training_learns_the_corpus(tmp_path):
    run = train(tiny_run(tmp_path, steps=250, lr=1e-2, eval_interval=50, dropout=0.1), progress=False, log=None)
    assert run.step == 250 and len(run.losses) == 250
    assert run.losses[0] > 4.0                                   # about ln(96): chance
    assert run.final["val"] < 1.2                                # most characters are now predictable
    assert [row["step"] for row in run.history] == [0, 50, 100, 150, 200, 250]
    tok = CharTokenizer()

    def loss_of(text):                                          # mean nats per character
        ids = tok.encode("\n" + text)
        with tg.no_grad():
            return run.model(tg.tensor([ids[:-1]]), tg.tensor([ids[1:]]))[1].item()
    sentence = "the cat sat on"               # 14 characters: within the block of 16
    shuffled = "".join(random.Random(0).sample(sentence, len(sentence)))
    assert loss_of(sentence) < 1.5 < loss_of(shuffled) - 1.5    # it knows the sentences, not just the letters


def test_a_compiled_run_takes_eagers_steps(tmp_path):
    """config.compile (the default) trains through tg.compile: eager's losses and weights."""
    config = tiny_run(tmp_path, steps=8, dropout=0.2)
    compiled = train(config, progress=False, log=None)
    eager = train(replace(config, compile=False), progress=False, log=None)
    assert compiled.losses == eager.losses and compiled.final == eager.final
    for (name, a), (_, b) in zip(compiled.model.state_dict().items(), eager.model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_resumed_run_takes_the_same_steps(tmp_path):
    config = tiny_run(tmp_path, dropout=0.2)                     # dropout: the random state must resume too
    whole = train(config, out=tmp_path / "whole", progress=False, log=None)
    halfway = train(replace(config, steps=3), out=tmp_path / "half", progress=False, log=None)
    resumed = train(config, out=tmp_path / "half", resume=tmp_path / "half" / "checkpoint.tg",
                    progress=False, log=None)
    assert resumed.losses[:3] == halfway.losses and resumed.losses == whole.losses
    for (name, a), (_, b) in zip(whole.model.state_dict().items(), resumed.model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    model, saved_config, _ = load_checkpoint(tmp_path / "whole" / "checkpoint.tg")
    assert saved_config == config
    for (name, a), (_, b) in zip(whole.model.state_dict().items(), model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)   # bit-exact checkpoint
    log = (tmp_path / "half" / "train.log").read_text()
    assert "resumed at step 3" in log and "tokens/s" in log


def killed_at_evaluation(monkeypatch, n):
    """Make the run die (as if killed) at its evaluation number n (each evaluates two streams)."""
    calls, real = [], training.estimate_loss

    def estimate_loss(*args, **kwargs):
        calls.append(None)
        if len(calls) > 2 * n:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(training, "estimate_loss", estimate_loss)


def test_the_logs_beside_a_checkpoint_are_its_own(tmp_path, monkeypatch):
    """A run killed after a checkpoint leaves loss.csv, log.csv and summary.json of that
    moment, whole: they were written at the end only (an older run's, or none, sat beside
    each checkpoint) and in place (a kill left part of a file)."""
    killed_at_evaluation(monkeypatch, 1)             # step 0's evaluation, the checkpoint at 3, dead
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        train(tiny_run(tmp_path), out=out, progress=False, log=None)
    saved = tg.load(out / "checkpoint.tg")
    assert saved["step"] == 3
    with open(out / "loss.csv", newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header == ["step", "loss"] and [int(step) for step, _ in rows] == [0, 1, 2]
    np.testing.assert_array_equal(np.float32([loss for _, loss in rows]), np.float32(saved["losses"]))
    with open(out / "log.csv", newline="") as f:
        assert [row[0] for row in csv.reader(f)] == ["step", "0"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 3 and "final_val_loss" not in summary
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint.tg", "log.csv", "loss.csv", "summary.json",
                                                     "train.log"]


def test_a_run_removes_what_killed_saves_left_when_it_starts(tmp_path, monkeypatch):
    """A save killed mid-write leaves a temporary file; the next run in that folder removes
    it when it starts, even if it writes nothing (rather than leaving it until the next write
    to the same name)."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "run"
    out.mkdir()
    stale = [out / f".{name}.{dead.pid}.0badcafe.tmp" for name in ("checkpoint.tg", "loss.csv")]
    for path in stale:
        path.write_bytes(b"half a file")
    killed_at_evaluation(monkeypatch, 0)                      # dead before any write
    with pytest.raises(KeyboardInterrupt):
        train(tiny_run(tmp_path), out=out, progress=False, log=None)
    assert not any(path.exists() for path in stale)


def tiny_checkpoint(path, **changes):
    """A GPT checkpoint as training writes it (1 layer, n_embd 8), with ``changes`` to what
    it holds; the Run and the optimizer it was saved from."""
    config = TrainConfig(block_size=8, n_layer=1, n_head=2, n_embd=8, device="python")
    tokenizer = CharTokenizer()
    run = training.Run(GPT(config.model_config(tokenizer.n_vocab), device="python"), config, tokenizer)
    opt = training.make_optimizer(run.model, config)
    training.save_checkpoint(run, opt, path)
    tg.save({**tg.load(path), **changes}, path)
    return run, opt


def test_a_checkpoint_whose_config_does_not_fit_its_weights_is_refused_before_building(tmp_path, monkeypatch):
    """The config says how large a model to build: one that says more layers or a wider
    model than the weights hold is refused before that model is allocated."""
    path = tmp_path / "ck.tg"
    tiny_checkpoint(path)
    saved = tg.load(path)

    def never(*args, **kwargs):
        raise AssertionError("the model was built before its size was checked")
    monkeypatch.setattr(training, "GPT", never)
    lies = {"n_layer": (3, r"transformer.h.2.mlp.c_fc.weight is missing"),
            "n_embd": (64, r"transformer.wpe.weight has shape \(8, 8\), expected \(8, 64\)"),
            "block_size": ("8", r"config's block_size is a str \('8'\), expected int")}
    for field_name, (value, message) in lies.items():
        tg.save({**saved, "config": {**saved["config"], field_name: value}}, path)
        with pytest.raises(ValueError, match=f"ck.tg is not a GPT checkpoint .*{message}"):
            load_checkpoint(path, "python")


def test_resuming_from_a_checkpoint_with_bad_run_state_names_the_file(tmp_path):
    path = tmp_path / "ck.tg"
    tiny_checkpoint(path, optimizer=[1, 2])
    with pytest.raises(ValueError, match=r"ck.tg .*'optimizer' is a list \(\[1, 2\]\), expected dict"):
        training.read_checkpoint(path, "python")
    run, opt = tiny_checkpoint(path, rng=[3, [1, 2], None])           # 2 numbers, not 625
    with pytest.raises(ValueError, match=r"ck.tg .*its optimizer or random state: "):
        training.restore(run, opt, path)


@pytest.mark.slow          # seconds of whole runs or compiles: make test-slow
def test_command_line_train_resume_sample(tmp_path, capsys):
    data, out = str(corpus(tmp_path)), str(tmp_path / "run")
    common = ["--data", data, "--eval-interval", "2", "--eval-batches", "1", "--final-eval-batches", "1",
              "--batch", "2", "--out", out]
    assert main(["train", "--config", "char", "--steps", "2"] + common) == 0
    assert main(["train", "--resume", out + "/checkpoint.tg", "--steps", "4"] + common) == 0
    printed = capsys.readouterr().out
    assert "resumed at step 2" in printed and "done: 4 steps" in printed
    assert (tmp_path / "run" / "loss.csv").read_text().count("\n") == 5     # header + 4 steps
    assert main(["sample", "--checkpoint", out + "/checkpoint.tg", "--prompt", "the ", "--tokens", "7"]) == 0
    sample = capsys.readouterr().out
    assert sample.startswith("the ") and len(sample.rstrip("\n")) >= 4 + 1
    assert main(["train", "--config", "char", "--data", str(tmp_path / "missing.txt")]) == 2
    assert "corpus not found" in capsys.readouterr().err
