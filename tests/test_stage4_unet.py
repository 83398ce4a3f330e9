"""stage4_models/unet (chapter 13, "13_inference_compiler": the U-net trained here): the U-net
keeps any input size, trains a few steps, its checkpoint comes back bit for bit, its ONNX
export gives its outputs through InferenceSession and onnxruntime at sizes other than the
one traced, and its command line answers a bad input with one ``error:`` line.

Tolerances: the model and this engine run the same float32 kernels in the same order (equal
to a few eps); onnxruntime sums a convolution's K <= 432 products in another order: atol
1e-5 on outputs of order 1 leaves a margin of ~10x over sqrt(K) eps.
"""
import json
import os

import numpy as np
import pytest

import stage2_tensor as tg
from stage4_models.mnist.training import CHECKPOINT_KIND as MNIST_KIND
from stage4_models.unet import data
from stage4_models.unet.__main__ import main
from stage4_models.unet.model import UNet
from stage4_models.unet.training import (UnetConfig, denoise, export_and_check, load_unet_checkpoint,
                                         save_unet_run, train_unet)

pytestmark = pytest.mark.stage4
ATOL = 1e-5


@pytest.fixture(scope="module")
def digits():
    """Stand-in digits (no MNIST needed): bright strokes on black, 28x28 uint8."""
    rng = np.random.default_rng(0)
    images = np.zeros((48, 28, 28), np.uint8)
    for img in images:
        r, c = rng.integers(4, 20, 2)
        img[r:r + 8, c:c + 3] = 255
        img[r:r + 3, c:c + 8] = 200
    return {"train": (images[:32], None), "test": (images[32:], None)}


@pytest.fixture(scope="module")
def trained(digits, tmp_path_factory):
    config = UnetConfig(steps=3, batch=4, channels=4, device="cpu", seed=5)
    result = train_unet(config, datasets=digits, progress=False, test_limit=16)
    out = tmp_path_factory.mktemp("unet")
    save_unet_run(result, config, out)
    return result, config, out


@pytest.mark.parametrize("hw", [(28, 28), (13, 7), (1, 1), (4, 9)])
def test_any_size_comes_out_the_size_it_went_in(hw):
    tg.seed(0)
    model = UNet(4, device="cpu")
    x = np.random.default_rng(1).random((2, 1, *hw), dtype=np.float32)
    assert denoise(model, x).shape == x.shape


def test_a_few_steps_and_the_run_files(trained):
    result, config, out = trained
    assert len(result.losses) == 3 and all(np.isfinite(result.losses))
    # the noisy digits' PSNR is the noise's: 10 log10(1 / sigma^2) = 7.96 dB for sigma 0.4
    # (12,544 noisy pixels: the sample variance within 2.5%, 0.1 dB)
    assert abs(result.psnr_noisy - 10 * np.log10(1 / config.sigma ** 2)) < 0.1
    assert np.isfinite(result.psnr_denoised)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 3 and summary["psnr_noisy_db"] == round(result.psnr_noisy, 3)
    assert (out / "loss.csv").read_text().splitlines()[0] == "step,loss"


def test_psnr():
    assert data.psnr(np.full(4, 0.5), np.zeros(4)) == pytest.approx(10 * np.log10(4))
    assert data.psnr(np.ones(3), np.ones(3)) == float("inf")


def test_the_checkpoint_round_trip_is_bit_exact(trained, digits):
    result, _, out = trained
    model, config = load_unet_checkpoint(out / "checkpoint.tg")
    assert config["channels"] == 4 and config["steps"] == 3
    for name, value in result.model.state_dict().items():
        assert np.array_equal(model.state_dict()[name].numpy(), value.numpy()), name
    noisy, _ = data.test_pairs(digits["test"][0])
    assert np.array_equal(denoise(model, noisy), denoise(result.model, noisy))


