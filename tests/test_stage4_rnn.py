"""stage4's character RNN: the model (its state carried from one call to the next, its
generation), its training program (learning, a compiled step equal to eager's, the
checkpoint, the command line)."""
from dataclasses import replace

import numpy as np
import pytest

import stage2_tensor as tg
from stage4_models.rnn import CharRNN
from stage4_models.rnn.__main__ import main
from stage4_models.rnn.training import RNNConfig, load_checkpoint, train

from .test_stage4_gpt_training import corpus

pytestmark = pytest.mark.stage4


def tiny_run(tmp_path, **changes):
    return replace(RNNConfig(block_size=16, n_embd=8, hidden=16, n_layer=1, batch=4, steps=6, lr=1e-2,
                             eval_interval=3, eval_batches=2, final_eval_batches=2, data=str(corpus(tmp_path))),
                   **changes)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_a_window_read_in_two_calls_is_the_window_read_at_once(cell):
    """The state a call returns carries what it read: logits of tokens[:, 5:] read from the
    state after tokens[:, :5] are those of the whole window."""
    tg.seed(0)
    model = CharRNN(11, cell, n_embd=6, hidden=7, n_layer=2).double()
    tokens = tg.tensor(np.random.default_rng(0).integers(0, 11, size=(3, 12)))
    with tg.no_grad():
        whole, _ = model(tokens)
        first, state = model(tokens[:, :5])
        rest, _ = model(tokens[:, 5:], state)
    np.testing.assert_allclose(tg.cat([first, rest], 1).numpy(), whole.numpy(), rtol=1e-12)


def test_greedy_generation_is_the_argmax_of_the_whole_text_read_again():
    tg.seed(1)
    model = CharRNN(9, "gru", n_embd=5, hidden=6, n_layer=1).double()
    out = model.generate(tg.tensor([[1, 2, 3]]), 6, greedy=True)
    assert out.shape == (1, 9) and out[:, :3].tolist() == [[1, 2, 3]]
    with tg.no_grad():
        logits, _ = model(out[:, :-1])
    assert logits.argmax(-1)[0, 2:].tolist() == out[0, 3:].tolist()
    with pytest.raises(ValueError, match="temperature"):
        model.generate(tg.tensor([[1]]), 2, temperature=0)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_training_learns_the_corpus(tmp_path, cell):
    run = train(tiny_run(tmp_path, cell=cell, hidden=48, n_embd=16, steps=150, eval_interval=50),
                progress=False, log=None)
    assert run.losses[0] > 4.0                                   # about ln(96): chance
    assert run.final["val"] < 1.6                                # the sentences' letters are learned
    assert [row["step"] for row in run.history] == [0, 50, 100, 150]


def test_a_compiled_run_takes_eagers_steps_and_its_checkpoint_loads_back(tmp_path):
    config = tiny_run(tmp_path, cell="lstm", n_layer=2)
    compiled = train(config, out=tmp_path / "run", progress=False, log=None)
    eager = train(replace(config, compile=False), progress=False, log=None)
    assert compiled.losses == eager.losses and compiled.final == eager.final
    model, saved = load_checkpoint(tmp_path / "run" / "checkpoint.tg")
    assert saved == config
    for (name, a), (_, b), (_, c) in zip(compiled.model.state_dict().items(), eager.model.state_dict().items(),
                                         model.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
        np.testing.assert_array_equal(a.numpy(), c.numpy(), err_msg=name)   # bit-exact checkpoint
    assert (tmp_path / "run" / "loss.csv").read_text().count("\n") == 1 + config.steps


def test_command_line_train_and_sample(tmp_path, capsys):
    data, out = str(corpus(tmp_path)), str(tmp_path / "run")
    assert main(["train", "--cell", "gru", "--data", data, "--steps", "3", "--batch", "2", "--hidden", "8",
                 "--embedding", "4", "--layers", "1", "--block-size", "8", "--eval-interval", "2",
                 "--eval-batches", "1", "--final-eval-batches", "1", "--out", out]) == 0
    assert "done: 3 steps" in capsys.readouterr().out
    assert main(["sample", "--checkpoint", out + "/checkpoint.tg", "--prompt", "the ", "--tokens", "5"]) == 0
    assert capsys.readouterr().out.startswith("the ")
    with pytest.raises(SystemExit) as exited:
        main(["train", "--cell", "elman"])
    assert exited.value.code == 2 and "invalid choice: 'elman'" in capsys.readouterr().err
    assert main(["sample", "--checkpoint", str(tmp_path / "missing.tg")]) == 2
    assert "error:" in capsys.readouterr().err
