"""Every stage4 command line answers a bad input with exit status 2 and one line saying
``error: ...`` (stage4_models/cli.py and arguments.py), never a traceback, and before any
training starts: the cases here would otherwise train, or fail after training."""
import importlib
import os
import subprocess
import sys

import pytest

import stage2_tensor as tg
from stage2_tensor import backend
from stage3_native.cuda import backend as cuda_backend
from stage4_models.mnist.training import CHECKPOINT_KIND as MNIST_KIND

pytestmark = pytest.mark.stage4


@pytest.fixture
def paths(tmp_path):
    """The bad inputs, by name: random bytes and a truncated tracegrad file for a
    checkpoint, a folder where a file belongs, a plain file where a folder belongs; a small
    text corpus, and one in Latin-1."""
    (tmp_path / "random.tg").write_bytes(os.urandom(1000))
    tg.save({"weights": tg.zeros(64)}, tmp_path / "whole.tg")
    whole = (tmp_path / "whole.tg").read_bytes()
    (tmp_path / "truncated.tg").write_bytes(whole[:len(whole) // 2])
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("not a folder\n")
    (tmp_path / "corpus.txt").write_text("to be or not to be\n")
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))      # a corpus that is not UTF-8
    # a tracegrad file that says it is an MNIST checkpoint, with none of MnistNet's weights
    tg.save({"kind": MNIST_KIND, "config": {}, "model": {"w": tg.zeros(3)}}, tmp_path / "other.tg")
    return {p.stem: str(p) for p in tmp_path.iterdir()}


def run(program, argv):
    """The exit status of ``python -m stage4_models.<program> argv``, run in this process;
    an uncaught exception fails the test with its traceback."""
    module = importlib.import_module(f"stage4_models.{program}")
    main = getattr(module, "main", None) or importlib.import_module(f"stage4_models.{program}.__main__").main
    try:
        return main(argv)
    except SystemExit as stop:              # argparse's errors exit from inside parse_args
        return stop.code


def assert_user_error(program, argv, expected, capsys):
    status = run(program, argv)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 2, err
    # one line on stderr, parse errors (cli.Parser) included: no usage, no traceback
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected in lines[0], err
    return lines[0]


NUMBERS = [
    ("mnist", "train --steps -5", "argument --steps: expected an integer of at least 1, got '-5'"),
    ("mnist", "train --steps 1 --lr nan", "argument --lr: expected a finite number above 0, got 'nan'"),
    ("mnist", "train --steps 1 --batch 0", "argument --batch"),
    ("mnist", "train --steps 1 --test-limit -3", "argument --test-limit"),
    ("mnist", "table --seeds 0", "argument --seeds"),
    ("names", "train --steps 1 --lr inf", "argument --lr: expected a finite number above 0, got 'inf'"),
    ("names", "train --steps 1 --lr-end 0", "argument --lr-end"),
    ("names", "train --steps 1 --hidden 0", "argument --hidden"),
    ("names", "bigram --smoothing -1", "argument --smoothing: expected a finite number of at least 0"),
    ("names", "bigram -n -2", "argument -n: expected an integer of at least 0"),
    ("gpt", "train --steps 1 --dropout 1", "argument --dropout"),
    ("gpt", "train --steps 1 --warmup -1", "argument --warmup"),
    ("gpt", "train --steps 1 --lr -0.1", "argument --lr"),
    ("gpt", "train --steps 1 --seed -1", "argument --seed: expected an integer of at least 0"),
    ("gpt", "sample --checkpoint {whole} --temperature 0", "argument --temperature"),
    ("gpt", "sample --checkpoint {whole} --top-k 0", "argument --top-k: expected an integer of at least 1"),
    ("gpt", "sample --checkpoint {whole} --tokens -1", "argument --tokens"),
    ("chat", "train --steps 0", "argument --steps"),
    ("chat", "train --eval-limit -1", "argument --eval-limit"),
    ("chat.dataset", "--out {folder} --repeats 0", "argument --repeats"),
]

CHECKPOINTS = [
    ("mnist", "evaluate --checkpoint {random}", "{random} is not a valid tracegrad file"),
    ("mnist", "predict --checkpoint {truncated} {file}", "{truncated} is not a valid tracegrad file"),
    ("mnist", "evaluate --checkpoint {folder}", "{folder}"),
    ("mnist", "evaluate --checkpoint {other}", "Missing key(s) in state_dict"),
    ("names", "sample --checkpoint {random}", "{random} is not a valid tracegrad file"),
    ("names", "sample --checkpoint {folder}", "{folder}"),
    ("gpt", "sample --checkpoint {truncated}", "{truncated} is not a valid tracegrad file"),
    ("gpt", "sample --checkpoint {folder}", "{folder}"),
    ("gpt", "train --resume {random}", "{random} is not a valid tracegrad file"),
    ("gpt", "train --init-from {truncated} --steps 1 --data {corpus} --out {folder}",
     "{truncated} is not a valid tracegrad file"),
    ("chat", "--checkpoint {random} --ask hello", "{random} is not a valid tracegrad file"),
    ("chat", "--checkpoint {folder} --ask hello", "{folder}"),
    ("chat", "train --base {truncated} --steps 1 --out {folder}", "{truncated} is not a valid tracegrad file"),
]