def test_the_export_round_trip_at_other_sizes(trained, digits, tmp_path):
    onnx = pytest.importorskip("onnx")
    model = trained[0].model
    noisy, _ = data.test_pairs(digits["test"][0][:4])
    path = str(tmp_path / "unet.onnx")
    for x in (noisy, np.ascontiguousarray(noisy[:2, :, :13, :7]), np.ascontiguousarray(noisy[:1, :, :1, :1])):
        errors = export_and_check(model, path, x)
        assert set(errors) >= {"tracegrad"} and max(errors.values()) < ATOL, errors
    proto = onnx.load(path)
    ops = [n.op_type for n in proto.graph.node]
    # the padding is shape arithmetic (Shape, Mod, Pad) and the crop a Slice to the input's size
    assert ops[:7] == ["Shape", "Slice", "Mod", "Sub", "Mod", "Concat", "Pad"] and "Slice" in ops[-3:]
    assert ops.count("Concat") == 3 and ops.count("Resize") == 2
    dims = [d.dim_param for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["N", "", "H", "W"]


def test_config_checks():
    with pytest.raises(ValueError, match="lr, sigma above 0"):
        UnetConfig(sigma=0.0)


# ---- the command line: one `error:` line, status 2 -------------------------------------------------
@pytest.fixture
def paths(tmp_path):
    (tmp_path / "random.tg").write_bytes(os.urandom(1000))
    tg.save({"kind": MNIST_KIND, "config": {}, "model": {}}, tmp_path / "mnist.tg")
    tg.save({"kind": "tracegrad-unet", "config": {"channels": 8}, "model": {"head.weight": tg.zeros(1, 4, 1, 1)}},
            tmp_path / "lying.tg")
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x\n")
    return {p.stem: str(p) for p in tmp_path.iterdir()}


@pytest.mark.parametrize("argv, expected", [
    ("train --steps 0", "argument --steps: expected an integer of at least 1, got '0'"),
    ("train --sigma -1", "argument --sigma"),
    ("train --out {file}", "argument --out: {file} is a file; expected a folder"),
    ("train --device tpu", "unknown device 'tpu'"),
    ("denoise --checkpoint {random}", "{random} is not a valid tracegrad file"),
    ("denoise --checkpoint {folder}", "{folder}"),
    ("denoise --checkpoint {mnist}", "{mnist} is not a denoising U-net checkpoint"),
    ("denoise --checkpoint {lying}", "its weights do not fit its config"),
    ("export --checkpoint {random} --out {folder}", "argument --out: {folder} is a folder; expected a file name"),
    ("export --checkpoint {file} --out {folder}/u.onnx", "{file} is not a valid tracegrad file"),
])
def test_a_bad_input_is_one_error_line(argv, expected, paths, capsys):
    try:
        status = main(argv.format(**paths).split())
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert expected.format(**paths) in lines[0], err


def test_the_commands_on_mnist(tmp_path, capsys):
    from stage4_models.mnist import data as mnist
    try:
        mnist.load("test", download=False)
    except (FileNotFoundError, ValueError, OSError) as e:
        pytest.skip(f"MNIST is not in $TRACEGRAD_DATA or ~/.cache/tracegrad (tests never download): {e}")
    out = tmp_path / "run"
    assert main(["train", "--steps", "2", "--batch", "4", "--channels", "4", "--subset", "16",
                 "--test-limit", "16", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "test PSNR noisy" in printed and "tracegrad within" in printed
    assert {p.name for p in out.iterdir()} == {"loss.csv", "checkpoint.tg", "summary.json", "unet.onnx"}
    assert main(["denoise", "--checkpoint", str(out / "checkpoint.tg"), "--test-limit", "8",
                 "--png", str(tmp_path / "d.png")]) == 0
    assert "PSNR noisy" in capsys.readouterr().out and (tmp_path / "d.png").stat().st_size > 0
    assert main(["export", "--checkpoint", str(out / "checkpoint.tg"), "--out", str(tmp_path / "u.onnx")]) == 0
    assert "cropped to 27x25" in capsys.readouterr().out


def test_from_a_shell_a_damaged_checkpoint_is_one_line_without_traceback(paths):
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "stage4_models.unet", "denoise", "--checkpoint", paths["random"]],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()] and result.stderr.startswith("error: ")