OUTPUTS = [
    ("mnist", "train --steps 1 --out {file}", "argument --out: {file} is a file; expected a folder"),
    ("names", "train --steps 1 --out {file}", "argument --out: {file} is a file; expected a folder"),
    ("names", "train --steps 1 --out {file}/run", "cannot make the folder {file}/run: {file} is a file"),
    ("gpt", "train --steps 1 --out {file}", "argument --out: {file} is a file; expected a folder"),
    ("chat", "train --steps 1 --out {file}", "argument --out: {file} is a file; expected a folder"),
    ("chat.dataset", "--out {file}", "argument --out: {file} is a file; expected a folder"),
    ("tokenizer", "train {corpus} --out {file}", "argument --out: {file} is a file; expected a folder"),
    ("tokens", "prepare {corpus} {folder} --char", "argument out: {folder} is a folder; expected a file name"),
]


# a corpus that is not UTF-8 is named, with the first bad byte (data.read_text)
CORPORA = [
    ("gpt", "train --steps 1 --data {latin1} --out {folder}",
     "{latin1}: not UTF-8 text (byte 0xe9 at offset 3); expected a token .bin or a UTF-8 text file"),
    ("tokenizer", "train {latin1} --out {folder}", "{latin1}: not UTF-8 text (byte 0xe9 at offset 3)"),
]

CASES = NUMBERS + CHECKPOINTS + OUTPUTS + CORPORA


@pytest.mark.parametrize("program, argv, expected", CASES, ids=[f"{p} {a}" for p, a, _ in CASES])
def test_a_bad_input_is_one_error_line_and_status_2(program, argv, expected, paths, capsys):
    assert_user_error(program, argv.format(**paths).split(), expected.format(**paths), capsys)


@pytest.fixture
def fake_gpu(monkeypatch):
    """Device "fake-gpu", registered as stage3 registers "cuda": a loader that raises
    because the device cannot run here, and the quick check that says why."""
    def loader():
        raise RuntimeError("device 'fake-gpu' cannot run here: no fake GPU in this machine")
    monkeypatch.setattr(backend, "_LOADERS", dict(backend._LOADERS))
    monkeypatch.setattr(backend, "_UNAVAILABLE", dict(backend._UNAVAILABLE))
    backend.register_loader("fake-gpu", loader, unavailable=lambda: "no fake GPU in this machine")


@pytest.mark.parametrize("program, argv", [("mnist", "train --steps 1"), ("names", "sample --checkpoint x"),
                                           ("gpt", "sample --checkpoint x"), ("chat", "--checkpoint x")])
def test_a_device_that_cannot_run_here_says_why(program, argv, fake_gpu, capsys):
    assert_user_error(program, argv.split() + ["--device", "fake-gpu"],
                      "argument --device: device 'fake-gpu' cannot run here: no fake GPU in this machine", capsys)


def test_an_unknown_device_lists_every_device_and_why_one_cannot_run(fake_gpu, capsys):
    listed = assert_user_error("mnist", ["train", "--steps", "1", "--device", "tpu"], "unknown device 'tpu'", capsys)
    for name in ("'python'", "'cpu'", "'cpu:lazy'", "'cuda-emu'",
                 "'fake-gpu' (cannot run here: no fake GPU in this machine)"):
        assert name in listed


@pytest.mark.skipif(cuda_backend.quick_reason("cuda") is None, reason="this machine may have a CUDA GPU")
def test_device_cuda_without_a_gpu_is_an_error_line(capsys):
    assert_user_error("mnist", ["train", "--steps", "1", "--device", "cuda"],
                      f"device 'cuda' cannot run here: {cuda_backend.quick_reason('cuda')}", capsys)


def test_from_a_shell_a_damaged_checkpoint_is_one_line_without_traceback(paths):
    """The whole program, as a reader runs it: nothing on stderr but the one line."""
    result = subprocess.run([sys.executable, "-m", "stage4_models.gpt", "sample", "--checkpoint", paths["random"]],
                            capture_output=True, text=True)
    assert result.returncode == 2
    line, = result.stderr.splitlines()
    assert line.startswith(f"error: load: {paths['random']} is not a valid tracegrad file: ")
